package accounts

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// backends lists every Store implementation; the conformance suite runs
// against each (as Dex's storage tests do).
func backends() map[string]func(t *testing.T, now func() time.Time) Store {
	return map[string]func(t *testing.T, now func() time.Time) Store{
		"sqlite": func(t *testing.T, now func() time.Time) Store {
			s, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "sub", "test.db"), now)
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			return s
		},
		// The cache must keep every promise of the store it wraps.
		"sqlite+cache": func(t *testing.T, now func() time.Time) Store {
			s, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "test.db"), now)
			require.NoError(t, err)
			c := NewCache(s, time.Minute, now)
			t.Cleanup(func() { c.Close() })
			return c
		},
	}
}

func TestStoreConformance(t *testing.T) {
	for name, open := range backends() {
		t.Run(name, func(t *testing.T) {
			tests := map[string]func(t *testing.T, s Store){
				"accounts":         testAccounts,
				"bulk all-or-none": testBulkCreate,
				"admin rules":      testAdminRules,
				"sessions epoch":   testSessionEpoch,
				"links":            testLinks,
				"audit":            testAudit,
				"list accounts":    testListAccounts,
			}
			for tn, fn := range tests {
				t.Run(tn, func(t *testing.T) {
					fn(t, open(t, func() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }))
				})
			}
		})
	}
}

func newAcct(email string, admin bool) NewAccount {
	return NewAccount{Email: email, FirstName: "First", LastName: "Last", PasswordHash: "$argon2id$x", Admin: admin}
}

func testAccounts(t *testing.T, s Store) {
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, NewAccount{Email: " Ada@Example.com ", FirstName: " Ada ", LastName: "Lovelace", PasswordHash: "h"})
	require.NoError(t, err)
	assert.Equal(t, "Ada@Example.com", a.Email, "trimmed, case kept")
	assert.Equal(t, "Ada Lovelace", a.Name())
	assert.False(t, a.Admin)

	got, err := s.AccountByEmail(ctx, "ada@EXAMPLE.com")
	require.NoError(t, err)
	assert.Equal(t, a.ID, got.ID, "found case-insensitively")

	_, err = s.CreateAccount(ctx, newAcct("ADA@example.com", false))
	assert.ErrorIs(t, err, ErrEmailTaken, "unique case-insensitively")

	for _, bad := range []NewAccount{
		{Email: "no-at", FirstName: "A", LastName: "B", PasswordHash: "h"},
		{Email: "A <a@b.example>", FirstName: "A", LastName: "B", PasswordHash: "h"},
		{Email: "a@b.example", FirstName: "", LastName: "B", PasswordHash: "h"},
		{Email: "a@b.example", FirstName: "A", LastName: "B"},
	} {
		_, err := s.CreateAccount(ctx, bad)
		assert.ErrorIs(t, err, ErrInvalid, "%+v", bad)
	}
	n, err := s.CountAccounts(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "bad input writes nothing")

	_, err = s.AccountByID(ctx, 999)
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = s.AccountByEmail(ctx, "nobody@example.com")
	assert.ErrorIs(t, err, ErrNotFound)
	assert.ErrorIs(t, s.SetDisabled(ctx, 999, true), ErrNotFound)

	require.NoError(t, s.SetDisabled(ctx, a.ID, true))
	got, _ = s.AccountByID(ctx, a.ID)
	assert.True(t, got.Disabled)
	require.NoError(t, s.SetDisabled(ctx, a.ID, false))
	got, _ = s.AccountByID(ctx, a.ID)
	assert.False(t, got.Disabled)
	require.NoError(t, s.Ping(ctx))
}

func testBulkCreate(t *testing.T, s Store) {
	ctx := context.Background()
	err := s.CreateAccounts(ctx, []NewAccount{newAcct("one@example.com", false), newAcct("bad", false), newAcct("three@example.com", false)})
	require.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "row 2")
	err = s.CreateAccounts(ctx, []NewAccount{newAcct("one@example.com", false), newAcct("ONE@example.com", false)})
	require.ErrorIs(t, err, ErrEmailTaken)
	n, _ := s.CountAccounts(ctx)
	assert.Equal(t, 0, n, "nothing written unless all rows pass")
	require.NoError(t, s.CreateAccounts(ctx, []NewAccount{newAcct("one@example.com", false), newAcct("two@example.com", false)}))
	n, _ = s.CountAccounts(ctx)
	assert.Equal(t, 2, n)
}

