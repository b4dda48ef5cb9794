package accounts_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/storetest"
	"github.com/ssobridge/ssobridge/internal/pgtest"
)

func openSQLite(t *testing.T, path string, now func() time.Time) *accounts.SQLite {
	s, err := accounts.OpenSQLite(context.Background(), path, now)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func openPostgres(t *testing.T, dsn string, now func() time.Time) *accounts.Postgres {
	s, err := accounts.OpenPostgres(context.Background(), dsn, now)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// TestStoreConformance runs the exported suite against every backend there
// is, cached and not; PostgreSQL's when SSOBRIDGE_TEST_POSTGRES_DSN is set
// (each sub-test on a schema of its own).
func TestStoreConformance(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) accounts.Store {
			return openSQLite(t, filepath.Join(t.TempDir(), "sub", "test.db"), now)
		})
	})
	// The cache must keep every promise of the store it wraps.
	t.Run("sqlite+cache", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) accounts.Store {
			return accounts.NewCache(openSQLite(t, filepath.Join(t.TempDir(), "test.db"), now), time.Minute, now)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) accounts.Store {
			return openPostgres(t, pgtest.DSN(t), now)
		})
	})
	t.Run("postgres+cache", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) accounts.Store {
			return accounts.NewCache(openPostgres(t, pgtest.DSN(t), now), time.Second, now)
		})
	})
}

// TestSharedStoreConformance runs what instances on one database must agree
// on against two handles of each backend that several processes can share.
func TestSharedStoreConformance(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		storetest.RunShared(t, func(t *testing.T, now func() time.Time) (accounts.Store, accounts.Store) {
			path := filepath.Join(t.TempDir(), "shared.db")
			return openSQLite(t, path, now), openSQLite(t, path, now)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		storetest.RunShared(t, func(t *testing.T, now func() time.Time) (accounts.Store, accounts.Store) {
			dsn := pgtest.DSN(t)
			return openPostgres(t, dsn, now), openPostgres(t, dsn, now)
		})
	})
}
