package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openSQLite opens a new SQLite store in the test's temp dir.
func openSQLite(t *testing.T, now func() time.Time) *SQLite {
	t.Helper()
	s, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "test.db"), now)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func newAcct(email string, admin bool) store.NewAccount {
	return store.NewAccount{Email: email, FirstName: "First", LastName: "Last", PasswordHash: "$argon2id$x", Admin: admin}
}

// Concurrent audit writes share commits (the conformance suite checks
// that they all land; this is the SQLite writer's grouping).
func TestSQLiteConcurrentWritesAreGrouped(t *testing.T) {
	s := openSQLite(t, nil)
	ctx := context.Background()
	errs := make(chan error, 100)
	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.Record(ctx, store.Event{Kind: store.KindLaunch, AccountID: 1, Outcome: "ok"})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Less(t, s.commits.Load(), int64(100), "100 concurrent writes, fewer commits")
}

func TestSQLiteReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s, err := OpenSQLite(context.Background(), path, nil)
	require.NoError(t, err)
	_, err = s.CreateAccount(context.Background(), newAcct("keep@example.com", true))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	s, err = OpenSQLite(context.Background(), path, nil)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.AccountByEmail(context.Background(), "keep@example.com")
	require.NoError(t, err, "migrations are idempotent and data persists")
}

// A database made by an earlier version (schema 1, with the per-account
// audit index) upgrades on open: the index goes, the events stay, and
// listing one account's events still finds exactly its own.
func TestSQLiteUpgradeFromSchema1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	sub, err := fs.Sub(migrations, "migrations/sqlite")
	require.NoError(t, err)
	p, err := goose.NewProvider(goose.DialectSQLite3, db, sub)
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 1)
	require.NoError(t, err)
	for i := range 6 {
		_, err := db.ExecContext(ctx, "INSERT INTO audit_log (at, kind, account_id, outcome) VALUES (?, 'launch', ?, 'ok')", i, i%2+1)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())

	s, err := OpenSQLite(ctx, path, nil)
	require.NoError(t, err)
	defer s.Close()
	var n int
	require.NoError(t, s.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'audit_log_account'").Scan(&n))
	assert.Zero(t, n, "the per-account index is dropped")
	evs, total, err := s.ListEvents(ctx, store.AuditFilter{AccountID: 2})
	require.NoError(t, err)
	assert.Equal(t, 3, total)
	require.Len(t, evs, 3)
	for _, e := range evs {
		assert.Equal(t, int64(2), e.AccountID)
	}
}

// Reads by id run without the context's cancellation (it would cost two
// goroutines per query) but still refuse a context that has already ended,
// and keep working for one that has not.
func TestSQLitePointLookupsHonourAnEndedContext(t *testing.T) {
	s := openSQLite(t, nil)
	ctx := context.Background()
	acct, err := s.CreateAccount(ctx, newAcct("ctx@example.com", false))
	id := acct.ID
	require.NoError(t, err)
	require.NoError(t, s.SaveLink(ctx, id, "u-ctx"))

	ended, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.AccountByID(ended, id)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = s.LinkFor(ended, id)
	assert.ErrorIs(t, err, context.Canceled)

	live, cancelLive := context.WithCancel(ctx)
	defer cancelLive()
	a, err := s.AccountByID(live, id)
	require.NoError(t, err)
	assert.Equal(t, "ctx@example.com", a.Email)
	l, err := s.LinkFor(live, id)
	require.NoError(t, err)
	assert.Equal(t, "u-ctx", l.PlatformUserID)
}

func TestGroupCommitIsolatesAFailingWrite(t *testing.T) {
	s := openSQLite(t, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 25 {
				errs[i] = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
					_, err := tx.ExecContext(ctx, "INSERT INTO no_such_table VALUES (1)")
					return err
				})
				return
			}
			errs[i] = s.Record(ctx, store.Event{Kind: store.KindLaunch, Outcome: "ok", Detail: fmt.Sprint(i)})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if i == 25 {
			assert.Error(t, err)
		} else {
			assert.NoError(t, err)
		}
	}
	_, total, err := s.ListEvents(ctx, store.AuditFilter{})
	require.NoError(t, err)
	assert.Equal(t, 49, total, "every good write committed")
	require.NoError(t, s.Close())
	assert.ErrorIs(t, s.Record(ctx, store.Event{Kind: store.KindLaunch, Outcome: "ok"}), ErrClosed)
}

