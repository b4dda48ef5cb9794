// Package pgtest gives each test a PostgreSQL schema of its own on the
// server named by SSOBRIDGE_TEST_POSTGRES_DSN, and removes it after the
// test. Without the variable the test skips and says which variable to set.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN names the variable that switches the PostgreSQL tests on.
const EnvDSN = "SSOBRIDGE_TEST_POSTGRES_DSN"

// DSN returns a URL of the test server whose search_path is a new schema,
// dropped (with everything in it) when the test ends.
func DSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvDSN)
	if base == "" {
		t.Skip("PostgreSQL tests are off: set " + EnvDSN + " (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable); .ci/run sets it")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("%s: connect: %v", EnvDSN, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", EnvDSN, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
