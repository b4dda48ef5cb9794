package signin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/store"
)

// The one admission of every way in but the password: the portal's
// handoff, OIDC, SAML, an LMS (LTI) and the IdP's directory (SCIM) each
// turn what they verified into an Arrival, and Admit decides which account
// it is, or refuses it with one of the errors below. The rules are the
// same for every source:
//
//  1. A linked identity wins: (source, subject) names the account it was
//     linked to at its first admission, whatever the address says now.
//  2. An address reaches an existing account only where the source is
//     trusted for it: a source with email_domains is refused outside
//     them (nothing made, nothing matched); a source without them creates
//     accounts and finds those it linked, but never adopts an account that
//     holds a password, is a partner admin, or belongs to another source
//     (linked to it, or managed by SCIM).
//  3. The admin role belongs to one place: only a source with an admin
//     rule configured grants or removes it, never on an account SCIM
//     manages (SCIM's group alone decides there).
//
// A disabled account is refused whoever vouches for it.

// Errors of the admission. Each wraps the detail the log needs; pages
// tell them apart with errors.Is.
var (
	// ErrBadAddress: the source's address is no email address.
	ErrBadAddress = errors.New("signin: the address is refused")
	// ErrNotTrusted: the address is outside the source's email_domains.
	ErrNotTrusted = errors.New("signin: the address is not of a domain this way in is trusted for")
	// ErrNotAdoptable: an account has the address, and this source may
	// not take it (a password, a partner admin, another source's).
	ErrNotAdoptable = errors.New("signin: the account of this address belongs to another way in")
	// ErrNoAccount: no account has the address, and the source may not
	// create one.
	ErrNoAccount = errors.New("signin: no account for this address, and this way in creates none")
)

// Source is a way in as the admission sees it: who vouches for an
// arrival, and what it is trusted for.
type Source struct {
	// ID names the source in the identities it links: "oidc:<issuer>",
	// "saml:<entity id>", "portal:<issuer>", "lti:<issuer>|<client id>",
	// "scim".
	ID string
	// Name is what logs and the audit call it ("LTI: Canvas").
	Name string
	// Title is its name as a person knows it, shown on pages as it is
	// ("Springfield Canvas"); "" when it has none, and pages call it Noun
	// ("your portal", a message of the catalogs).
	Title string
	Noun  locale.ID
	// Key is the configuration section that sets its rules ("oidc",
	// "lti.platforms[0]"): refusals name the key to change.
	Key string
	// EmailDomains are the domains the source is trusted for; empty: it
	// adopts no account it did not link.
	EmailDomains []string
	// CreateAccounts makes an account for a first arrival.
	CreateAccounts bool
	// AdminAuthority: an admin rule is configured (an admin group, an
	// LMS's admin_roles), so an arrival's Admin grants and removes the
	// role.
	AdminAuthority bool
	// Directory: the source is the partner's identity provider, whose
	// directory (SCIM) keeps the accounts; an account the directory made
	// an admin opens the console when this source signs it in.
	Directory bool
}

// Trusts reports whether the source is trusted for the address: it lists
// the address's domain (ASCII case folding) in EmailDomains.
func (s Source) Trusts(email string) bool {
	domain := mailaddr.Domain(email)
	return domain != "" && slices.ContainsFunc(s.EmailDomains, func(d string) bool { return mailaddr.Key(strings.TrimSpace(d)) == domain })
}

// Open reports whether the source has no email_domains: it reaches only
// the accounts it linked (check reports such sources).
func (s Source) Open() bool { return len(s.EmailDomains) == 0 }

// Arrival is who a source says arrives.
type Arrival struct {
	Source Source
	// Subject is the person's stable id at the source (OIDC's and LTI's
	// sub, SAML's persistent NameID, the portal's sub or address); ""
	// links nothing.
	Subject string
	Email   string
	Names   accounts.Names
	// Admin is what the source's admin rule says (a member of the admin
	// group, a holder of an admin role); read only with AdminAuthority.
	Admin bool
}

