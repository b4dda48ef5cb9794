package sqlstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/internal/pgtest"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/ssobridge/ssobridge/store/storecache"
	"github.com/ssobridge/ssobridge/store/storetest"
)

func openSQLite(t *testing.T, path string, now func() time.Time) *sqlstore.SQLite {
	s, err := sqlstore.OpenSQLite(context.Background(), path, now)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func openPostgres(t *testing.T, dsn string, now func() time.Time) *sqlstore.Postgres {
	s, err := sqlstore.OpenPostgres(context.Background(), dsn, now)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// guarded is a backend as production runs it: behind the Guard, whose
// deadline and outage detection every call goes through.
func guarded(t *testing.T, s store.Store, now func() time.Time) store.Store {
	g := sqlstore.NewGuard(s, 0, nil, now)
	t.Cleanup(func() { g.Close() })
	return g
}

// stacks are the stores production runs, each through the guard: SQLite
// and PostgreSQL, bare and with the cache in front (PostgreSQL's when
// SSOBRIDGE_TEST_POSTGRES_DSN is set; each sub-test on a schema of its own).
var stacks = []struct {
	name string
	open func(t *testing.T, now func() time.Time) store.Store
}{
	{"sqlite", func(t *testing.T, now func() time.Time) store.Store {
		return guarded(t, openSQLite(t, filepath.Join(t.TempDir(), "sub", "test.db"), now), now)
	}},
	{"sqlite+cache", func(t *testing.T, now func() time.Time) store.Store {
		return storecache.New(guarded(t, openSQLite(t, filepath.Join(t.TempDir(), "test.db"), now), now), time.Minute, now)
	}},
	{"postgres", func(t *testing.T, now func() time.Time) store.Store {
		return guarded(t, openPostgres(t, pgtest.DSN(t), now), now)
	}},
	{"postgres+cache", func(t *testing.T, now func() time.Time) store.Store {
		return storecache.New(guarded(t, openPostgres(t, pgtest.DSN(t), now), now), time.Second, now)
	}},
}

// TestStoreConformance runs the exported suite against every stack: the
// cache must keep every promise of the store it wraps, and the guard must
// pass every call and answer through.
func TestStoreConformance(t *testing.T) {
	for _, st := range stacks {
		t.Run(st.name, func(t *testing.T) { storetest.Run(t, st.open) })
	}
}

// TestSharedStoreConformance runs what instances on one database must agree
// on against two handles of each backend that several processes can share,
// each behind its guard. (Without a cache: what one writes the other must
// read at once, where a cache would serve its copy for up to its TTL; the
// PostgreSQL cache's change notices have a test of their own below.)
func TestSharedStoreConformance(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		storetest.RunShared(t, func(t *testing.T, now func() time.Time) (store.Store, store.Store) {
			path := filepath.Join(t.TempDir(), "shared.db")
			return guarded(t, openSQLite(t, path, now), now), guarded(t, openSQLite(t, path, now), now)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		storetest.RunShared(t, func(t *testing.T, now func() time.Time) (store.Store, store.Store) {
			dsn := pgtest.DSN(t)
			return guarded(t, openPostgres(t, dsn, now), now), guarded(t, openPostgres(t, dsn, now), now)
		})
	})
}

// On PostgreSQL a change committed through one handle reaches another
// handle's cache by LISTEN/NOTIFY: with a TTL of a minute, only the notice
// can make the second instance see it within the second.
func TestPostgresCacheDropsWhatOtherInstancesChange(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a := openPostgres(t, dsn, nil)
	b := storecache.New(openPostgres(t, dsn, nil), time.Minute, nil)
	acct, err := a.CreateAccount(ctx, store.NewAccount{Email: "n@example.com", FirstName: "N", LastName: "O", PasswordHash: "h"})
	require.NoError(t, err)
	_, id := accounts.NewSessionToken()
	require.NoError(t, a.CreateSession(ctx, store.Session{ID: id, AccountID: acct.ID, CreatedAt: time.Now(), LastSeenAt: time.Now()}))
	require.NoError(t, a.SaveLink(ctx, acct.ID, "u1"))
	// Cached on b.
	_, err = b.AccountByID(ctx, acct.ID)
	require.NoError(t, err)
	_, err = b.SessionByID(ctx, id)
	require.NoError(t, err)
	_, err = b.LinkFor(ctx, acct.ID)
	require.NoError(t, err)

	for _, tc := range []struct {
		name   string
		change func() error
		seen   func() bool
	}{
		{"link", func() error { return a.SaveLink(ctx, acct.ID, "u2") }, func() bool { l, _ := b.LinkFor(ctx, acct.ID); return l.PlatformUserID == "u2" }},
		{"one session", func() error { return a.EndSession(ctx, acct.ID, id) }, func() bool { _, err := b.SessionByID(ctx, id); return err != nil }},
		{"account", func() error { return a.SetDisabled(ctx, acct.ID, true) }, func() bool { got, _ := b.AccountByID(ctx, acct.ID); return got.Disabled }},
	} {
		start := time.Now()
		require.NoError(t, tc.change(), tc.name)
		require.Eventually(t, tc.seen, time.Second, 2*time.Millisecond, "%s: the other instance's cache still serves the old value", tc.name)
		t.Logf("%s: seen by the other instance's cache after %s", tc.name, time.Since(start).Round(100*time.Microsecond))
	}
}