// Commits never checkpoint (a commit that did waited for the copy and its
// fsync, and so did every launch in its group); a background checkpoint
// folds the WAL into the database instead, and once the WAL is long the
// writer restarts it, so steady writes do not grow the file without end.
func TestWALIsCheckpointedInTheBackgroundAndRestarted(t *testing.T) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "wal.db"), nil)
	require.NoError(t, err)
	defer s.Close()
	var auto int
	require.NoError(t, s.wdb.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto))
	assert.Equal(t, 0, auto, "the writer connection never checkpoints")
	// Each event is its own commit of a few pages: enough for a restart.
	for i := range restartFrames {
		require.NoError(t, s.Record(ctx, store.Event{Kind: store.KindLaunch, Outcome: "ok", AccountID: int64(i%500 + 1), Detail: fmt.Sprint(i)}))
	}
	assert.Eventually(t, func() bool { return s.checkpointsRun.Load() > 0 }, 5*time.Second, 10*time.Millisecond,
		"a background checkpoint copied the writes into the database file")
	assert.Eventually(t, func() bool { return s.restarts.Load() > 0 }, 5*time.Second, 10*time.Millisecond,
		"the writer restarted the WAL")
	// A restart takes effect at the next commit, which writes the WAL from its start.
	require.NoError(t, s.Record(ctx, store.Event{Kind: store.KindLaunch, Outcome: "ok"}))
	var busy, walFrames, copied int64
	require.NoError(t, s.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &walFrames, &copied))
	// Each commit wrote at least 2 pages (the table and its index on time):
	// without a restart the WAL would hold more than 2 x restartFrames frames.
	assert.Less(t, walFrames, int64(2*restartFrames), "the WAL was written from its start again")
	_, total, err := s.ListEvents(ctx, store.AuditFilter{})
	require.NoError(t, err)
	assert.Equal(t, restartFrames+1, total, "nothing lost on the way")
}

// A removed or replaced database file fails Ping: the open connections
// would go on writing to an unlinked file and lose everything.
func TestSQLitePingNoticesTheFileIsGone(t *testing.T) {
	for _, tt := range []struct {
		name string
		do   func(dir, path string) error
	}{
		{"data folder removed", func(dir, _ string) error { return os.RemoveAll(dir) }},
		{"file replaced", func(_, path string) error {
			if err := os.Remove(path); err != nil {
				return err
			}
			return os.WriteFile(path, nil, 0o600)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			path := filepath.Join(dir, "db.sqlite")
			s, err := OpenSQLite(context.Background(), path, nil)
			require.NoError(t, err)
			defer s.Close()
			require.NoError(t, s.Ping(context.Background()))
			require.NoError(t, tt.do(dir, path))
			err = s.Ping(context.Background())
			assert.ErrorIs(t, err, store.ErrStoreGone)
			assert.ErrorContains(t, err, path)
		})
	}
}

// The database file, its WAL and the data folder are the owner's alone.
func TestSQLiteFilesArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "db.sqlite")
	s, err := OpenSQLite(context.Background(), path, nil)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.CreateAccount(context.Background(), newAcct("p@example.com", false))
	require.NoError(t, err)
	for name, want := range map[string]os.FileMode{dir: 0o700, path: 0o600, path + "-wal": 0o600, path + "-shm": 0o600} {
		st, err := os.Stat(name)
		require.NoError(t, err)
		assert.Equal(t, want, st.Mode().Perm(), name)
	}
}

