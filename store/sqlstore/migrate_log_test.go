package sqlstore_test

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/ssobridge/ssobridge/internal/pgtest"
	"github.com/ssobridge/ssobridge/internal/syncbuf"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// Opening a store says what its migrations did, once: from which schema
// to which, by name, and how long it took; opening it again says
// nothing; a schema newer than this version's is said and left alone.
func TestMigrationsSayWhatTheyDid(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	var out syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&out, nil))
	s, err := sqlstore.OpenSQLite(ctx, path, nil, sqlstore.WithLogger(logger))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	assert.Regexp(t, `msg="store migrated 0 → \d+ \(initial, .*platform_slow, module_records\)" store=\S+ took=`, out.String())

	var again syncbuf.Buffer
	s, err = sqlstore.OpenSQLite(ctx, path, nil, sqlstore.WithLogger(slog.New(slog.NewTextHandler(&again, nil))))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	assert.Empty(t, again.String(), "nothing to migrate: nothing said")

	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO goose_db_version (version_id, is_applied) VALUES (999, 1)")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	s, err = sqlstore.OpenSQLite(ctx, path, nil, sqlstore.WithLogger(logger))
	require.NoError(t, err, "a newer schema is run on")
	require.NoError(t, s.Close())
	assert.Contains(t, out.String(), "the store's schema is newer than this version's")
	assert.Contains(t, out.String(), "schema=999")
}

// On PostgreSQL alike: a fresh schema says what its migrations did, once.
func TestMigrationsSayWhatTheyDidOnPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	var out syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&out, nil))
	s, err := sqlstore.OpenPostgres(context.Background(), dsn, nil, sqlstore.WithLogger(logger))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	assert.Regexp(t, `msg="store migrated 0 → \d+ \(initial, .*platform_slow, module_records\)" store="PostgreSQL schema \S+" took=`, out.String())
	var again syncbuf.Buffer
	s, err = sqlstore.OpenPostgres(context.Background(), dsn, nil, sqlstore.WithLogger(slog.New(slog.NewTextHandler(&again, nil))))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	assert.Empty(t, again.String())
}
