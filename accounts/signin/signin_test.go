package signin_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/accounts/regulation"
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/internal/fakeclock"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// fixture is the Service on a real SQLite store, a real (cheap) hasher and
// the real regulation, with one account "ada@example.com" whose password
// is "correct horse battery".
type fixture struct {
	svc    *signin.Service
	st     store.Store
	hasher *passhash.Hasher
	clock  *fakeclock.Clock
	ada    store.Account
}

const adaPassword = "correct horse battery"

func setup(t *testing.T) *fixture {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "db"), clock.Now)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	h, err := passhash.NewHasher(passhash.HashParams{MemoryKiB: 64, Iterations: 1, Parallelism: 1}, 2)
	require.NoError(t, err)
	hash, err := h.Hash(context.Background(), adaPassword)
	require.NoError(t, err)
	ada, err := st.CreateAccount(context.Background(), store.NewAccount{Email: "ada@example.com", FirstName: "Ada", LastName: "Lovelace", PasswordHash: hash})
	require.NoError(t, err)
	reg := regulation.New(st, store.RegulationConfig{MaxRetries: 3, MaxRetriesPerIP: 100, FindTime: 10 * time.Minute, BanTime: time.Hour}, clock.Now)
	svc := signin.New(signin.Config{Accounts: st, Sessions: st, Links: st, Passwords: h, Regulator: reg,
		MaxAge: 12 * time.Hour, IdleTimeout: time.Hour, Now: clock.Now})
	return &fixture{svc: svc, st: st, hasher: h, clock: clock, ada: ada}
}

func TestPassword(t *testing.T) {
	long := string(make([]byte, signin.MaxPassword+1))
	for _, tc := range []struct {
		name, email, password string
		disable               bool
		reason                string // "" when the sign-in succeeds
		known                 bool   // the failure names the account
	}{
		{"right password", "ada@example.com", adaPassword, false, "", true},
		{"any case of the address", "ADA@Example.com", adaPassword, false, "", true},
		{"wrong password", "ada@example.com", "wrong horse battery", false, "wrong password", true},
		{"unknown email", "nobody@example.com", adaPassword, false, "unknown email", false},
		{"disabled, even with the right password", "ada@example.com", adaPassword, true, "account disabled", true},
		{"a password too long", "ada@example.com", long, false, "input too long", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			ctx := context.Background()
			if tc.disable {
				require.NoError(t, f.st.SetDisabled(ctx, f.ada.ID, true))
			}
			before := f.hasher.Verifications()
			acct, err := f.svc.Password(ctx, tc.email, tc.password, "192.0.2.1")
			if tc.reason == "" {
				require.NoError(t, err)
				assert.Equal(t, f.ada.ID, acct.ID)
				return
			}
			var failed *signin.FailedError
			require.ErrorAs(t, err, &failed)
			assert.Equal(t, tc.reason, failed.Reason)
			assert.Zero(t, acct.ID, "no account on a failure")
			if tc.known {
				assert.Equal(t, f.ada.ID, failed.AccountID)
			} else {
				assert.Zero(t, failed.AccountID)
			}
			if tc.reason == "unknown email" {
				assert.Equal(t, before+1, f.hasher.Verifications(), "an unknown email costs one verification, as a wrong password does")
			}
		})
	}
}

// The third failure starts a ban; while it holds, even the right password is
// refused without being verified, and it says until when.
func TestPasswordBan(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	for i := range 3 {
		_, err := f.svc.Password(ctx, "ada@example.com", "wrong horse battery", "192.0.2.1")
		var failed *signin.FailedError
		require.ErrorAs(t, err, &failed)
		assert.Equal(t, i == 2, failed.BanStarted, "attempt %d", i+1)
	}
	verified := f.hasher.Verifications()
	_, err := f.svc.Password(ctx, "ada@example.com", adaPassword, "192.0.2.9")
	var banned *signin.BannedError
	require.ErrorAs(t, err, &banned)
	assert.Equal(t, f.clock.Now().Add(time.Hour), banned.Until)
	assert.Equal(t, verified, f.hasher.Verifications(), "a banned attempt is not verified")

	f.clock.Advance(time.Hour + time.Second)
	_, err = f.svc.Password(ctx, "ada@example.com", adaPassword, "192.0.2.9")
	require.NoError(t, err, "the ban is over")
}

// cookieOf is the cookie of a session started now.
func (f *fixture) start(t *testing.T) signin.Cookie {
	token, id, at, err := f.svc.Start(context.Background(), f.ada, "TestBrowser/1.0")
	require.NoError(t, err)
	assert.Equal(t, accounts.SessionID(token), id, "the record is named by the token's hash")
	return signin.Cookie{AccountID: f.ada.ID, Epoch: f.ada.SessionEpoch, Issued: at, LastSeen: at, Token: token}
}

