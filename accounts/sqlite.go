package accounts

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite" // pure-Go SQLite driver, no cgo

	"github.com/ssobridge/ssobridge/mailaddr"
)

// migrations holds each dialect's migrations, in migrations/sqlite and
// migrations/postgres.
//
//go:embed migrations
var migrations embed.FS

// SQLite is the SQLite backend of Store. Writes go through one connection
// (Go queues writers, so SQLite never makes them sleep on its lock); reads
// use a pool beside it (WAL lets them run while a write commits). Hot
// statements are prepared once.
type SQLite struct {
	db   *sql.DB // reads
	wdb  *sql.DB // writes: one connection
	now  func() time.Time
	path string      // the database file
	file os.FileInfo // as opened: Ping checks it is still there

	stmtAccountByID *sql.Stmt
	stmtLinkFor     *sql.Stmt
	stmtTouch       *sql.Stmt
	stmtEvents      map[int]*sql.Stmt // multi-row audit inserts by row count (powers of two)
	stamps          stampMemo         // the link stamps this process made lately

	// Group commit of the hot writes (audit, launch time): see write.
	ops     chan writeOp
	stop    chan struct{}
	stopped chan struct{} // closed when batchWrites and checkpoints have returned
	closeMu sync.Once

	checkpointsRun atomic.Int64  // background checkpoints that copied WAL frames into the database
	commits        atomic.Int64  // group commits run
	restart        chan struct{} // checkpoints -> batchWrites: the WAL is long, restart it
	restarts       atomic.Int64  // WAL restarts done

	provisioning keyLocks // this process's holders of provisioning leases
	holder       string   // this store's id in provisioning_leases
}

// writeOp is one write waiting for the next group commit.
type writeOp struct {
	fn   func(ctx context.Context, tx *sql.Tx) error
	done chan error
	// event, instead of fn: an audit event, inserted with the batch's
	// others in multi-row statements; stamp also stamps its link.
	event *Event
	stamp bool
}

// busyTimeoutMS is how long a connection waits for another process's lock.
const busyTimeoutMS = 5000

// maxBatch bounds one group commit.
const maxBatch = 256

// OpenSQLite opens (creating if needed) the database file at path and
// applies pending migrations.
func OpenSQLite(ctx context.Context, path string, now func() time.Time) (*SQLite, error) {
	if now == nil {
		now = time.Now
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("accounts: create %s: %w", dir, err)
		}
	}
	// Create the file for the owner alone before SQLite does (it would use
	// the umask's 0644); its -wal and -shm files take the same mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("accounts: open %s: %w", path, err)
	}
	f.Close()
	// busy_timeout covers other processes (e.g. `ssobridge user add` while
	// serving); within this one the single writer connection serialises.
	// wal_autocheckpoint(0): commits never checkpoint, see checkpoints.
	// journal_size_limit trims a WAL that a burst grew, once it restarts.
	dsn := "file:" + path + "?_pragma=busy_timeout(" + strconv.Itoa(busyTimeoutMS) + ")&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)" +
		"&_pragma=wal_autocheckpoint(0)&_pragma=journal_size_limit(67108864)&_txlock=immediate"
	open := func(conns int) (*sql.DB, error) {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, fmt.Errorf("accounts: open %s: %w", path, err)
		}
		db.SetMaxOpenConns(conns)
		db.SetMaxIdleConns(conns)
		db.SetConnMaxIdleTime(0)
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("accounts: open %s: %w", path, err)
		}
		return db, nil
	}
	// One process at a time from here through the migrations: a fresh
	// file's first connection switches it to WAL, which needs SQLite's
	// exclusive lock, and two processes doing so at once could get
	// "database is locked" without the busy timeout being honoured (seen
	// in e2e/TestUserAddTwiceAtOnceOnAFreshStore); then the migrations.
	unlock, err := lockFile(ctx, path+".migrate-lock")
	if err != nil {
		return nil, fmt.Errorf("accounts: open %s: %w", path, err)
	}
	defer unlock()
	wdb, err := open(1)
	if err != nil {
		return nil, err
	}
	s := &SQLite{wdb: wdb, now: now, path: path, holder: randomHolder()}
	if s.file, err = os.Stat(path); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("accounts: open %s: %w", path, err)
	}
	if err := migrate(ctx, wdb, path); err != nil {
		wdb.Close()
		return nil, err
	}
	if s.db, err = open(4); err != nil {
		wdb.Close()
		return nil, err
	}
	for _, p := range []struct {
		dst *(*sql.Stmt)
		db  *sql.DB
		q   string
	}{
		{&s.stmtAccountByID, s.db, "SELECT " + accountCols + " FROM accounts WHERE id = ?"},
		{&s.stmtLinkFor, s.db, "SELECT account_id, platform_user_id, linked_at, last_launch_at FROM links WHERE account_id = ?"},
		{&s.stmtTouch, s.wdb, "UPDATE links SET last_launch_at = ?1 WHERE account_id = ?2 AND (last_launch_at IS NULL OR last_launch_at <= ?1 - ?3)"},
	} {
		if *p.dst, err = p.db.PrepareContext(ctx, p.q); err != nil {
			s.Close()
			return nil, fmt.Errorf("accounts: prepare: %w", err)
		}
	}
	if err := s.prepareEventInserts(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("accounts: prepare: %w", err)
	}
	s.ops, s.stop, s.stopped = make(chan writeOp), make(chan struct{}), make(chan struct{})
	s.restart = make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.batchWrites() }()
	go func() { defer wg.Done(); s.checkpoints() }()
	go func() { wg.Wait(); close(s.stopped) }()
	return s, nil
}

