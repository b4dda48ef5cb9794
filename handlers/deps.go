package handlers

import (
	"context"
	"time"

	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/launch/waitline"
	"github.com/ssobridge/ssobridge/store"
)

// Store is the store as the handlers use it: one narrow part for each job.
// A store.Store fills every part (StoreOf); tests may fill them with
// fakes.
type Store struct {
	Accounts Accounts
	Sessions SessionRecords
	Links    Links
	Audit    AuditLog
	OneTime  OneTime
	Health   Health
	// Identities link the ways in's users to accounts.
	Identities Identities
}

// StoreOf is a Store whose every part is s.
func StoreOf(s store.Store) Store {
	return Store{Accounts: s, Sessions: s, Links: s, Audit: s, OneTime: s, Health: s, Identities: s}
}

// Identities link an outside identity (a way in's source and the user's
// subject there) to an account.
type Identities interface {
	AccountOfIdentity(ctx context.Context, source, subject string) (int64, error)
	LinkIdentity(ctx context.Context, source, subject string, accountID int64) error
	IdentitiesOf(ctx context.Context, accountID int64) ([]store.Identity, error)
}

// admissionStore is the admission's store: the accounts and the
// identities.
type admissionStore struct {
	Accounts
	Identities
}

// Accounts are the accounts as the console and the ways in see them.
type Accounts interface {
	CreateAccount(ctx context.Context, n store.NewAccount) (store.Account, error)
	CreateAccounts(ctx context.Context, ns []store.NewAccount) error
	AccountByEmail(ctx context.Context, email string) (store.Account, error)
	AccountByID(ctx context.Context, id int64) (store.Account, error)
	ListAccounts(ctx context.Context, f store.AccountFilter) ([]store.Account, int, error)
	SetDisabled(ctx context.Context, id int64, disabled bool) error
	SetAdmin(ctx context.Context, id int64, admin bool) error
	SetPasswordHash(ctx context.Context, id int64, hash string) error
	ListBans(ctx context.Context, now time.Time) ([]store.Ban, error)
	LiftBans(ctx context.Context, email, ip string) (int, error)
}

// SessionRecords are the signed-in devices: what a session cookie names.
type SessionRecords interface {
	AccountByID(ctx context.Context, id int64) (store.Account, error)
	// FreshAccountByID reads past any cache (see sessionManager.current).
	FreshAccountByID(ctx context.Context, id int64) (store.Account, error)
	CreateSession(ctx context.Context, s store.Session) error
	SessionByID(ctx context.Context, id string) (store.Session, error)
	TouchSession(ctx context.Context, id string, at, seenBefore time.Time) (bool, error)
	EndSession(ctx context.Context, accountID int64, id string) error
	EndSessions(ctx context.Context, id int64) error
	ListSessions(ctx context.Context, accountID int64) ([]store.Session, error)
}

// Links are the accounts' links to platform users.
type Links interface {
	LinkFor(ctx context.Context, accountID int64) (store.Link, error)
	DeleteLink(ctx context.Context, accountID int64, platformUserID string) error
	ListLinks(ctx context.Context, platformUserIDs []string) (map[string]int64, error)
	// CountLinks counts the linked accounts and the enabled unlinked ones.
	CountLinks(ctx context.Context) (linked, unlinked int, err error)
}

// AuditLog records and lists what happened.
type AuditLog interface {
	Record(ctx context.Context, e store.Event) error
	ListEvents(ctx context.Context, f store.AuditFilter) ([]store.Event, int, error)
}

// OneTime are the single-use ids (an IdP sign-in's state) and the
// set-password links.
type OneTime interface {
	UseOnce(ctx context.Context, kind, id string, until time.Time) error
	CreatePasswordLink(ctx context.Context, accountID int64, id string, expires time.Time) error
	PasswordLink(ctx context.Context, id string, now time.Time) (int64, error)
	TakePasswordLink(ctx context.Context, id string, now time.Time) (int64, error)
}

// Health says whether the store answers (/readyz).
type Health interface {
	Ping(ctx context.Context) error
}

// Line keeps users in line for the platform's pace (waitline.Line).
type Line interface {
	// Join and Check: a launch of the account's session, and its waiting
	// page's refresh.
	Join(ctx context.Context, acct store.Account, session, returnTo, requestID string) (waitline.Answer, error)
	Check(ctx context.Context, ticket string, accountID int64, session string) (waitline.Answer, error)
	// Rejoin is Join at a place kept from a launch whose turn did not
	// come within the line's bound (waitline.TooBusyError.Since).
	Rejoin(ctx context.Context, acct store.Account, session, returnTo, requestID string, since time.Time) (waitline.Answer, error)
	// Peek is Check without using the ticket up (the waiting page's
	// script): a launch that has ended answers Ready.
	Peek(ctx context.Context, ticket string, accountID int64, session string) (waitline.Answer, error)
	// End stops the launches of the account's session ("": of every one)
	// when the session ends.
	End(accountID int64, session string)
}

// Launcher runs "Open video editor" (launch.Service). Its errors are
// described with launch.Explain.
type Launcher interface {
	Launch(ctx context.Context, acct store.Account, returnTo, requestID string) (launch.Result, error)
}
