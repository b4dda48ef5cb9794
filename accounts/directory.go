package accounts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/internal/groupname"
	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/store"
)

// DirectoryStore is what the Directory keeps: accounts, groups and the
// audit of its changes.
type DirectoryStore interface {
	store.Accounts
	store.Groups
	store.AuditLog
}

// Directory applies what the partner's identity provider says of its
// people (SCIM) to the accounts, by the rules every way in shares: one
// address, one account; an account made for a user has no password (the
// IdP's sign-in, the portal or a set-password link is the way in); a
// disabled account's sessions end at once; the last admin stays admin.
// Members of the group named AdminGroup are partner admins.
type Directory struct {
	Store DirectoryStore
	// AdminGroup is the display name of the group whose members are
	// partner admins ("" for none), matched case-insensitively.
	AdminGroup string
	// Created is told of each account the IdP made (e.g. to create its
	// platform user ahead of the first click); nil for nothing.
	Created func(store.Account)
	// Ended is told of each account whose sessions ended (disabled or
	// removed), to stop its launches in flight here; nil for nothing.
	Ended func(accountID int64)
	// MayAdopt decides whether the IdP may take over an account it does
	// not manage yet (the admission's rule for its source, with
	// scim.email_domains); nil: it may take none.
	MayAdopt func(ctx context.Context, a store.Account) error
	Logger   *slog.Logger
}

// ErrNotTheIdPs: the IdP asked to change or remove an account it does not
// manage and may not take over (a local admin while scim.admin_group is
// empty, an account another way in linked, one outside
// scim.email_domains).
var ErrNotTheIdPs = errors.New("accounts: the account is not the identity provider's to change")

// takeOver checks that the IdP may change cur: an account it manages, or
// one it may adopt. It reports whether cur is adopted now.
func (d *Directory) takeOver(ctx context.Context, cur store.Account) (bool, error) {
	if cur.ManagedBy == store.ManagedBySCIM {
		return false, nil
	}
	if cur.Admin && d.AdminGroup == "" {
		return false, fmt.Errorf("%w: a partner admin, and scim.admin_group is empty (the IdP grants no admin)", ErrNotTheIdPs)
	}
	if d.MayAdopt == nil {
		return false, fmt.Errorf("%w: it is not managed by the IdP", ErrNotTheIdPs)
	}
	if err := d.MayAdopt(ctx, cur); err != nil {
		return false, fmt.Errorf("%w: %w", ErrNotTheIdPs, err)
	}
	return true, nil
}

// DirectoryUser is a user as the identity provider describes it.
type DirectoryUser struct {
	Email      string
	Names      Names
	ExternalID string
	Active     bool
}

// ErrNotAnAddress: a user's userName and emails hold no email address.
var ErrNotAnAddress = errors.New("accounts: the user has no email address (userName or a work email)")

// ErrUnknownMember: a group's member is no account.
var ErrUnknownMember = errors.New("accounts: a member is not a user of this bridge")

// memberErr names an unknown member for what it is (the group exists).
func memberErr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w (%v)", ErrUnknownMember, err)
	}
	return err
}

// CreateUser makes the account of u, owned by the IdP: ErrEmailTaken if
// an account has its address (the IdP finds it by userName and takes it
// over with ReplaceUser or UpdateUser).
func (d *Directory) CreateUser(ctx context.Context, u DirectoryUser) (store.Account, error) {
	first, last := NamesFor(u.Email, u.Names)
	a, err := d.Store.CreateAccount(ctx, store.NewAccount{Email: u.Email, FirstName: first, LastName: last,
		PasswordHash: passhash.NoPassword, ExternalID: u.ExternalID, ManagedBy: store.ManagedBySCIM, Disabled: !u.Active})
	if err != nil {
		return store.Account{}, err
	}
	d.audit(ctx, a, "created by the identity provider")
	if d.Created != nil && !a.Disabled {
		d.Created(a)
	}
	return a, nil
}

// ReplaceUser sets every detail of the account cur to u (a SCIM PUT),
// and takes the account over for the IdP.
func (d *Directory) ReplaceUser(ctx context.Context, cur store.Account, u DirectoryUser) (store.Account, error) {
	first, last := NamesFor(u.Email, u.Names)
	return d.UpdateUser(ctx, cur, store.AccountUpdate{Email: &u.Email, FirstName: &first, LastName: &last, ExternalID: &u.ExternalID, Disabled: new(!u.Active)})
}

// UpdateUser applies up to the account cur and takes it over for the IdP;
// a user made inactive has their sessions ended on every instance.
func (d *Directory) UpdateUser(ctx context.Context, cur store.Account, up store.AccountUpdate) (store.Account, error) {
	adopted, err := d.takeOver(ctx, cur)
	if err != nil {
		return store.Account{}, err
	}
	up.ManagedBy = new(store.ManagedBySCIM)
	a, err := d.Store.UpdateAccount(ctx, cur.ID, up)
	if err != nil {
		return store.Account{}, err
	}
	if adopted {
		d.audit(ctx, a, "taken over by the identity provider")
		if d.AdminGroup != "" {
			// From now on its role is the admin group's alone.
			d.followAdmin(context.WithoutCancel(ctx), a.ID)
			if b, err := d.Store.AccountByID(ctx, a.ID); err == nil {
				a = b
			}
		}
	}
	switch {
	case a.Disabled && !cur.Disabled:
		d.ended(a.ID)
		d.audit(ctx, a, "deactivated by the identity provider: sessions ended")
	case !a.Disabled && cur.Disabled:
		d.audit(ctx, a, "reactivated by the identity provider")
	default:
		d.audit(ctx, a, "changed by the identity provider")
	}
	return a, nil
}

