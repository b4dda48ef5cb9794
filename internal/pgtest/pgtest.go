// Package pgtest gives each test a PostgreSQL schema of its own on the
// server named by SSOBRIDGE_TEST_POSTGRES_DSN, and removes it after the
// test. Without the variable the test skips and says which variable to set.
package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/internal/pgschema"
	"github.com/ssobridge/ssobridge/internal/skipnote"
)

// EnvDSN names the variable that switches the PostgreSQL tests on.
const EnvDSN = "SSOBRIDGE_TEST_POSTGRES_DSN"

// DSN returns a URL of the test server whose search_path is a new schema,
// dropped (with everything in it) when the test ends.
func DSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvDSN)
	if base == "" {
		skipnote.Skip(t, "PostgreSQL tests", "set "+EnvDSN+" (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable); .ci/run sets it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dsn, drop, err := pgschema.Create(ctx, base, "t_")
	if err != nil {
		t.Fatalf("%s: %v", EnvDSN, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := drop(ctx); err != nil {
			t.Errorf("drop the test's schema: %v", err)
		}
	})
	return dsn
}