func testAdminRules(t *testing.T, s Store) {
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, newAcct("admin@example.com", true))
	require.NoError(t, err)
	b, err := s.CreateAccount(ctx, newAcct("user@example.com", false))
	require.NoError(t, err)
	assert.ErrorIs(t, s.SetAdmin(ctx, a.ID, false), ErrLastAdmin)
	assert.ErrorIs(t, s.SetDisabled(ctx, a.ID, true), ErrLastAdmin, "disabling the last admin is removing it")
	require.NoError(t, s.SetAdmin(ctx, b.ID, true))
	require.NoError(t, s.SetAdmin(ctx, a.ID, false), "another admin exists now")
	got, _ := s.AccountByID(ctx, a.ID)
	assert.False(t, got.Admin)
	assert.ErrorIs(t, s.SetAdmin(ctx, b.ID, false), ErrLastAdmin)
}

func testSessionEpoch(t *testing.T, s Store) {
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, newAcct("e@example.com", false))
	require.NoError(t, err)
	require.NoError(t, s.EndSessions(ctx, a.ID))
	require.NoError(t, s.SetPasswordHash(ctx, a.ID, "new-hash"))
	require.NoError(t, s.SetDisabled(ctx, a.ID, true))
	got, _ := s.AccountByID(ctx, a.ID)
	assert.Equal(t, a.SessionEpoch+3, got.SessionEpoch, "sign-out, password reset and disabling each end sessions")
	assert.Equal(t, "new-hash", got.PasswordHash)
	assert.ErrorIs(t, s.SetPasswordHash(ctx, a.ID, ""), ErrInvalid)
}

func testLinks(t *testing.T, s Store) {
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, newAcct("l@example.com", false))
	require.NoError(t, err)
	_, err = s.LinkFor(ctx, a.ID)
	assert.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.SaveLink(ctx, a.ID, "9007199254740993"))
	l, err := s.LinkFor(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, "9007199254740993", l.PlatformUserID)
	assert.True(t, l.LastLaunchAt.IsZero())
	require.NoError(t, s.RecordLaunch(ctx, Event{AccountID: a.ID, Outcome: "platform_unavailable"}))
	l, _ = s.LinkFor(ctx, a.ID)
	assert.True(t, l.LastLaunchAt.IsZero(), "a failed launch does not count as the last launch")
	at := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	require.NoError(t, s.RecordLaunch(ctx, Event{AccountID: a.ID, Outcome: "ok", At: at}))
	l, _ = s.LinkFor(ctx, a.ID)
	assert.Equal(t, at, l.LastLaunchAt, "a successful launch stamps the link")
	evs, _, err := s.ListEvents(ctx, AuditFilter{AccountID: a.ID, Kind: KindLaunch})
	require.NoError(t, err)
	assert.Len(t, evs, 2, "both launches are audited")

	m, err := s.ListLinks(ctx, []string{"9007199254740993", "other"})
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"9007199254740993": a.ID}, m)

	require.NoError(t, s.DeleteLink(ctx, a.ID, "someone-else"), "compare-and-delete: no match, no delete")
	_, err = s.LinkFor(ctx, a.ID)
	require.NoError(t, err)
	require.NoError(t, s.DeleteLink(ctx, a.ID, "9007199254740993"))
	_, err = s.LinkFor(ctx, a.ID)
	assert.ErrorIs(t, err, ErrNotFound)
	assert.ErrorIs(t, s.SaveLink(ctx, a.ID, ""), ErrInvalid)
}

