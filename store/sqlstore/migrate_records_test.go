package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/pgtest"
	"github.com/ssobridge/ssobridge/store"
)

// The LTI tables' rows of an earlier version are copied into the
// modules' records on upgrade, on both databases, as the lti module reads
// them (an LMS under "issuer\nclient_id", a course and its roster's last
// read under "issuer\nclient_id\ncontext_id"); a course never read has no
// roster record. Migrating down writes the tables from the records again,
// with what changed since.
func TestLTITablesMoveIntoModuleRecords(t *testing.T) {
	for _, db := range []struct {
		name, dir string
		dialect   goose.Dialect
		before    int64 // the last migration before module_records
		open      func(t *testing.T) (*sql.DB, func(ctx context.Context) (store.Store, error))
	}{
		{"SQLite", "migrations/sqlite", goose.DialectSQLite3, 20, func(t *testing.T) (*sql.DB, func(context.Context) (store.Store, error)) {
			path := filepath.Join(t.TempDir(), "old.db")
			db, err := sql.Open("sqlite", "file:"+path)
			require.NoError(t, err)
			return db, func(ctx context.Context) (store.Store, error) { return OpenSQLite(ctx, path, nil) }
		}},
		{"PostgreSQL", "migrations/postgres", goose.DialectPostgres, 16, func(t *testing.T) (*sql.DB, func(context.Context) (store.Store, error)) {
			dsn := pgtest.DSN(t)
			db, err := sql.Open("pgx", dsn)
			require.NoError(t, err)
			return db, func(ctx context.Context) (store.Store, error) { return OpenPostgres(ctx, dsn, nil) }
		}},
	} {
		t.Run(db.name, func(t *testing.T) {
			ctx := context.Background()
			conn, open := db.open(t)
			defer conn.Close()
			sub, err := fs.Sub(migrations, db.dir)
			require.NoError(t, err)
			p, err := goose.NewProvider(db.dialect, conn, sub)
			require.NoError(t, err)
			_, err = p.UpTo(ctx, db.before)
			require.NoError(t, err)
			oldRows := []string{
				`INSERT INTO lti_platforms VALUES ('https://lms.example', 'c1', 'Moodle <school>', 'd1', 'https://lms.example/auth',
					'https://lms.example/jwks', 'https://lms.example/token', 'school.example', true, 1764000000000, 'admin@partner.example', false)`,
				`INSERT INTO lti_platforms VALUES ('https://lms.example', 'c2', 'Canvas "2"', 'd2', 'https://lms.example/a2',
					'https://lms.example/j2', '', '', false, 1764000060000, 'kim@partner.example', true)`,
				`INSERT INTO lti_courses VALUES ('https://lms.example', 'c1', 'course-7', 'Media studies', 'https://lms.example/nrps/7',
					'teacher@school.example', 1764000120000, '30 members', 1764000180000, 1240)`,
				`INSERT INTO lti_courses VALUES ('https://lms.example', 'c1', 'course-8', 'Art', '', 'art@school.example', 1764000240000, '', 0, 0)`,
			}
			for _, q := range oldRows {
				_, err := conn.ExecContext(ctx, boolsFor(db.dialect, q))
				require.NoError(t, err)
			}

			st, err := open(ctx)
			require.NoError(t, err)
			read := func(kind string) map[string]map[string]any {
				list, err := st.Records(ctx, store.RecordQuery{Module: "lti", Kind: kind})
				require.NoError(t, err)
				out := map[string]map[string]any{}
				for _, r := range list {
					var v map[string]any
					require.NoError(t, json.Unmarshal(r.Value, &v), "%s %q", kind, r.Key)
					v["at"] = r.At.UnixMilli()
					out[r.Key] = v
				}
				return out
			}
			assert.Equal(t, map[string]map[string]any{
				"https://lms.example\nc1": {"name": "Moodle <school>", "issuer": "https://lms.example", "client_id": "c1", "deployment_id": "d1",
					"auth_url": "https://lms.example/auth", "jwks_url": "https://lms.example/jwks", "token_url": "https://lms.example/token",
					"email_domains": "school.example", "create_accounts": true, "registered_by": "admin@partner.example", "disabled": false, "at": int64(1764000000000)},
				"https://lms.example\nc2": {"name": `Canvas "2"`, "issuer": "https://lms.example", "client_id": "c2", "deployment_id": "d2",
					"auth_url": "https://lms.example/a2", "jwks_url": "https://lms.example/j2", "token_url": "",
					"email_domains": "", "create_accounts": false, "registered_by": "kim@partner.example", "disabled": true, "at": int64(1764000060000)},
			}, read("platform"))
			assert.Equal(t, map[string]map[string]any{
				"https://lms.example\nc1\ncourse-7": {"issuer": "https://lms.example", "client_id": "c1", "context_id": "course-7", "title": "Media studies",
					"memberships_url": "https://lms.example/nrps/7", "launched_by": "teacher@school.example", "at": int64(1764000120000)},
				"https://lms.example\nc1\ncourse-8": {"issuer": "https://lms.example", "client_id": "c1", "context_id": "course-8", "title": "Art",
					"memberships_url": "", "launched_by": "art@school.example", "at": int64(1764000240000)},
			}, read("course"))
			assert.Equal(t, map[string]map[string]any{
				"https://lms.example\nc1\ncourse-7": {"result": "30 members", "waiting": float64(1240), "at": int64(1764000180000)},
			}, read("roster"), "a course never read has no roster record")
			require.NoError(t, st.DeleteRecord(ctx, "lti", "course", "https://lms.example\nc1\ncourse-8"), "a change after the upgrade")
			require.NoError(t, st.Close())

			_, err = p.DownTo(ctx, db.before)
			require.NoError(t, err)
			assert.Equal(t, [][]string{
				{"https://lms.example", "c1", "Moodle <school>", "d1", "https://lms.example/auth", "https://lms.example/jwks", "https://lms.example/token",
					"school.example", "true", "1764000000000", "admin@partner.example", "false"},
				{"https://lms.example", "c2", `Canvas "2"`, "d2", "https://lms.example/a2", "https://lms.example/j2", "", "", "false", "1764000060000",
					"kim@partner.example", "true"},
			}, rowsOf(t, conn, `SELECT issuer, client_id, name, deployment_id, auth_url, jwks_url, token_url, email_domains,
				CASE WHEN create_accounts THEN 'true' ELSE 'false' END, registered_at, registered_by,
				CASE WHEN disabled THEN 'true' ELSE 'false' END FROM lti_platforms ORDER BY client_id`), "migrated down: the platforms as they were")
			assert.Equal(t, [][]string{
				{"course-7", "Media studies", "https://lms.example/nrps/7", "teacher@school.example", "1764000120000", "30 members", "1764000180000", "1240"},
			}, rowsOf(t, conn, `SELECT context_id, title, memberships_url, launched_by, last_launch_at, last_roster, last_roster_at, roster_waiting
				FROM lti_courses ORDER BY context_id`), "migrated down: the courses as the records had them")
		})
	}
}

// boolsFor writes q's true and false as SQLite keeps them (1 and 0).
func boolsFor(d goose.Dialect, q string) string {
	if d != goose.DialectSQLite3 {
		return q
	}
	r := strings.NewReplacer("true,", "1,", "false,", "0,", "false)", "0)", "true)", "1)")
	return r.Replace(q)
}

// rowsOf reads every row of q as text.
func rowsOf(t *testing.T, db *sql.DB, q string) [][]string {
	t.Helper()
	rows, err := db.Query(q)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out [][]string
	for rows.Next() {
		row := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		out = append(out, row)
	}
	require.NoError(t, rows.Err())
	return out
}