func TestSession(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func(f *fixture, c *signin.Cookie)
		ended  bool
	}{
		{"fresh", func(*fixture, *signin.Cookie) {}, false},
		{"idle past the timeout", func(f *fixture, _ *signin.Cookie) { f.clock.Advance(time.Hour + time.Second) }, true},
		{"past the absolute age, however active", func(f *fixture, c *signin.Cookie) {
			f.clock.Advance(12*time.Hour + time.Second)
			c.LastSeen = f.clock.Now()
		}, true},
		{"account disabled", func(f *fixture, _ *signin.Cookie) { require.NoError(t, f.st.SetDisabled(ctx, f.ada.ID, true)) }, true},
		{"account deleted", func(f *fixture, _ *signin.Cookie) {
			_, err := f.st.CreateAccount(ctx, store.NewAccount{Email: "keeper@example.com", FirstName: "K", LastName: "K", PasswordHash: "h", Admin: true})
			require.NoError(t, err)
			require.NoError(t, f.st.DeleteAccount(ctx, f.ada.ID))
		}, true},
		{"signed out everywhere (the epoch rose)", func(f *fixture, _ *signin.Cookie) { require.NoError(t, f.st.EndSessions(ctx, f.ada.ID)) }, true},
		{"this device signed out", func(f *fixture, c *signin.Cookie) {
			require.NoError(t, f.st.EndSession(ctx, f.ada.ID, accounts.SessionID(c.Token)))
		}, true},
		{"a token that names no session", func(_ *fixture, c *signin.Cookie) { c.Token = "forged" }, true},
		{"another account's id on this session", func(f *fixture, c *signin.Cookie) {
			other, err := f.st.CreateAccount(ctx, store.NewAccount{Email: "eve@example.com", FirstName: "E", LastName: "V", PasswordHash: "h"})
			require.NoError(t, err)
			c.AccountID, c.Epoch = other.ID, other.SessionEpoch
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			c := f.start(t)
			tc.change(f, &c)
			v, err := f.svc.Session(ctx, c)
			if tc.ended {
				assert.ErrorIs(t, err, signin.ErrSessionEnded)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, f.ada.ID, v.Account.ID)
			assert.Equal(t, accounts.SessionID(c.Token), v.SessionID)
		})
	}
}

// The idle clock moves at most once a minute per session, decided by the
// stored record: a cookie sent back with its old last-seen time does not
// force a write.
func TestSessionTouchedOnceAMinute(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	c := f.start(t)
	stored := func() time.Time {
		s, err := f.st.SessionByID(ctx, accounts.SessionID(c.Token))
		require.NoError(t, err)
		return s.LastSeenAt
	}
	f.clock.Advance(59 * time.Second)
	v, err := f.svc.Session(ctx, c)
	require.NoError(t, err)
	assert.True(t, v.Touched.IsZero(), "within the minute: no write")

	f.clock.Advance(time.Second)
	v, err = f.svc.Session(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, f.clock.Now(), v.Touched, "a minute on: the idle clock moves")
	assert.Equal(t, f.clock.Now(), stored())

	f.clock.Advance(30 * time.Second)
	v, err = f.svc.Session(ctx, c) // the old cookie, replayed
	require.NoError(t, err)
	assert.True(t, v.Touched.IsZero(), "a replayed old cookie costs no write")
	assert.Equal(t, f.clock.Now().Add(-30*time.Second), stored())
}

// A cookie newer than the account as first read (another instance raised
// the epoch and signed in since) is checked against the account read past
// any cache.
func TestSessionNewerThanTheCachedAccount(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	require.NoError(t, f.st.EndSessions(ctx, f.ada.ID))
	ada, err := f.st.AccountByID(ctx, f.ada.ID)
	require.NoError(t, err)
	stale := staleAccounts{Store: f.st, stale: f.ada}
	svc := signin.New(signin.Config{Accounts: f.st, Sessions: stale, Links: f.st, MaxAge: time.Hour, Now: f.clock.Now})
	token, _, at, err := svc.Start(ctx, ada, "")
	require.NoError(t, err)
	v, err := svc.Session(ctx, signin.Cookie{AccountID: ada.ID, Epoch: ada.SessionEpoch, Issued: at, LastSeen: at, Token: token})
	require.NoError(t, err)
	assert.Equal(t, ada.SessionEpoch, v.Account.SessionEpoch)
}

// staleAccounts serves an old copy of the account, as a cache would.
type staleAccounts struct {
	store.Store
	stale store.Account
}

func (s staleAccounts) AccountByID(context.Context, int64) (store.Account, error) {
	return s.stale, nil
}