// AdmissionStore is what the admission reads and changes.
type AdmissionStore interface {
	AccountByEmail(ctx context.Context, email string) (store.Account, error)
	AccountByID(ctx context.Context, id int64) (store.Account, error)
	CreateAccount(ctx context.Context, n store.NewAccount) (store.Account, error)
	SetAdmin(ctx context.Context, id int64, admin bool) error
	AccountOfIdentity(ctx context.Context, source, subject string) (int64, error)
	LinkIdentity(ctx context.Context, source, subject string, accountID int64) error
	IdentitiesOf(ctx context.Context, accountID int64) ([]store.Identity, error)
}

// Admission applies the rules above; safe for concurrent use.
type Admission struct {
	store  AdmissionStore
	logger *slog.Logger
}

// NewAdmission returns the admission over st; logger may be nil.
func NewAdmission(st AdmissionStore, logger *slog.Logger) *Admission {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Admission{store: st, logger: logger}
}

// Admit decides which account a arrives as: the account its identity is
// linked to, else the account of its address where the source may reach
// it, else a new one where the source may create it; then the identity is
// linked, a disabled account refused (ErrDisabled), and the admin role set
// where the source holds it. Errors: ErrBadAddress, ErrNotTrusted,
// ErrNotAdoptable, ErrNoAccount, ErrDisabled, or the store's.
func (s *Admission) Admit(ctx context.Context, a Arrival) (store.Account, error) {
	acct, err := s.account(ctx, a)
	if err != nil {
		return store.Account{}, err
	}
	if acct.Disabled {
		if by := acct.DisabledBy(); by != nil {
			return store.Account{}, fmt.Errorf("%w (%s): %w", ErrDisabled, a.Source.Name, by)
		}
		return store.Account{}, fmt.Errorf("%w (%s)", ErrDisabled, a.Source.Name)
	}
	return s.followAdmin(ctx, acct, a)
}

// Check tells, changing nothing, whether Admit would refuse a: a way in
// asks it before it asks anything of the person (switch accounts?), so a
// refusal is said before a question it would make pointless. nil means
// Admit would admit a, as things stand now.
func (s *Admission) Check(ctx context.Context, a Arrival) error {
	src := a.Source
	var acct store.Account
	linked := false
	if a.Subject != "" {
		switch id, err := s.store.AccountOfIdentity(ctx, src.ID, a.Subject); {
		case err == nil:
			acct, err = s.store.AccountByID(ctx, id)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			linked = err == nil
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
	}
	if !linked {
		if p := mailaddr.Problem(a.Email); p != "" {
			return fmt.Errorf("%w: %s", ErrBadAddress, p)
		}
		if !src.Open() && !src.Trusts(a.Email) {
			return fmt.Errorf("%w: %s is not of a domain in %s.email_domains", ErrNotTrusted, mailaddr.Domain(a.Email), src.Key)
		}
		var err error
		acct, err = s.store.AccountByEmail(ctx, a.Email)
		switch {
		case errors.Is(err, store.ErrNotFound):
			if !src.CreateAccounts {
				return fmt.Errorf("%w (%s.create_accounts is off)", ErrNoAccount, src.Key)
			}
			return nil
		case err != nil:
			return err
		}
		if err := s.MayAdopt(ctx, acct, a); err != nil {
			return err
		}
	}
	if acct.Disabled {
		if by := acct.DisabledBy(); by != nil {
			return fmt.Errorf("%w (%s): %w", ErrDisabled, a.Source.Name, by)
		}
		return fmt.Errorf("%w (%s)", ErrDisabled, a.Source.Name)
	}
	return nil
}

// account finds or makes the account of a, linking its identity.
func (s *Admission) account(ctx context.Context, a Arrival) (store.Account, error) {
	src := a.Source
	if a.Subject != "" {
		switch id, err := s.store.AccountOfIdentity(ctx, src.ID, a.Subject); {
		case err == nil:
			acct, err := s.store.AccountByID(ctx, id)
			if !errors.Is(err, store.ErrNotFound) {
				return acct, err // a linked identity wins
			}
			// Removed meanwhile (its identities go with it): a first arrival.
		case !errors.Is(err, store.ErrNotFound):
			return store.Account{}, err
		}
	}
	if p := mailaddr.Problem(a.Email); p != "" {
		return store.Account{}, fmt.Errorf("%w: %s", ErrBadAddress, p)
	}
	if !src.Open() && !src.Trusts(a.Email) {
		return store.Account{}, fmt.Errorf("%w: %s is not of a domain in %s.email_domains", ErrNotTrusted, mailaddr.Domain(a.Email), src.Key)
	}
	acct, err := s.store.AccountByEmail(ctx, a.Email)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if !src.CreateAccounts {
			return store.Account{}, fmt.Errorf("%w (%s.create_accounts is off)", ErrNoAccount, src.Key)
		}
		first, last := accounts.NamesFor(a.Email, a.Names)
		acct, err = s.store.CreateAccount(ctx, store.NewAccount{Email: a.Email, FirstName: first, LastName: last, PasswordHash: passhash.NoPassword})
		if errors.Is(err, store.ErrEmailTaken) {
			// Made meanwhile by another arrival: adopted by the rules below.
			return s.account(ctx, a)
		}
		if err != nil {
			return store.Account{}, err
		}
	case err != nil:
		return store.Account{}, err
	default:
		if err := s.MayAdopt(ctx, acct, a); err != nil {
			return store.Account{}, err
		}
	}
	if a.Subject != "" {
		if err := s.store.LinkIdentity(ctx, src.ID, a.Subject, acct.ID); err != nil {
			return store.Account{}, err
		}
	}
	return acct, nil
}

