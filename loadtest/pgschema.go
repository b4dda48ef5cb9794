package loadtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// benchSchema creates a schema of its own on the server at dsn and returns
// a URL whose search_path is it, and a func that drops it: a bench never
// meets the accounts of an earlier run or of a real deployment.
func benchSchema(ctx context.Context, dsn string) (string, func(), error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", nil, fmt.Errorf("--dsn is not a URL")
	}
	// The admin connection is a plain one: pgxpool's own settings
	// (pool_max_conns ...) would be sent to the server as parameters.
	admin := *u
	aq := admin.Query()
	for k := range aq {
		if strings.HasPrefix(k, "pool_") {
			aq.Del(k)
		}
	}
	admin.RawQuery = aq.Encode()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "bench_" + hex.EncodeToString(b)
	exec := func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, admin.String())
		if err != nil {
			return fmt.Errorf("connect to PostgreSQL at %s: %w", u.Host, err)
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
	}, nil
}