func TestSetPasswordByLink(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	token, err := accounts.IssuePasswordLink(ctx, f.st, f.ada.ID, f.clock.Now())
	require.NoError(t, err)
	reg := regulation.New(f.st, store.RegulationConfig{MaxRetries: 1, FindTime: time.Minute, BanTime: time.Hour}, f.clock.Now)
	att, _, err := reg.Admit(ctx, f.ada.Email, "192.0.2.1")
	require.NoError(t, err)
	_, err = reg.Fail(ctx, att)
	require.NoError(t, err)

	for _, tc := range []struct{ name, pw, confirm, reason string }{
		{"too short", "short", "short", "at least 8 characters"},
		{"a common one", "password", "password", "most common"},
		{"the two differ", "a fine new password", "a fine new passw0rd", "The two passwords differ."},
	} {
		_, err := f.svc.SetPasswordByLink(ctx, token, tc.pw, tc.confirm)
		var refused *signin.RefusedPasswordError
		require.ErrorAs(t, err, &refused, tc.name)
		assert.Contains(t, refused.Reason, tc.reason, tc.name)
		_, err = f.svc.LinkAccount(ctx, token)
		require.NoError(t, err, "%s: a refused password keeps the link", tc.name)
	}

	acct, err := f.svc.SetPasswordByLink(ctx, token, "a fine new password", "a fine new password")
	require.NoError(t, err)
	assert.Greater(t, acct.SessionEpoch, f.ada.SessionEpoch, "the new password ends the sessions; the account returned is as it is now")
	_, err = f.svc.Password(ctx, f.ada.Email, "a fine new password", "192.0.2.1")
	require.NoError(t, err, "the ban is lifted and the new password works")

	_, err = f.svc.SetPasswordByLink(ctx, token, "another new password", "another new password")
	assert.ErrorIs(t, err, signin.ErrLinkGone, "a link is used once")
	_, err = f.svc.LinkAccount(ctx, "")
	assert.ErrorIs(t, err, signin.ErrLinkGone)
}

// A set-password link is a grant: disabling the account, "sign out
// everywhere" and a new password end it, as they end sessions; enabling
// the account again does not bring it back (the admin issues a new one).
func TestSetPasswordLinksDieWithTheAccountsSessions(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(f *fixture) error
	}{
		{"disabled", func(f *fixture) error { return f.st.SetDisabled(context.Background(), f.ada.ID, true) }},
		{"signed out everywhere", func(f *fixture) error { return f.st.EndSessions(context.Background(), f.ada.ID) }},
		{"a new password", func(f *fixture) error { return f.svc.SetPassword(context.Background(), f.ada, "another fine password") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			ctx := context.Background()
			token, err := accounts.IssuePasswordLink(ctx, f.st, f.ada.ID, f.clock.Now())
			require.NoError(t, err)
			require.NoError(t, tc.end(f))
			require.NoError(t, f.st.SetDisabled(ctx, f.ada.ID, false))
			_, err = f.svc.SetPasswordByLink(ctx, token, "a fine new password", "a fine new password")
			assert.ErrorIs(t, err, signin.ErrLinkGone)
			_, err = f.svc.LinkAccount(ctx, token)
			assert.ErrorIs(t, err, signin.ErrLinkGone)
		})
	}
}

func TestSetPassword(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	var refused *signin.RefusedPasswordError
	require.ErrorAs(t, f.svc.SetPassword(ctx, f.ada, "short"), &refused)
	_, err := f.svc.Password(ctx, f.ada.Email, adaPassword, "192.0.2.1")
	require.NoError(t, err, "a refused password changes nothing")

	require.NoError(t, f.svc.SetPassword(ctx, f.ada, "a fine new password"))
	_, err = f.svc.Password(ctx, f.ada.Email, "a fine new password", "192.0.2.1")
	require.NoError(t, err)
	got, err := f.st.AccountByID(ctx, f.ada.ID)
	require.NoError(t, err)
	assert.Greater(t, got.SessionEpoch, f.ada.SessionEpoch, "sessions end")
}

// staleSessions serves a session as it was first read, as requests that
// read it together (or an instance's cache) see it.
type staleSessions struct {
	store.Store
	sess store.Session
}

func (s staleSessions) SessionByID(context.Context, string) (store.Session, error) {
	return s.sess, nil
}

// Requests that find a session due at once write it once: the rest see
// their touch refused by the stored time, and carry on without a write or
// a renewed cookie.
func TestSessionDueForManyRequestsIsWrittenOnce(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	c := f.start(t)
	first, err := f.st.SessionByID(ctx, accounts.SessionID(c.Token))
	require.NoError(t, err)
	svc := signin.New(signin.Config{Accounts: f.st, Sessions: staleSessions{Store: f.st, sess: first}, Links: f.st,
		MaxAge: 12 * time.Hour, IdleTimeout: time.Hour, Now: f.clock.Now})
	f.clock.Advance(61 * time.Second)
	var touched int
	for range 5 {
		v, err := svc.Session(ctx, c)
		require.NoError(t, err)
		if !v.Touched.IsZero() {
			touched++
		}
	}
	assert.Equal(t, 1, touched, "one write for five requests that found it due")
	got, err := f.st.SessionByID(ctx, accounts.SessionID(c.Token))
	require.NoError(t, err)
	assert.Equal(t, f.clock.Now(), got.LastSeenAt)
}