// MayAdopt applies rule 2 to an existing account that a's identity is not
// linked to: a source trusted for its address takes it; an open one only
// an account with no password, no admin role and no other source's
// identity. Errors: ErrNotTrusted, ErrNotAdoptable, or the store's.
func (s *Admission) MayAdopt(ctx context.Context, acct store.Account, a Arrival) error {
	src := a.Source
	if !src.Open() {
		if !src.Trusts(acct.Email) {
			return fmt.Errorf("%w: %s is not of a domain in %s.email_domains", ErrNotTrusted, mailaddr.Domain(acct.Email), src.Key)
		}
		return nil
	}
	var why string
	switch {
	case acct.PasswordHash != passhash.NoPassword:
		why = "it has a password"
	case acct.Admin:
		why = "it is a partner admin"
	case acct.ManagedBy == store.ManagedBySCIM && src.ID != SCIMSource:
		why = "the identity provider's directory (SCIM) manages it"
	}
	if why == "" {
		ids, err := s.store.IdentitiesOf(ctx, acct.ID)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if id.Source != src.ID || id.Subject != a.Subject {
				why = "it is linked to another identity (" + strings.SplitN(id.Source, ":", 2)[0] + ")"
				break
			}
		}
	}
	if why == "" {
		return nil
	}
	s.logger.Warn("an open way in may not take an existing account: list the domains it is trusted for to let it",
		"source", src.Name, "key", src.Key+".email_domains", "account_id", acct.ID, "why", why)
	return fmt.Errorf("%w: %s, and %s.email_domains is empty", ErrNotAdoptable, why, src.Key)
}

// followAdmin sets the admin role from a where its source holds it and
// the account is not SCIM's; the last admin keeps the role (logged).
func (s *Admission) followAdmin(ctx context.Context, acct store.Account, a Arrival) (store.Account, error) {
	src := a.Source
	if !src.AdminAuthority || acct.Admin == a.Admin || (acct.ManagedBy == store.ManagedBySCIM && src.ID != SCIMSource) {
		return acct, nil
	}
	switch err := s.store.SetAdmin(ctx, acct.ID, a.Admin); {
	case errors.Is(err, store.ErrLastAdmin):
		s.logger.Warn("the last admin is not an admin by "+src.Key+"'s rule; kept as admin", "account_id", acct.ID)
		return acct, nil
	case err != nil:
		return store.Account{}, err
	}
	acct.Admin = a.Admin
	return acct, nil
}

// SCIMSource is the source ID of the identity provider's directory.
const SCIMSource = "scim"