// checkpointEvery is how often the WAL is folded into the database file.
// SQLite's default is to do it inside the commit that crosses 1,000 WAL
// pages: that commit then waits for the copy and its fsync, and so does
// every launch in its group, which made the launch latency's tail
// (docs/performance.md, "Decisions and their figures", has the figures).
const checkpointEvery = 250 * time.Millisecond

// restartFrames is the WAL length (16 MiB of 4 KiB pages) past which the
// writer restarts the WAL. A PASSIVE checkpoint copies pages but cannot
// rewind the WAL: only a writer that starts when every frame is copied does,
// and under steady writes that never happens, so the file grew by about
// 70 MB/s at full load (seen at 52,000 frames after 3 s).
const restartFrames = 4096

// checkpoints folds the WAL into the database in the background, off the
// writers' path. PASSIVE neither waits for nor blocks readers and writers;
// what it cannot copy now it copies next time. A failed checkpoint is
// retried at the next tick (the WAL only grows meanwhile). When the WAL is
// long it asks the writer to restart it (restartWAL).
func (s *SQLite) checkpoints() {
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	var asked int64 // the WAL length at the last restart request: an idle WAL is not asked again
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		var busy, walFrames, copied int64
		if err := s.db.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &walFrames, &copied); err == nil && copied > 0 {
			s.checkpointsRun.Add(1)
			if walFrames >= restartFrames && walFrames != asked {
				asked = walFrames
				select {
				case s.restart <- struct{}{}:
				default:
				}
			}
		}
	}
}

// ErrClosed is a write to a closed store.
var ErrClosed = errors.New("accounts: store closed")

// write runs fn in the next group commit and waits for it: every write
// that arrives while one commit runs shares the following one, so under
// load one commit carries many writes instead of each paying its own.
func (s *SQLite) write(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return s.enqueue(ctx, writeOp{fn: fn, done: make(chan error, 1)})
}

