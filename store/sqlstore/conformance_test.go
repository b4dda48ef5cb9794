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

// TestStoreConformance runs the exported suite against every backend there
// is, cached and not; PostgreSQL's when SSOBRIDGE_TEST_POSTGRES_DSN is set
// (each sub-test on a schema of its own).
func TestStoreConformance(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
			return openSQLite(t, filepath.Join(t.TempDir(), "sub", "test.db"), now)
		})
	})
	// The cache must keep every promise of the store it wraps.
	t.Run("sqlite+cache", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
			return storecache.New(openSQLite(t, filepath.Join(t.TempDir(), "test.db"), now), time.Minute, now)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
			return openPostgres(t, pgtest.DSN(t), now)
		})
	})
	t.Run("postgres+cache", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
			return storecache.New(openPostgres(t, pgtest.DSN(t), now), time.Second, now)
		})
	})
}

// TestSharedStoreConformance runs what instances on one database must agree
// on against two handles of each backend that several processes can share.
func TestSharedStoreConformance(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		storetest.RunShared(t, func(t *testing.T, now func() time.Time) (store.Store, store.Store) {
			path := filepath.Join(t.TempDir(), "shared.db")
			return openSQLite(t, path, now), openSQLite(t, path, now)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		storetest.RunShared(t, func(t *testing.T, now func() time.Time) (store.Store, store.Store) {
			dsn := pgtest.DSN(t)
			return openPostgres(t, dsn, now), openPostgres(t, dsn, now)
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
