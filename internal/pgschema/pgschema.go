// Package pgschema makes a PostgreSQL schema of its own for a test or a
// bench run and drops it afterwards, so neither meets the data of another
// run or of a real deployment on the same database.
package pgschema

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/ssobridge/ssobridge/internal/randid"
)

// Create makes a schema named prefix plus random hex on the server at dsn
// and returns a URL whose search_path is it, and drop, which removes it
// with everything in it.
func Create(ctx context.Context, dsn, prefix string) (schemaDSN string, drop func(context.Context) error, err error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, errors.New("pgschema: not a PostgreSQL URL such as postgres://user@host:5432/db")
	}
	// The admin connection is a plain one: pgxpool's own settings
	// (pool_max_conns ...) would reach the server as parameters and fail.
	admin := *u
	q := admin.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	admin.RawQuery = q.Encode()
	exec := func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, admin.String())
		if err != nil {
			return fmt.Errorf("pgschema: connect to %s: %w", u.Host, err)
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	schema := prefix + randid.Hex(6)
	if err := exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, fmt.Errorf("pgschema: create %s: %w", schema, err)
	}
	sq := u.Query()
	sq.Set("search_path", schema)
	with := *u
	with.RawQuery = sq.Encode()
	return with.String(), func(ctx context.Context) error { return exec(ctx, "DROP SCHEMA "+schema+" CASCADE") }, nil
}