// enqueue hands op to the group commit and waits for its result.
func (s *SQLite) enqueue(ctx context.Context, op writeOp) error {
	select {
	case s.ops <- op:
	case <-s.stop:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-op.done // queued: it runs, whatever the caller's context does
}

func (s *SQLite) batchWrites() {
	for {
		var first writeOp
		select {
		case first = <-s.ops:
		case <-s.restart:
			s.restartWAL()
			continue
		case <-s.stop:
			return
		}
		// Gather what is queued, then yield and gather again for as long as
		// yielding brings more. A sender hands its op straight to this
		// goroutine, which Go then runs next, so without the yield batches
		// held 1.6 writes on average and nearly every launch paid a whole
		// commit. With it: 6.4 writes per commit at 64 launches in flight,
		// 7,400 -> 8,200-8,500 launches/s, p99 24 -> 19-20 ms. With nothing
		// else runnable the yield returns at once, so a lone write does not
		// wait.
		batch := s.drain([]writeOp{first})
		for len(batch) < maxBatch {
			n := len(batch)
			runtime.Gosched()
			if batch = s.drain(batch); len(batch) == n {
				break
			}
		}
		s.commits.Add(1)
		if err := s.commitBatch(batch); err != nil {
			// The writes that queued while this batch waited out the busy
			// timeout have waited as long: they fail with it, rather than
			// each batch waiting the timeout again (waiting stays bounded).
			for queued := s.drain(nil); len(queued) > 0; queued = s.drain(nil) {
				for _, op := range queued {
					op.done <- err
				}
			}
		}
	}
}

// restartWAL runs between group commits, on the writer connection: a
// RESTART checkpoint copies the little that the last PASSIVE one left and
// waits for readers to leave the WAL, so that the next commit writes it from
// the start (and journal_size_limit trims the file). It blocks writers while
// it runs, so it waits for readers 20 ms at most; if they are still there,
// the next PASSIVE checkpoint asks again. Errors are retried the same way.
func (s *SQLite) restartWAL() {
	ctx := context.Background()
	c, err := s.wdb.Conn(ctx) // the one writer connection, pinned for the three statements
	if err != nil {
		return
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "PRAGMA busy_timeout=20"); err != nil {
		return
	}
	defer func() { _, _ = c.ExecContext(ctx, "PRAGMA busy_timeout="+strconv.Itoa(busyTimeoutMS)) }()
	var busy, walFrames, copied int64
	if err := c.QueryRowContext(ctx, "PRAGMA wal_checkpoint(RESTART)").Scan(&busy, &walFrames, &copied); err == nil && busy == 0 {
		s.restarts.Add(1)
	}
}

// drain appends the queued writes to batch, up to maxBatch.
func (s *SQLite) drain(batch []writeOp) []writeOp {
	for len(batch) < maxBatch {
		select {
		case op := <-s.ops:
			batch = append(batch, op)
		default:
			return batch
		}
	}
	return batch
}

// commitBatch runs the batch in one transaction; if any write fails, it
// runs each on its own so one failure does not take the others with it.
// A locked database fails the whole batch, and commitBatch returns that
// error (nil otherwise).
func (s *SQLite) commitBatch(batch []writeOp) error {
	ctx := context.Background()
	run := func(ops []writeOp) error {
		tx, err := s.wdb.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		var events []*Event
		var stamps map[int64]int64 // account -> latest launch in the batch
		for _, op := range ops {
			if op.event != nil {
				events = append(events, op.event)
				if op.stamp {
					if stamps == nil {
						stamps = map[int64]int64{}
					}
					stamps[op.event.AccountID] = max(stamps[op.event.AccountID], ms(op.event.At))
				}
				continue
			}
			if err := op.fn(ctx, tx); err != nil {
				_ = tx.Rollback()
				return err
			}
		}
		ids, at := s.stamps.due(stamps)
		if err := s.insertEvents(ctx, tx, events); err != nil {
			_ = tx.Rollback()
			s.stamps.forget(ids)
			return err
		}
		for i, id := range ids {
			if _, err := tx.StmtContext(ctx, s.stmtTouch).ExecContext(ctx, at[i], id, LaunchStampEvery.Milliseconds()); err != nil {
				_ = tx.Rollback()
				s.stamps.forget(ids)
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			s.stamps.forget(ids)
			return err
		}
		return nil
	}
	err := run(batch)
	if busy(err) {
		// Another process has held the write lock for the whole busy
		// timeout: every write of the batch fails now, rather than each
		// waiting the timeout again on its own (waiting stays bounded).
		err = fmt.Errorf("%w: %w", ErrStoreBusy, err)
	}
	if err == nil || len(batch) == 1 || errors.Is(err, ErrStoreBusy) {
		for _, op := range batch {
			op.done <- err
		}
		if errors.Is(err, ErrStoreBusy) {
			return err
		}
		return nil
	}
	for _, op := range batch {
		op.done <- run([]writeOp{op})
	}
	return nil
}

// busy reports SQLite's "database is locked" (SQLITE_BUSY, SQLITE_LOCKED
// and their extended codes): another process holds the lock.
func busy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == 5 || code == 6
}

// writeErr wraps the error of a write outside the group commit, marking
// a locked database as ErrStoreBusy.
func writeErr(what string, err error) error {
	if busy(err) {
		return fmt.Errorf("accounts: %s: %w: %w", what, ErrStoreBusy, err)
	}
	return fmt.Errorf("accounts: %s: %w", what, err)
}

// migrate applies pending migrations. OpenSQLite calls it under a lock on
// a file beside the database, so two processes opening a new database at
// once (two `user add` on a fresh data folder) migrate it once: before,
// the second failed with "table accounts already exists" in 3 of 5 tries.
func migrate(ctx context.Context, db *sql.DB, path string) error {
	sub, err := fs.Sub(migrations, "migrations/sqlite")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, sub)
	if err != nil {
		return fmt.Errorf("accounts: migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("accounts: migrate %s: %w", path, err)
	}
	return nil
}

// Close waits for the writes under way and closes the database.
func (s *SQLite) Close() error {
	if s.stop != nil {
		s.closeMu.Do(func() { close(s.stop) })
		<-s.stopped
	}
	var errs []error
	stmts := []*sql.Stmt{s.stmtAccountByID, s.stmtLinkFor, s.stmtTouch}
	for _, st := range s.stmtEvents {
		stmts = append(stmts, st)
	}
	for _, st := range stmts {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.db != nil {
		errs = append(errs, s.db.Close())
	}
	return errors.Join(append(errs, s.wdb.Close())...)
}

// FreshAccountByID is AccountByID: SQLite has no cache of its own.
func (s *SQLite) FreshAccountByID(ctx context.Context, id int64) (Account, error) {
	return s.AccountByID(ctx, id)
}

// Ping checks the database answers and that its file is still the one
// opened: a removed data folder or replaced file would otherwise go
// unnoticed while the open connections write to an unlinked file.
func (s *SQLite) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return err
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrStoreGone, s.path, err)
	}
	if !os.SameFile(fi, s.file) {
		return fmt.Errorf("%w: %s was replaced by another file", ErrStoreGone, s.path)
	}
	return nil
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

