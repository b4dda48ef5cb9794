package accounts

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/store"
)

// The account rules that every way in shares: an account made for a user
// who arrives from the partner's portal or identity provider, and a new
// password with what follows from it. The handlers, the CLI and the
// console call these rather than writing them again.

// Names are what a portal token or an identity provider says of a user's
// names; any may be empty.
type Names struct {
	Given, Family, Full string
}

// NamesFor are the names of an account made for email: given and family
// names, else a full name split at its last space (one word: a given
// name); what is missing comes from the address, so that it reads as a
// name: ada.lovelace@… gives Ada and Lovelace; a local part of one word
// gives that word and the domain in brackets (ada@example.com: Ada and
// (example.com)), never the same word twice. A "+tag" is dropped.
func NamesFor(email string, n Names) (first, last string) {
	given, family, full := strings.TrimSpace(n.Given), strings.TrimSpace(n.Family), strings.TrimSpace(n.Full)
	if i := strings.LastIndexByte(full, ' '); i > 0 && (given == "" || family == "") {
		given, family = strings.TrimSpace(full[:i]), strings.TrimSpace(full[i+1:])
	} else if given == "" && family == "" {
		given = full
	}
	first, last = emailNames(email)
	return cmp.Or(given, first), cmp.Or(family, last)
}

func emailNames(email string) (first, last string) {
	local, domain, _ := strings.Cut(email, "@")
	local, _, _ = strings.Cut(local, "+")
	words := strings.FieldsFunc(local, func(r rune) bool { return r == '.' || r == '_' || r == '-' })
	for i, w := range words {
		if w == strings.ToLower(w) {
			r, size := utf8.DecodeRuneInString(w)
			words[i] = string(unicode.ToUpper(r)) + w[size:]
		}
	}
	switch len(words) {
	case 0:
		return cmp.Or(local, "User"), "(" + domain + ")"
	case 1:
		return words[0], "(" + domain + ")"
	}
	return words[0], strings.Join(words[1:], " ")
}

// accountMaker is what FindOrCreate needs of a store.
type accountMaker interface {
	AccountByEmail(ctx context.Context, email string) (store.Account, error)
	CreateAccount(ctx context.Context, n store.NewAccount) (store.Account, error)
}

// FindOrCreate returns the account of email. Without one, it makes one
// without a password (the portal or the IdP is its way in), named by
// NamesFor, when create allows; otherwise ErrNotFound. Two first
// arrivals at once make one account: the second finds the first's.
func FindOrCreate(ctx context.Context, s accountMaker, email string, names Names, create bool) (store.Account, error) {
	acct, err := s.AccountByEmail(ctx, email)
	if !errors.Is(err, store.ErrNotFound) || !create {
		return acct, err
	}
	first, last := NamesFor(email, names)
	acct, err = s.CreateAccount(ctx, store.NewAccount{Email: email, FirstName: first, LastName: last, PasswordHash: passhash.NoPassword})
	if errors.Is(err, store.ErrEmailTaken) {
		return s.AccountByEmail(ctx, email)
	}
	return acct, err
}

// passwordSetter is what SetPassword needs of a store.
type passwordSetter interface {
	SetPasswordHash(ctx context.Context, id int64, hash string) error
	LiftBans(ctx context.Context, email, ip string) (int, error)
}

// SetPassword gives the account a new password hash, which ends its
// sessions, and lifts any sign-in ban on its email: the owner of the new
// password may sign in at once.
func SetPassword(ctx context.Context, s passwordSetter, a store.Account, hash string) error {
	if err := s.SetPasswordHash(ctx, a.ID, hash); err != nil {
		return err
	}
	_, err := s.LiftBans(ctx, a.Email, "")
	return err
}
