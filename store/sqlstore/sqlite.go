package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/ssobridge/ssobridge/store"
	"modernc.org/sqlite" // pure-Go SQLite driver, no cgo
	sqlite3 "modernc.org/sqlite/lib"
)

// migrations holds each dialect's migrations, in migrations/sqlite and
// migrations/postgres.
//
//go:embed migrations
var migrations embed.FS

// SQLite is the SQLite backend of Store: sqlStore's queries, with every
// write going through one connection in group commits (Go queues writers,
// so SQLite never makes them sleep on its lock; sqlite_writer.go) and reads
// on a pool beside it (WAL lets them run while a write commits).
type SQLite struct {
	sqlStore
	wdb  *sql.DB     // writes: one connection
	path string      // the database file
	file os.FileInfo // as opened: Ping checks it is still there

	stmtTouch  *sql.Stmt
	stmtEvents map[int]*sql.Stmt // multi-row audit inserts by row count (powers of two)
	stamps     stampMemo         // the link stamps this process made lately

	// Group commit of every write: see write.
	ops     chan writeOp
	stop    chan struct{}
	stopped chan struct{} // closed when batchWrites and checkpoints have returned
	closeMu sync.Once

	checkpointsRun atomic.Int64  // background checkpoints that copied WAL frames into the database
	commits        atomic.Int64  // group commits run
	restart        chan struct{} // checkpoints -> batchWrites: the WAL is long, restart it
	restarts       atomic.Int64  // WAL restarts done
}

// sqliteDialect is where SQLite's SQL differs from PostgreSQL's. Accounts
// are numbered on from the highest id ever given (account_id_high), so a
// deleted account's id is never reused.
func sqliteDialect() dialect {
	return dialect{
		questionMarks:          true,
		unique:                 sqliteUnique,
		accountIDCol:           "id, ",
		accountIDValue:         "(SELECT last + 1 FROM account_id_high), ",
		pointReadsIgnoreCancel: true,
	}
}

// busyTimeoutMS is how long a connection waits for another process's lock.
const busyTimeoutMS = 5000

// OpenSQLite opens (creating if needed) the database file at path and
// applies pending migrations.
func OpenSQLite(ctx context.Context, path string, now func() time.Time, opts ...Option) (*SQLite, error) {
	if now == nil {
		now = time.Now
	}
	o := newOptions(opts)
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
	s := &SQLite{sqlStore: sqlStore{d: sqliteDialect(), now: now, loneWritesInTx: true, timeout: o.timeout, holder: randomHolder()}, wdb: wdb, path: path}
	s.inTx, s.commitEvent = s.write, s.recordEvent
	if s.file, err = os.Stat(path); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("accounts: open %s: %w", path, err)
	}
	if err := migrate(ctx, wdb, path, o.logger); err != nil {
		wdb.Close()
		return nil, err
	}
	if s.db, err = open(4); err != nil {
		wdb.Close()
		return nil, err
	}
	if err := s.prepare(ctx); err != nil {
		s.Close()
		return nil, err
	}
	// The writer's own statements, prepared on its one connection now:
	// preparing inside a batch's transaction would wait for that
	// connection forever.
	if s.stmtTouch, err = s.wdb.PrepareContext(ctx, "UPDATE links SET last_launch_at = ?1 WHERE account_id = ?2 AND (last_launch_at IS NULL OR last_launch_at <= ?1 - ?3)"); err != nil {
		s.Close()
		return nil, fmt.Errorf("accounts: prepare: %w", err)
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

// sqliteUnique reports a violated UNIQUE or PRIMARY KEY constraint.
func sqliteUnique(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code()
	return code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// migrate applies pending migrations. OpenSQLite calls it under a lock on
// a file beside the database, so two processes opening a new database at
// once (two `user add` on a fresh data folder) migrate it once: before,
// the second failed with "table accounts already exists" in 3 of 5 tries.
func migrate(ctx context.Context, db *sql.DB, path string, logger *slog.Logger) error {
	sub, err := fs.Sub(migrations, "migrations/sqlite")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, sub)
	if err != nil {
		return fmt.Errorf("accounts: migrations: %w", err)
	}
	if err := upMigrations(ctx, p, logger, path); err != nil {
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
	errs := []error{s.closeStatements()}
	stmts := []*sql.Stmt{s.stmtTouch}
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

// Ping checks the database answers and that its file is still the one
// opened: a removed data folder or replaced file would otherwise go
// unnoticed while the open connections write to an unlinked file.
func (s *SQLite) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return err
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", store.ErrStoreGone, s.path, err)
	}
	if !os.SameFile(fi, s.file) {
		return fmt.Errorf("%w: %s was replaced by another file", store.ErrStoreGone, s.path)
	}
	return nil
}

var _ store.Store = (*SQLite)(nil)