func isUnique(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

const accountCols = "id, email, first_name, last_name, password_hash, is_admin, disabled, session_epoch, created_at"

func scanAccount(row scanner) (Account, error) {
	var a Account
	var created int64
	err := row.Scan(&a.ID, &a.Email, &a.FirstName, &a.LastName, &a.PasswordHash, &a.Admin, &a.Disabled, &a.SessionEpoch, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Account{}, ErrNotFound
	}
	a.CreatedAt = time.UnixMilli(created).UTC()
	return a, err
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (s *SQLite) insertAccount(ctx context.Context, x execer, n NewAccount) (int64, error) {
	if err := n.Normalize(); err != nil {
		return 0, err
	}
	now := ms(s.now())
	// The id counts on from the highest ever given (account_id_high), never
	// reusing a deleted account's.
	res, err := x.ExecContext(ctx, `INSERT INTO accounts (id, email, email_key, first_name, last_name, password_hash, is_admin, created_at, updated_at)
		VALUES ((SELECT last + 1 FROM account_id_high), ?, ?, ?, ?, ?, ?, ?, ?)`, n.Email, mailaddr.Key(n.Email), n.FirstName, n.LastName, n.PasswordHash, n.Admin, now, now)
	if isUnique(err) {
		return 0, fmt.Errorf("%w: %s", ErrEmailTaken, n.Email)
	}
	if err != nil {
		return 0, fmt.Errorf("accounts: insert: %w", err)
	}
	return res.LastInsertId()
}

// CreateAccount adds an account.
func (s *SQLite) CreateAccount(ctx context.Context, n NewAccount) (Account, error) {
	id, err := s.insertAccount(ctx, s.wdb, n)
	if err != nil {
		return Account{}, err
	}
	return s.AccountByID(ctx, id)
}

// CreateAccounts adds all accounts or none.
func (s *SQLite) CreateAccounts(ctx context.Context, ns []NewAccount) error {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return writeErr("begin", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	for i, n := range ns {
		if _, err := s.insertAccount(ctx, tx, n); err != nil {
			return fmt.Errorf("row %d: %w", i+1, err)
		}
	}
	return tx.Commit()
}

// AccountByEmail finds an account by email, case-insensitively.
func (s *SQLite) AccountByEmail(ctx context.Context, email string) (Account, error) {
	return scanAccount(s.db.QueryRowContext(ctx, "SELECT "+accountCols+" FROM accounts WHERE email_key = ?", mailaddr.Key(email)))
}

// AccountByID finds an account by id.
func (s *SQLite) AccountByID(ctx context.Context, id int64) (Account, error) {
	if err := ctx.Err(); err != nil {
		return Account{}, err
	}
	return scanAccount(s.stmtAccountByID.QueryRowContext(pointLookup(ctx), id))
}

// pointLookup is the context for a read by primary key, which every request
// makes: it keeps the context's values but not its cancellation. Such a read
// takes tens of microseconds, too short to be worth cancelling, and a
// cancellable context costs two goroutines per query (database/sql's and the
// driver's watchers); under load each waited about 0.6 ms to be scheduled
// (go tool trace), delaying the requests queued behind them.
func pointLookup(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// ListAccounts pages through accounts matching f.Search, by email.
func (s *SQLite) ListAccounts(ctx context.Context, f AccountFilter) ([]Account, int, error) {
	where, args := "", []any{}
	if like := likePattern(f.Search); like != "" {
		where = ` WHERE email_key LIKE ? ESCAPE '\' OR lower(first_name || ' ' || last_name) LIKE ? ESCAPE '\'`
		args = append(args, like, like)
	}
	var total int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM accounts"+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("accounts: count: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+accountCols+" FROM accounts"+where+" ORDER BY email_key LIMIT ? OFFSET ?", append(args, limit(f.Limit), max(f.Offset, 0))...)
	if err != nil {
		return nil, 0, fmt.Errorf("accounts: list: %w", err)
	}
	defer rows.Close()
	var out []Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, a)
	}
	return out, total, rows.Err()
}

func limit(n int) int {
	if n <= 0 || n > 500 {
		return 50
	}
	return n
}

// CountAccounts counts accounts.
func (s *SQLite) CountAccounts(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM accounts").Scan(&n)
	return n, err
}

func updateOneIn(ctx context.Context, x execer, query string, args ...any) error {
	res, err := x.ExecContext(ctx, query, args...)
	if err != nil {
		return writeErr("update", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// adminChange runs a change that might remove an active admin inside one
// write transaction with the check, so two admins demoting each other at
// once cannot both succeed.
func (s *SQLite) adminChange(ctx context.Context, id int64, removesAdmin, endsSessions bool, query string, args ...any) error {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return writeErr("begin", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if removesAdmin {
		var isActiveAdmin, others int
		err := tx.QueryRowContext(ctx, "SELECT is_admin = 1 AND disabled = 0 FROM accounts WHERE id = ?", id).Scan(&isActiveAdmin)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("accounts: read account: %w", err)
		}
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM accounts WHERE is_admin = 1 AND disabled = 0 AND id <> ?", id).Scan(&others); err != nil {
			return fmt.Errorf("accounts: count admins: %w", err)
		}
		if isActiveAdmin == 1 && others == 0 {
			return ErrLastAdmin
		}
	}
	if err := updateOneIn(ctx, tx, query, args...); err != nil {
		return err
	}
	if endsSessions {
		if _, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE account_id = ?", id); err != nil {
			return writeErr("end sessions", err)
		}
	}
	return tx.Commit()
}

// SetDisabled disables or enables an account. Disabling ends its sessions.
func (s *SQLite) SetDisabled(ctx context.Context, id int64, disabled bool) error {
	return s.adminChange(ctx, id, disabled, disabled, "UPDATE accounts SET disabled = ?, session_epoch = session_epoch + ?, updated_at = ? WHERE id = ?",
		disabled, boolInt(disabled), ms(s.now()), id)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// DeleteAccount removes an account; its link, sessions and set-password
// links go with it (ON DELETE CASCADE). The last active admin stays.
func (s *SQLite) DeleteAccount(ctx context.Context, id int64) error {
	return s.adminChange(ctx, id, true, true, "DELETE FROM accounts WHERE id = ?", id)
}

// SetAdmin grants or revokes the admin role; the last admin stays admin.
func (s *SQLite) SetAdmin(ctx context.Context, id int64, admin bool) error {
	return s.adminChange(ctx, id, !admin, false, "UPDATE accounts SET is_admin = ?, updated_at = ? WHERE id = ?", admin, ms(s.now()), id)
}

// SetPasswordHash replaces the password and ends the account's sessions.
func (s *SQLite) SetPasswordHash(ctx context.Context, id int64, hash string) error {
	if hash == "" {
		return fmt.Errorf("%w: empty password hash", ErrInvalid)
	}
	return s.adminChange(ctx, id, false, true, "UPDATE accounts SET password_hash = ?, session_epoch = session_epoch + 1, updated_at = ? WHERE id = ?", hash, ms(s.now()), id)
}

// EndSessions raises the account's session epoch and deletes its sessions.
func (s *SQLite) EndSessions(ctx context.Context, id int64) error {
	return s.adminChange(ctx, id, false, true, "UPDATE accounts SET session_epoch = session_epoch + 1, updated_at = ? WHERE id = ?", ms(s.now()), id)
}

// LinkFor returns the account's link, or ErrNotFound.
func (s *SQLite) LinkFor(ctx context.Context, accountID int64) (Link, error) {
	var l Link
	var linked int64
	var last sql.NullInt64
	if err := ctx.Err(); err != nil {
		return Link{}, err
	}
	err := s.stmtLinkFor.QueryRowContext(pointLookup(ctx), accountID).Scan(&l.AccountID, &l.PlatformUserID, &linked, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return Link{}, ErrNotFound
	}
	if err != nil {
		return Link{}, fmt.Errorf("accounts: link: %w", err)
	}
	l.LinkedAt = time.UnixMilli(linked).UTC()
	l.LastLaunchAt = fromMS(last)
	return l, nil
}

// SaveLink stores (or replaces) the account's link.
func (s *SQLite) SaveLink(ctx context.Context, accountID int64, platformUserID string) error {
	if platformUserID == "" {
		return fmt.Errorf("%w: empty platform user id", ErrInvalid)
	}
	_, err := s.wdb.ExecContext(ctx, `INSERT INTO links (account_id, platform_user_id, linked_at) VALUES (?, ?, ?)
		ON CONFLICT(account_id) DO UPDATE SET platform_user_id = excluded.platform_user_id, linked_at = excluded.linked_at
		WHERE links.platform_user_id <> excluded.platform_user_id`, accountID, platformUserID, ms(s.now()))
	if err != nil {
		return writeErr("save link", err)
	}
	return nil
}

// DeleteLink removes the link if it still points at platformUserID.
func (s *SQLite) DeleteLink(ctx context.Context, accountID int64, platformUserID string) error {
	q, args := "DELETE FROM links WHERE account_id = ?", []any{accountID}
	if platformUserID != "" {
		q += " AND platform_user_id = ?"
		args = append(args, platformUserID)
	}
	if _, err := s.wdb.ExecContext(ctx, q, args...); err != nil {
		return writeErr("delete link", err)
	}
	return nil
}

// ListLinks maps those of platformUserIDs that are linked to their account.
func (s *SQLite) ListLinks(ctx context.Context, platformUserIDs []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(platformUserIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(platformUserIDs))
	for i, id := range platformUserIDs {
		args[i] = id
	}
	rows, err := s.db.QueryContext(ctx, "SELECT platform_user_id, account_id FROM links WHERE platform_user_id IN (?"+strings.Repeat(",?", len(args)-1)+")", args...)
	if err != nil {
		return nil, fmt.Errorf("accounts: links: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var pid string
		var aid int64
		if err := rows.Scan(&pid, &aid); err != nil {
			return nil, err
		}
		out[pid] = aid
	}
	return out, rows.Err()
}

// Record appends an audit event.
func (s *SQLite) Record(ctx context.Context, e Event) error {
	return s.recordEvent(ctx, e, false)
}

// RecordLaunch records a launch event and, when it succeeded, stamps the
// account's link with its time: one write, one commit per launch.
func (s *SQLite) RecordLaunch(ctx context.Context, e Event) error {
	e.Kind = KindLaunch
	return s.recordEvent(ctx, e, e.Outcome == "ok" && e.AccountID != 0)
}

// recordEvent hands the event to the group commit and waits for it.
func (s *SQLite) recordEvent(ctx context.Context, e Event, stampLink bool) error {
	if e.At.IsZero() {
		e.At = s.now()
	}
	if err := s.enqueue(ctx, writeOp{event: &e, stamp: stampLink, done: make(chan error, 1)}); err != nil {
		return fmt.Errorf("accounts: audit: %w", err)
	}
	return nil
}

// eventInsertCols is how many columns an audit insert writes per row.
const eventInsertCols = 9

// maxEventRows is the most rows one audit insert statement writes.
const maxEventRows = 64

// insertEvents inserts events in multi-row statements of 64, 32, ... 1
// rows (prepareEventInserts): one statement per row cost the
// batch a statement execution, argument conversion and bind per event.
func (s *SQLite) insertEvents(ctx context.Context, tx *sql.Tx, events []*Event) error {
	args := make([]any, 0, eventInsertCols*min(len(events), maxEventRows))
	for len(events) > 0 {
		n := maxEventRows
		for n > len(events) {
			n /= 2
		}
		st := s.stmtEvents[n]
		args = args[:0]
		for _, e := range events[:n] {
			var account any
			if e.AccountID != 0 {
				account = e.AccountID
			}
			args = append(args, ms(e.At), e.Kind, account, e.Email, e.Outcome, e.PlatformCalls, e.Latency.Milliseconds(), e.Detail, e.RequestID)
		}
		if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, args...); err != nil {
			return err
		}
		events = events[n:]
	}
	return nil
}

// prepareEventInserts prepares the audit inserts of 1, 2, 4 ... 64 rows.
// At open: on the one writer connection, preparing inside a batch's
// transaction would wait for that connection forever.
func (s *SQLite) prepareEventInserts(ctx context.Context) error {
	s.stmtEvents = map[int]*sql.Stmt{}
	row := "(?, ?, ?, ?, ?, ?, ?, ?, ?)"
	for n := 1; n <= maxEventRows; n *= 2 {
		q := "INSERT INTO audit_log (at, kind, account_id, email, outcome, platform_calls, latency_ms, detail, request_id) VALUES " +
			strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
		st, err := s.wdb.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		s.stmtEvents[n] = st
	}
	return nil
}

// ListEvents pages through audit events, newest first.
func (s *SQLite) ListEvents(ctx context.Context, f AuditFilter) ([]Event, int, error) {
	where, args := auditWhere(f, func(int) string { return "?" })
	var total int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM audit_log"+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("accounts: count events: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+eventCols+" FROM audit_log"+where+" ORDER BY id DESC LIMIT ? OFFSET ?", append(args, limit(f.Limit), max(f.Offset, 0))...)
	if err != nil {
		return nil, 0, fmt.Errorf("accounts: events: %w", err)
	}
	defer rows.Close()
	out, err := collectEvents(rows)
	return out, total, err
}

// PruneEvents deletes events older than before.
func (s *SQLite) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.wdb.ExecContext(ctx, "DELETE FROM audit_log WHERE at < ?", ms(before))
	if err != nil {
		return 0, fmt.Errorf("accounts: prune: %w", err)
	}
	return res.RowsAffected()
}

var _ Store = (*SQLite)(nil)