// A database another process keeps locked past the busy timeout fails the
// batch with ErrStoreBusy, and the writes that queued behind it meanwhile
// fail with it rather than waiting the timeout again each; once the lock is
// gone, writes go through and none of the failed ones was written.
func TestSQLiteLockedDatabaseFailsTheBatchAndWhatQueued(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "locked.db")
	s, err := OpenSQLite(ctx, path, nil)
	require.NoError(t, err)
	defer s.Close()

	other, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer other.Close()
	conn, err := other.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE") // the write lock, held
	require.NoError(t, err)

	const n = 20
	errs := make([]error, n)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.Record(ctx, store.Event{Kind: store.KindLaunch, Outcome: "ok", Detail: fmt.Sprint(i)})
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for i, err := range errs {
		assert.ErrorIs(t, err, store.ErrStoreBusy, "write %d", i)
	}
	assert.Less(t, elapsed, 2*busyTimeoutMS*time.Millisecond-time.Second, "one busy timeout for all, not one per batch")

	_, err = conn.ExecContext(ctx, "ROLLBACK")
	require.NoError(t, err)
	require.NoError(t, s.Record(ctx, store.Event{Kind: store.KindLaunch, Outcome: "ok", Detail: "after"}))
	events, total, err := s.ListEvents(ctx, store.AuditFilter{})
	require.NoError(t, err)
	require.Equal(t, 1, total, "no failed write was written")
	assert.Equal(t, "after", events[0].Detail)
}

// FillStore writes what it is asked for, across its statement and
// transaction boundaries, and every row reads as the store's own.
func TestFillStore(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s := openSQLite(t, func() time.Time { return now })
	var progressed []string
	f := Fill{Accounts: 30, Sessions: 70, Events: fillRows*fillStatements + 1234, Span: 89 * 24 * time.Hour, SeenWithin: time.Hour,
		Now: now, PasswordHash: "!", Progress: func(table string, done, total int) {
			if done == total {
				progressed = append(progressed, table)
			}
		}}
	require.NoError(t, FillStore(ctx, s, f))
	assert.Equal(t, []string{"accounts", "links", "sessions", "audit_log"}, progressed)
	n, err := s.CountAccounts(ctx)
	require.NoError(t, err)
	assert.Equal(t, 30, n)
	linked, unlinked, err := s.CountLinks(ctx)
	require.NoError(t, err)
	assert.Equal(t, [2]int{30, 0}, [2]int{linked, unlinked})
	_, total, err := s.ListEvents(ctx, store.AuditFilter{Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, f.Events, total)
	var sessions int
	var oldest, newest int64
	require.NoError(t, s.db.QueryRowContext(ctx, "SELECT COUNT(*), MIN(last_seen_at), MAX(last_seen_at) FROM sessions").Scan(&sessions, &oldest, &newest))
	assert.Equal(t, 70, sessions)
	assert.GreaterOrEqual(t, oldest, now.Add(-time.Hour).UnixMilli(), "seen within the hour")
	assert.LessOrEqual(t, newest, now.UnixMilli())
	var first, last int64
	require.NoError(t, s.db.QueryRowContext(ctx, "SELECT MIN(at), MAX(at) FROM audit_log").Scan(&first, &last))
	assert.Equal(t, now.Add(-89*24*time.Hour).UnixMilli(), first)
	assert.Less(t, last, now.UnixMilli())
	// The filled sessions are ordinary sessions: a signed-in request reads them.
	var id string
	require.NoError(t, s.db.QueryRowContext(ctx, "SELECT id FROM sessions LIMIT 1").Scan(&id))
	_, err = s.SessionByID(ctx, id)
	assert.NoError(t, err)
	assert.Error(t, FillStore(ctx, NewGuard(s, 0, nil, nil), f), "only a store of this package is filled")

	// FreshFirst: that many of the oldest 1% stamped now.
	g := openSQLite(t, func() time.Time { return now })
	f.FreshFirst, f.Progress = 7, nil
	require.NoError(t, FillStore(ctx, g, f))
	var fresh, maxID, total2 int64
	require.NoError(t, g.db.QueryRowContext(ctx, "SELECT COUNT(*), MAX(id) FROM audit_log WHERE at = $1", now.UnixMilli()).Scan(&fresh, &maxID))
	require.NoError(t, g.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM audit_log").Scan(&total2))
	assert.Equal(t, int64(7), fresh)
	assert.LessOrEqual(t, maxID, total2/100+1, "among the oldest 1% of ids")
}