func testAudit(t *testing.T, s Store) {
	ctx := context.Background()
	for i := range 5 {
		outcome := "ok"
		if i%2 == 1 {
			outcome = "failed"
		}
		require.NoError(t, s.Record(ctx, Event{Kind: KindLogin, AccountID: int64(i%2 + 1), Outcome: outcome, Email: fmt.Sprint(i)}))
	}
	require.NoError(t, s.Record(ctx, Event{Kind: KindLaunch, Outcome: "ok", PlatformCalls: 3, Latency: 25 * time.Millisecond, At: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}))
	evs, total, err := s.ListEvents(ctx, AuditFilter{})
	require.NoError(t, err)
	assert.Equal(t, 6, total)
	assert.Equal(t, KindLaunch, evs[0].Kind, "newest first")
	assert.Equal(t, 3, evs[0].PlatformCalls)
	assert.Equal(t, 25*time.Millisecond, evs[0].Latency)

	_, total, _ = s.ListEvents(ctx, AuditFilter{Kind: KindLogin, Outcome: "failed"})
	assert.Equal(t, 2, total)
	evs, total, _ = s.ListEvents(ctx, AuditFilter{AccountID: 1, Limit: 2})
	assert.Equal(t, 3, total)
	assert.Len(t, evs, 2)

	n, err := s.PruneEvents(ctx, time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
}

func testListAccounts(t *testing.T, s Store) {
	ctx := context.Background()
	for i := range 12 {
		_, err := s.CreateAccount(ctx, NewAccount{Email: fmt.Sprintf("user%02d@example.com", i), FirstName: "U", LastName: fmt.Sprintf("N%d", i), PasswordHash: "h"})
		require.NoError(t, err)
	}
	_, err := s.CreateAccount(ctx, NewAccount{Email: "percent%x@example.com", FirstName: "Per", LastName: "Cent", PasswordHash: "h"})
	require.NoError(t, err)
	page, total, err := s.ListAccounts(ctx, AccountFilter{Limit: 5, Offset: 10})
	require.NoError(t, err)
	assert.Equal(t, 13, total)
	assert.Len(t, page, 3)
	_, total, _ = s.ListAccounts(ctx, AccountFilter{Search: "USER1"})
	assert.Equal(t, 2, total)
	_, total, _ = s.ListAccounts(ctx, AccountFilter{Search: "%"})
	assert.Equal(t, 1, total, "LIKE wildcards are literal")
	_, total, _ = s.ListAccounts(ctx, AccountFilter{Search: "u n3"})
	assert.Equal(t, 1, total, "names match")
}

func TestSQLiteConcurrentWriters(t *testing.T) {
	s := backends()["sqlite"](t, nil)
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, newAcct("c@example.com", false))
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 110) // 100 records + 10 links
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.Record(ctx, Event{Kind: KindLaunch, AccountID: a.ID, Outcome: "ok"})
			if i%10 == 0 {
				errs <- s.SaveLink(ctx, a.ID, fmt.Sprint(i))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	_, total, _ := s.ListEvents(ctx, AuditFilter{})
	assert.Equal(t, 100, total)
	// SaveLink writes outside the group commit; the 100 audit records share
	// commits (a commit each would be 100).
	assert.Less(t, s.(*SQLite).commits.Load(), int64(100), "concurrent writes were grouped")
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
	sub, err := fs.Sub(migrations, "migrations")
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
	evs, total, err := s.ListEvents(ctx, AuditFilter{AccountID: 2})
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
	s := backends()["sqlite"](t, nil).(*SQLite)
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
	s := backends()["sqlite"](t, nil).(*SQLite)
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
			errs[i] = s.Record(ctx, Event{Kind: KindLaunch, Outcome: "ok", Detail: fmt.Sprint(i)})
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
	_, total, err := s.ListEvents(ctx, AuditFilter{})
	require.NoError(t, err)
	assert.Equal(t, 49, total, "every good write committed")
	require.NoError(t, s.Close())
	assert.ErrorIs(t, s.Record(ctx, Event{Kind: KindLaunch, Outcome: "ok"}), ErrClosed)
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
		require.NoError(t, s.Record(ctx, Event{Kind: KindLaunch, Outcome: "ok", AccountID: int64(i%500 + 1), Detail: fmt.Sprint(i)}))
	}
	assert.Eventually(t, func() bool { return s.checkpointsRun.Load() > 0 }, 5*time.Second, 10*time.Millisecond,
		"a background checkpoint copied the writes into the database file")
	assert.Eventually(t, func() bool { return s.restarts.Load() > 0 }, 5*time.Second, 10*time.Millisecond,
		"the writer restarted the WAL")
	// A restart takes effect at the next commit, which writes the WAL from its start.
	require.NoError(t, s.Record(ctx, Event{Kind: KindLaunch, Outcome: "ok"}))
	var busy, walFrames, copied int64
	require.NoError(t, s.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &walFrames, &copied))
	// Each commit wrote at least 2 pages (the table and its index on time):
	// without a restart the WAL would hold more than 2 x restartFrames frames.
	assert.Less(t, walFrames, int64(2*restartFrames), "the WAL was written from its start again")
	_, total, err := s.ListEvents(ctx, AuditFilter{})
	require.NoError(t, err)
	assert.Equal(t, restartFrames+1, total, "nothing lost on the way")
}