// DeleteUser removes the account a with its sessions (its platform user
// stays: the platform has no delete).
func (d *Directory) DeleteUser(ctx context.Context, a store.Account) error {
	if _, err := d.takeOver(ctx, a); err != nil {
		return err
	}
	if err := d.Store.DeleteAccount(ctx, a.ID); err != nil {
		return err
	}
	d.ended(a.ID)
	d.audit(ctx, a, "removed by the identity provider")
	return nil
}

func (d *Directory) ended(id int64) {
	if d.Ended != nil {
		d.Ended(id)
	}
}

// CreateGroup makes a group under a fresh id; the admin group's members
// become partner admins.
func (d *Directory) CreateGroup(ctx context.Context, g store.Group) (store.Group, error) {
	g.ID = randid.Hex(16)
	out, err := d.Store.CreateGroup(ctx, g)
	if err != nil {
		return store.Group{}, memberErr(err)
	}
	d.adminsFollow(ctx, store.Group{}, out)
	return out, nil
}

// UpdateGroup changes a group; admin roles follow the admin group's
// membership (and a rename to or from its name).
func (d *Directory) UpdateGroup(ctx context.Context, id string, u store.GroupUpdate) (store.Group, error) {
	ch, err := d.Store.UpdateGroup(ctx, id, u)
	if err != nil {
		return store.Group{}, memberErr(err)
	}
	d.adminsFollow(ctx, ch.Before, ch.After)
	return ch.After, nil
}

// DeleteGroup removes a group; the admin group's members lose the role.
func (d *Directory) DeleteGroup(ctx context.Context, id string) error {
	before, err := d.Store.DeleteGroup(ctx, id)
	if err != nil {
		return err
	}
	d.adminsFollow(ctx, before, store.Group{})
	return nil
}

// isAdminGroup reports whether g is the admin group.
func (d *Directory) isAdminGroup(g store.Group) bool {
	return g.ID != "" && groupname.In([]string{g.DisplayName}, d.AdminGroup)
}

// adminsFollow brings the admin role of whoever joined or left the admin
// group between before and after (both read in the change's transaction)
// in line with the group as it stands when each is followed, not as this
// change left it: of two changes that race, the later one's membership
// stands. The group's change stands either way; an admin role that cannot
// go (the last admin) stays, and says so in the log and the audit.
func (d *Directory) adminsFollow(ctx context.Context, before, after store.Group) {
	// The group's change has committed: its roles follow even when the
	// IdP's request is cut off (a timeout, a reset), or a removed member
	// would stay an admin.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), followTimeout)
	defer cancel()
	var was, is []int64
	if d.isAdminGroup(before) {
		was = before.Members
	}
	if d.isAdminGroup(after) {
		is = after.Members
	}
	for _, id := range is {
		if !slices.Contains(was, id) {
			d.followAdmin(ctx, id)
		}
	}
	for _, id := range was {
		if !slices.Contains(is, id) {
			d.followAdmin(ctx, id)
		}
	}
}

// followTimeout bounds the roles' follow-up of one group change.
const followTimeout = 30 * time.Second

// Reconcile brings every admin role SCIM decides in line with the admin
// group as stored: the group's members and the admins among the accounts
// it manages. Run at start, it repairs what a crash between a group's
// change and its follow-up left.
func (d *Directory) Reconcile(ctx context.Context) error {
	if d.AdminGroup == "" {
		return nil
	}
	ids := map[int64]bool{}
	groups, _, err := d.Store.ListGroups(ctx, store.GroupFilter{DisplayName: d.AdminGroup, Limit: 10})
	if err != nil {
		return err
	}
	for _, g := range groups {
		for _, m := range g.Members {
			ids[m] = true
		}
	}
	for off := 0; ; off += 500 {
		list, _, err := d.Store.ListAccounts(ctx, store.AccountFilter{ManagedBy: store.ManagedBySCIM, Offset: off, Limit: 500})
		if err != nil {
			return err
		}
		for _, a := range list {
			if a.Admin {
				ids[a.ID] = true
			}
		}
		if len(list) < 500 {
			break
		}
	}
	for id := range ids {
		d.followAdmin(ctx, id)
	}
	return nil
}

func (d *Directory) followAdmin(ctx context.Context, id int64) {
	changed, err := d.Store.FollowAdminGroup(ctx, id, d.AdminGroup)
	a, aerr := d.Store.AccountByID(ctx, id)
	if err != nil {
		d.logger().Warn("scim: admin role not changed", "account_id", id, "err", err)
		if errors.Is(err, store.ErrLastAdmin) && aerr == nil {
			d.audit(ctx, a, "left the admin group but stays admin: the last admin")
		}
		return
	}
	if !changed || aerr != nil {
		return
	}
	verb := map[bool]string{true: "granted", false: "revoked"}[a.Admin]
	d.audit(ctx, a, "admin role "+verb+" by the identity provider's admin group")
}

func (d *Directory) audit(ctx context.Context, a store.Account, what string) {
	err := d.Store.Record(ctx, store.Event{Kind: store.KindAdmin, AccountID: a.ID, Email: a.Email, Outcome: "ok",
		Detail: fmt.Sprintf("scim: %s %s", a.Email, what)})
	if err != nil {
		d.logger().Warn("scim: audit write failed", "account_id", a.ID, "err", err)
	}
}

func (d *Directory) logger() *slog.Logger {
	if d.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Logger
}
