package accounts_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/storetest"
)

// TestStoreConformance runs the exported suite against every backend there
// is, cached and not.
func TestStoreConformance(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) accounts.Store {
			s, err := accounts.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "sub", "test.db"), now)
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
	// The cache must keep every promise of the store it wraps.
	t.Run("sqlite+cache", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) accounts.Store {
			s, err := accounts.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "test.db"), now)
			require.NoError(t, err)
			c := accounts.NewCache(s, time.Minute, now)
			t.Cleanup(func() { c.Close() })
			return c
		})
	})
}
