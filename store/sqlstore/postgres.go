package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/ssobridge/ssobridge/store"
)

// Postgres is the PostgreSQL backend of Store, for several instances on
// one database: everything they must agree on (accounts, links, audit,
// regulation, sessions, the provisioning lock) is in the database.
// sqlStore's queries run through pgx's database/sql adapter on the same
// pool that this file uses directly for what is PostgreSQL's own: audit
// events in one batched insert, the migrations' advisory lock, LISTEN
// (postgres_listen.go).
// pgx prepares each statement once per connection and reuses it (so
// nothing here is prepared by hand).
type Postgres struct {
	sqlStore
	pool *pgxpool.Pool

	listenCfg   *pgx.ConnConfig // for the LISTEN connection
	listenerPID atomic.Uint32   // its backend, while connected
	stop        context.CancelFunc
	listening   sync.WaitGroup

	// Group commit of audit events (see recordEvent).
	stamps stampMemo // the link stamps this process made lately
	audits *groupCommit[auditOp]
}

// auditOp is one audit event waiting for the next group commit.
type auditOp struct {
	e     store.Event
	stamp bool // stamp the account's link with e.At
}

// postgresDialect is where PostgreSQL's SQL differs from SQLite's.
func postgresDialect() dialect {
	return dialect{
		unique:     pgUnique,
		forUpdate:  " FOR UPDATE",
		notify:     notify,
		lockCounts: lockCounts,
	}
}

func pgUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// lockCounts takes the transaction's advisory locks on keys, in order.
func lockCounts(ctx context.Context, tx *sql.Tx, keys []int64) error {
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", k); err != nil {
			return err
		}
	}
	return nil
}

// writeTx runs fn in a transaction of its own, committed when fn returns
// nil. A transaction PostgreSQL chose as a deadlock's victim or could not
// serialize is run again from the start (a few times): it changed nothing,
// and its locks are gone.
func (s *Postgres) writeTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	var err error
	for range txAttempts {
		if err = s.writeTxOnce(ctx, fn); !pgRetryable(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// txAttempts bounds writeTx's runs of one transaction.
const txAttempts = 4

func (s *Postgres) writeTxOnce(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(ctx, tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// pgRetryable reports a deadlock (40P01) or a serialization failure
// (40001): the transaction was rolled back and may run again.
func pgRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// defaultPoolConns is the pool size unless the DSN sets pool_max_conns:
// pgx's default (the number of cores, at least 4) is too few for launches
// waiting on the platform while sign-ins write.
const defaultPoolConns = 16

// OpenPostgres connects to the PostgreSQL URL dsn and applies pending
// migrations under an advisory lock, so instances starting together
// migrate once.
func OpenPostgres(ctx context.Context, dsn string, now func() time.Time, opts ...Option) (*Postgres, error) {
	if now == nil {
		now = time.Now
	}
	o := newOptions(opts)
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message can quote the DSN, password and all: say only what is wrong.
		return nil, errors.New("accounts: store.dsn is not a PostgreSQL URL such as postgres://user:pass@host:5432/db?sslmode=require")
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		pc.MaxConns = defaultPoolConns
	}
	if !strings.Contains(dsn, "connect_timeout") {
		// A black-holed host would otherwise hold a connection attempt for
		// the operating system's minutes. Requests are bounded by their own
		// deadline (the guard's); this bounds the rest (the LISTEN
		// connection, the guard's pings during an outage), and generously:
		// an attempt cut short while the server is frozen is one more in
		// its backlog when it resumes, delaying every other.
		pc.ConnConfig.ConnectTimeout = 5 * o.timeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("accounts: connect to PostgreSQL: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("accounts: connect to PostgreSQL at %s:%d: %w", pc.ConnConfig.Host, pc.ConnConfig.Port, err)
	}
	if err := migratePostgres(ctx, pool, o.logger); err != nil {
		pool.Close()
		return nil, err
	}
	s := &Postgres{sqlStore: sqlStore{d: postgresDialect(), db: stdlib.OpenDBFromPool(pool), now: now, timeout: o.timeout, holder: randomHolder()}, pool: pool, listenCfg: pc.ConnConfig.Copy()}
	s.inTx, s.commitEvent = s.writeTx, s.recordEvent
	s.audits = newGroupCommit(maxBatch, s.commitAudits)
	return s, nil
}

// migratePostgres applies the postgres migrations. The lock is keyed by
// the schema migrated, so instances on one schema migrate once while
// separate schemas (one per test) do not wait for each other.
func migratePostgres(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	var schema string
	if err := pool.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return fmt.Errorf("accounts: migrate: %w", err)
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(lockKey("ssobridge-migrate", schema)), lock.WithLockTimeout(1, 300))
	if err != nil {
		return fmt.Errorf("accounts: migrate: %w", err)
	}
	sub, err := fs.Sub(migrations, "migrations/postgres")
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(pool) // closing it leaves the pool open
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("accounts: migrations: %w", err)
	}
	if err := upMigrations(ctx, p, logger, "PostgreSQL schema "+schema); err != nil {
		return fmt.Errorf("accounts: migrate PostgreSQL schema %s: %w", schema, err)
	}
	return nil
}

// lockKey is a PostgreSQL advisory lock key: the same on every instance
// for the same parts.
func lockKey(parts ...string) int64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return int64(h.Sum64())
}

// Close waits for the audit writes under way, stops listening and closes
// the pool.
func (s *Postgres) Close() error {
	s.audits.close()
	if s.stop != nil {
		s.stop()
		s.listening.Wait()
	}
	err := s.db.Close() // leaves the pool open
	s.pool.Close()
	return err
}

// Ping checks the database answers.
func (s *Postgres) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// insertEvents writes a batch of audit events in one statement: one round
// trip and one commit for the whole batch.
const insertEvents = `INSERT INTO audit_log (at, kind, account_id, email, outcome, platform_calls, latency_ms, detail, request_id)
	SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::integer[], $7::bigint[], $8::text[], $9::text[])`

// insertEventsAndStamp also stamps the links of the successful launches
// in the batch whose stamp is due (see LaunchStampEvery), in the same
// statement.
const insertEventsAndStamp = `WITH ev AS (` + insertEvents + `)
UPDATE links SET last_launch_at = s.at FROM unnest($10::bigint[], $11::bigint[]) AS s(account_id, at)
WHERE links.account_id = s.account_id AND (links.last_launch_at IS NULL OR links.last_launch_at <= s.at - $12)`

// recordEvent hands the event to the group commit and waits for it: events
// that arrive while one batch commits share the next, so under load a
// commit carries many launches instead of each paying its own. It returns
// once the row is committed: an acknowledged launch has its audit row. One
// batch commits at a time: with more writers, batches were smaller and
// fewer launches a second got through (docs/performance.md, "Decisions and
// their figures").
func (s *Postgres) recordEvent(ctx context.Context, e store.Event, stampLink bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.audits.do(auditOp{e: e, stamp: stampLink}) // queued: it runs, whatever the caller's context does
}

// commitAudits writes the batch in one statement; if that fails, each op
// on its own, so one bad event does not fail the others.
func (s *Postgres) commitAudits(batch []auditOp) []error {
	// Bounded by half the store's timeout: a frozen database fails the
	// batch rather than holding every launch in it, and a launch queued
	// behind a failing batch still has its answer within the timeout.
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout/2)
	defer cancel()
	errs := make([]error, len(batch))
	err := s.execAudits(ctx, batch)
	if err == nil || len(batch) == 1 {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	for i := range batch {
		errs[i] = s.execAudits(ctx, batch[i:i+1])
	}
	return errs
}

func (s *Postgres) execAudits(ctx context.Context, batch []auditOp) error {
	n := len(batch)
	at, account, calls, latency := make([]int64, n), make([]*int64, n), make([]int32, n), make([]int64, n)
	kind, email, outcome, detail, reqID := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	stamps := map[int64]int64{} // account -> latest launch in the batch
	for i, op := range batch {
		e := op.e
		at[i], kind[i], email[i], outcome[i], calls[i], latency[i], detail[i], reqID[i] =
			ms(e.At), e.Kind, e.Email, e.Outcome, int32(e.PlatformCalls), e.Latency.Milliseconds(), e.Detail, e.RequestID
		if e.AccountID != 0 {
			account[i] = &batch[i].e.AccountID
		}
		if op.stamp && ms(e.At) > stamps[e.AccountID] {
			stamps[e.AccountID] = ms(e.At)
		}
	}
	stampIDs, stampAt := s.stamps.due(stamps)
	if len(stampIDs) == 0 {
		// Nothing to stamp: the insert alone, without the join on links
		// (most batches, since a link is stamped once a minute at most).
		_, err := s.pool.Exec(ctx, insertEvents, at, kind, account, email, outcome, calls, latency, detail, reqID)
		return err
	}
	_, err := s.pool.Exec(ctx, insertEventsAndStamp, at, kind, account, email, outcome, calls, latency, detail, reqID, stampIDs, stampAt, store.LaunchStampEvery.Milliseconds())
	if err != nil {
		s.stamps.forget(stampIDs)
	}
	return err
}

var _ store.Store = (*Postgres)(nil)
