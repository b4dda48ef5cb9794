package accounts

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"strconv"
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

	"github.com/ssobridge/ssobridge/mailaddr"
)

// Postgres is the PostgreSQL backend of Store, for several instances on
// one database: everything they must agree on (accounts, links, audit,
// regulation, sessions, the provisioning lock) is in the database. pgx
// prepares each statement once per connection and reuses it.
type Postgres struct {
	pool         *pgxpool.Pool
	now          func() time.Time
	provisioning keyLocks // this process's waiters for an email's advisory lock

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
	e     Event
	stamp bool // stamp the account's link with e.At
}

// changesChannel carries, on commit, what a write voided: "a:<account id>"
// (the account and its sessions), "s:<session id>", "l:<account id>" (its
// link). Every instance's cache drops it at once (see OnChange).
const changesChannel = "ssobridge_changes"

// notify queues a change notice in the transaction (sent on commit).
func notify(ctx context.Context, tx pgx.Tx, change string) error {
	_, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", changesChannel, change)
	return err
}

// listenerPing is how often the LISTEN connection proves it is caught up.
const listenerPing = 250 * time.Millisecond

// OnChange calls changed with each change notice any instance commits,
// from a connection of its own that LISTENs, and caughtUp(t) once every
// notice committed before t has been passed to changed: a ping round trip
// on the connection proves that, at least every listenerPing. After a
// failure it reconnects, and changed gets "*" (everything may have changed
// meanwhile). OnChange returns once the first LISTEN is in place (or, at
// most 5 s, has failed), so no change committed after it is missed; it
// runs until Close.
func (s *Postgres) OnChange(changed func(change string), caughtUp func(time.Time)) {
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	first := make(chan struct{})
	var once sync.Once
	ready := func() { once.Do(func() { close(first) }) }
	s.listening.Add(1)
	go func() {
		defer s.listening.Done()
		for wait := 10 * time.Millisecond; ctx.Err() == nil; wait = min(2*wait, 2*time.Second) {
			if s.listen(ctx, changed, caughtUp, ready) {
				wait = 10 * time.Millisecond
			}
			ready()
			changed("*")
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
	}()
	select {
	case <-first:
	case <-time.After(5 * time.Second):
	}
}

// listen holds one LISTEN connection until it fails or ctx ends (calling
// listening once it is in place); it reports whether it was listening.
func (s *Postgres) listen(ctx context.Context, changed func(string), caughtUp func(time.Time), listening func()) bool {
	conn, err := pgx.ConnectConfig(ctx, s.listenCfg)
	if err != nil {
		return false
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+changesChannel); err != nil {
		return false
	}
	s.listenerPID.Store(conn.PgConn().PID())
	listening()
	done, cancelDone := context.WithCancel(ctx)
	cancelDone() // drains only what has arrived
	nextPing := time.Now()
	for {
		if now := time.Now(); !now.Before(nextPing) {
			// The ping's answer comes after every notice committed before
			// it was sent: pass those on, then say so.
			sent := now
			if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
				return true
			}
			for n, err := conn.WaitForNotification(done); err == nil; n, err = conn.WaitForNotification(done) {
				changed(n.Payload)
			}
			caughtUp(sent)
			nextPing = sent.Add(listenerPing)
		}
		wctx, cancel := context.WithDeadline(ctx, nextPing)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			changed(n.Payload)
		case ctx.Err() != nil:
			return true
		case !pgconn.Timeout(err) && !errors.Is(err, context.DeadlineExceeded):
			return true
		}
	}
}

// defaultPoolConns is the pool size unless the DSN sets pool_max_conns:
// pgx's default (the number of cores, at least 4) is too few for launches
// waiting on the platform while sign-ins write.
const defaultPoolConns = 16

// OpenPostgres connects to the PostgreSQL URL dsn and applies pending
// migrations under an advisory lock, so instances starting together
// migrate once.
func OpenPostgres(ctx context.Context, dsn string, now func() time.Time) (*Postgres, error) {
	if now == nil {
		now = time.Now
	}
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message can quote the DSN, password and all: say only what is wrong.
		return nil, errors.New("accounts: store.dsn is not a PostgreSQL URL such as postgres://user:pass@host:5432/db?sslmode=require")
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		pc.MaxConns = defaultPoolConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("accounts: connect to PostgreSQL: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("accounts: connect to PostgreSQL at %s:%d: %w", pc.ConnConfig.Host, pc.ConnConfig.Port, err)
	}
	if err := migratePostgres(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	s := &Postgres{pool: pool, now: now, listenCfg: pc.ConnConfig.Copy()}
	s.audits = newGroupCommit(maxBatch, s.commitAudits)
	return s, nil
}

// migratePostgres applies the postgres migrations. The lock is keyed by
// the schema migrated, so instances on one schema migrate once while
// separate schemas (one per test) do not wait for each other.
func migratePostgres(ctx context.Context, pool *pgxpool.Pool) error {
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
	if _, err := p.Up(ctx); err != nil {
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
	s.pool.Close()
	return nil
}

// Ping checks the database answers.
func (s *Postgres) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

func pgUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// notFoundIfNoRows maps pgx's "no rows" to ErrNotFound.
func notFoundIfNoRows(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// inTx runs fn in a transaction, committed when fn returns nil.
func (s *Postgres) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, fn)
}

func (s *Postgres) insertAccount(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}, n NewAccount) (int64, error) {
	if err := n.Normalize(); err != nil {
		return 0, err
	}
	now := ms(s.now())
	var id int64
	err := q.QueryRow(ctx, `INSERT INTO accounts (email, email_key, first_name, last_name, password_hash, is_admin, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING id`, n.Email, mailaddr.Key(n.Email), n.FirstName, n.LastName, n.PasswordHash, n.Admin, now).Scan(&id)
	if pgUnique(err) {
		return 0, fmt.Errorf("%w: %s", ErrEmailTaken, n.Email)
	}
	if err != nil {
		return 0, fmt.Errorf("accounts: insert: %w", err)
	}
	return id, nil
}

// CreateAccount adds an account.
func (s *Postgres) CreateAccount(ctx context.Context, n NewAccount) (Account, error) {
	id, err := s.insertAccount(ctx, s.pool, n)
	if err != nil {
		return Account{}, err
	}
	return s.AccountByID(ctx, id)
}

// CreateAccounts adds all accounts or none.
func (s *Postgres) CreateAccounts(ctx context.Context, ns []NewAccount) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		for i, n := range ns {
			if _, err := s.insertAccount(ctx, tx, n); err != nil {
				return fmt.Errorf("row %d: %w", i+1, err)
			}
		}
		return nil
	})
}

// AccountByEmail finds an account by email, case-insensitively.
func (s *Postgres) AccountByEmail(ctx context.Context, email string) (Account, error) {
	a, err := scanAccount(s.pool.QueryRow(ctx, "SELECT "+accountCols+" FROM accounts WHERE email_key = $1", mailaddr.Key(email)))
	return a, notFoundIfNoRows(err)
}

// AccountByID finds an account by id.
func (s *Postgres) AccountByID(ctx context.Context, id int64) (Account, error) {
	a, err := scanAccount(s.pool.QueryRow(ctx, "SELECT "+accountCols+" FROM accounts WHERE id = $1", id))
	return a, notFoundIfNoRows(err)
}

// FreshAccountByID is AccountByID: the backend has no cache of its own.
func (s *Postgres) FreshAccountByID(ctx context.Context, id int64) (Account, error) {
	return s.AccountByID(ctx, id)
}

// ListAccounts pages through accounts matching f.Search, by email.
func (s *Postgres) ListAccounts(ctx context.Context, f AccountFilter) ([]Account, int, error) {
	where, args := "", []any{}
	if like := likePattern(f.Search); like != "" {
		where = ` WHERE email_key LIKE $1 ESCAPE '\' OR lower(first_name || ' ' || last_name) LIKE $1 ESCAPE '\'`
		args = append(args, like)
	}
	var total int
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM accounts"+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("accounts: count: %w", err)
	}
	n := len(args)
	rows, err := s.pool.Query(ctx, fmt.Sprintf("SELECT %s FROM accounts%s ORDER BY email_key LIMIT $%d OFFSET $%d", accountCols, where, n+1, n+2),
		append(args, limit(f.Limit), max(f.Offset, 0))...)
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

// CountAccounts counts accounts.
func (s *Postgres) CountAccounts(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, "SELECT count(*) FROM accounts").Scan(&n)
	return n, err
}

// adminChange runs a change that might remove an active admin in one
// transaction with the check; the account row is locked first (FOR
// UPDATE) and so are the other admins, so two admins demoting each other
// at once cannot both succeed. endsSessions deletes the account's sessions
// in the same transaction.
func (s *Postgres) adminChange(ctx context.Context, id int64, removesAdmin, endsSessions bool, query string, args ...any) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var activeAdmin bool
		err := tx.QueryRow(ctx, "SELECT is_admin AND NOT disabled FROM accounts WHERE id = $1 FOR UPDATE", id).Scan(&activeAdmin)
		if err != nil {
			return notFoundIfNoRows(err)
		}
		if removesAdmin && activeAdmin {
			var others int
			// Locks every active admin row, so concurrent demotions queue.
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM (SELECT id FROM accounts WHERE is_admin AND NOT disabled AND id <> $1 FOR UPDATE) a", id).Scan(&others); err != nil {
				return fmt.Errorf("accounts: count admins: %w", err)
			}
			if others == 0 {
				return ErrLastAdmin
			}
		}
		tag, err := tx.Exec(ctx, query, args...)
		if err != nil {
			return fmt.Errorf("accounts: update: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		if endsSessions {
			if _, err := tx.Exec(ctx, "DELETE FROM sessions WHERE account_id = $1", id); err != nil {
				return fmt.Errorf("accounts: end sessions: %w", err)
			}
		}
		return notify(ctx, tx, "a:"+strconv.FormatInt(id, 10))
	})
}

// SetDisabled disables or enables an account. Disabling ends its sessions.
func (s *Postgres) SetDisabled(ctx context.Context, id int64, disabled bool) error {
	return s.adminChange(ctx, id, disabled, disabled, "UPDATE accounts SET disabled = $1, session_epoch = session_epoch + $2, updated_at = $3 WHERE id = $4",
		disabled, boolInt(disabled), ms(s.now()), id)
}

// DeleteAccount removes an account; its link, sessions and set-password
// links go with it (ON DELETE CASCADE). The last active admin stays.
func (s *Postgres) DeleteAccount(ctx context.Context, id int64) error {
	return s.adminChange(ctx, id, true, true, "DELETE FROM accounts WHERE id = $1", id)
}

// SetAdmin grants or revokes the admin role; the last admin stays admin.
func (s *Postgres) SetAdmin(ctx context.Context, id int64, admin bool) error {
	return s.adminChange(ctx, id, !admin, false, "UPDATE accounts SET is_admin = $1, updated_at = $2 WHERE id = $3", admin, ms(s.now()), id)
}

// SetPasswordHash replaces the password and ends the account's sessions.
func (s *Postgres) SetPasswordHash(ctx context.Context, id int64, hash string) error {
	if hash == "" {
		return fmt.Errorf("%w: empty password hash", ErrInvalid)
	}
	return s.adminChange(ctx, id, false, true, "UPDATE accounts SET password_hash = $1, session_epoch = session_epoch + 1, updated_at = $2 WHERE id = $3", hash, ms(s.now()), id)
}

// EndSessions raises the account's session epoch and deletes its sessions.
func (s *Postgres) EndSessions(ctx context.Context, id int64) error {
	return s.adminChange(ctx, id, false, true, "UPDATE accounts SET session_epoch = session_epoch + 1, updated_at = $1 WHERE id = $2", ms(s.now()), id)
}

// LinkFor returns the account's link, or ErrNotFound.
func (s *Postgres) LinkFor(ctx context.Context, accountID int64) (Link, error) {
	var l Link
	var linked int64
	var last *int64
	err := s.pool.QueryRow(ctx, "SELECT account_id, platform_user_id, linked_at, last_launch_at FROM links WHERE account_id = $1", accountID).
		Scan(&l.AccountID, &l.PlatformUserID, &linked, &last)
	if err != nil {
		if err = notFoundIfNoRows(err); errors.Is(err, ErrNotFound) {
			return Link{}, err
		}
		return Link{}, fmt.Errorf("accounts: link: %w", err)
	}
	l.LinkedAt = time.UnixMilli(linked).UTC()
	if last != nil {
		l.LastLaunchAt = time.UnixMilli(*last).UTC()
	}
	return l, nil
}

// SaveLink stores (or replaces) the account's link.
func (s *Postgres) SaveLink(ctx context.Context, accountID int64, platformUserID string) error {
	if platformUserID == "" {
		return fmt.Errorf("%w: empty platform user id", ErrInvalid)
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO links (account_id, platform_user_id, linked_at) VALUES ($1, $2, $3)
		ON CONFLICT (account_id) DO UPDATE SET platform_user_id = excluded.platform_user_id, linked_at = excluded.linked_at
		WHERE links.platform_user_id <> excluded.platform_user_id`, accountID, platformUserID, ms(s.now())); err != nil {
			return err
		}
		return notify(ctx, tx, "l:"+strconv.FormatInt(accountID, 10))
	})
	if err != nil {
		return fmt.Errorf("accounts: save link: %w", err)
	}
	return nil
}

// DeleteLink removes the link if it still points at platformUserID.
func (s *Postgres) DeleteLink(ctx context.Context, accountID int64, platformUserID string) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM links WHERE account_id = $1 AND ($2 = '' OR platform_user_id = $2)", accountID, platformUserID); err != nil {
			return err
		}
		return notify(ctx, tx, "l:"+strconv.FormatInt(accountID, 10))
	})
	if err != nil {
		return fmt.Errorf("accounts: delete link: %w", err)
	}
	return nil
}

// ListLinks maps those of platformUserIDs that are linked to their account.
func (s *Postgres) ListLinks(ctx context.Context, platformUserIDs []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(platformUserIDs) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, "SELECT platform_user_id, account_id FROM links WHERE platform_user_id = ANY($1)", platformUserIDs)
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

// Record appends an audit event.
func (s *Postgres) Record(ctx context.Context, e Event) error { return s.recordEvent(ctx, e, false) }

// RecordLaunch records a launch event and, when it succeeded, stamps the
// account's link with its time (see LaunchStampEvery), in the same commit.
func (s *Postgres) RecordLaunch(ctx context.Context, e Event) error {
	e.Kind = KindLaunch
	return s.recordEvent(ctx, e, e.Outcome == "ok" && e.AccountID != 0)
}

// recordEvent hands the event to the group commit and waits for it: events
// that arrive while one batch commits share the next, so under load a
// commit carries many launches instead of each paying its own (at 64 in
// flight, 24 events a commit: 2,159 -> 5,347 launches/s, docs/performance.md).
// It returns once the row is committed: an acknowledged launch has its
// audit row. One batch commits at a time: with four writers, batches were
// smaller and launches/s fell (6,213 -> 4,196-4,882 on 2 cores).
func (s *Postgres) recordEvent(ctx context.Context, e Event, stampLink bool) error {
	if e.At.IsZero() {
		e.At = s.now()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.audits.do(auditOp{e: e, stamp: stampLink}); err != nil { // queued: it runs, whatever the caller's context does
		return fmt.Errorf("accounts: audit: %w", err)
	}
	return nil
}

// commitAudits writes the batch in one statement; if that fails, each op
// on its own, so one bad event does not fail the others.
func (s *Postgres) commitAudits(batch []auditOp) []error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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
	_, err := s.pool.Exec(ctx, insertEventsAndStamp, at, kind, account, email, outcome, calls, latency, detail, reqID, stampIDs, stampAt, LaunchStampEvery.Milliseconds())
	if err != nil {
		s.stamps.forget(stampIDs)
	}
	return err
}

// ListEvents pages through audit events, newest first.
func (s *Postgres) ListEvents(ctx context.Context, f AuditFilter) ([]Event, int, error) {
	where, args := auditWhere(f, func(n int) string { return fmt.Sprintf("$%d", n) })
	var total int
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM audit_log"+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("accounts: count events: %w", err)
	}
	n := len(args)
	rows, err := s.pool.Query(ctx, fmt.Sprintf("SELECT %s FROM audit_log%s ORDER BY id DESC LIMIT $%d OFFSET $%d", eventCols, where, n+1, n+2),
		append(args, limit(f.Limit), max(f.Offset, 0))...)
	if err != nil {
		return nil, 0, fmt.Errorf("accounts: events: %w", err)
	}
	defer rows.Close()
	out, err := collectEvents(rows)
	return out, total, err
}

// PruneEvents deletes events older than before.
func (s *Postgres) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, "DELETE FROM audit_log WHERE at < $1", ms(before))
	if err != nil {
		return 0, fmt.Errorf("accounts: prune: %w", err)
	}
	return tag.RowsAffected(), nil
}

// CreateSession records a new session.
func (s *Postgres) CreateSession(ctx context.Context, sess Session) error {
	if err := checkSession(&sess); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, "INSERT INTO sessions ("+sessionCols+") VALUES ($1, $2, $3, $4, $5)",
		sess.ID, sess.AccountID, ms(sess.CreatedAt), ms(sess.LastSeenAt), sess.UserAgent)
	if err != nil {
		return fmt.Errorf("accounts: create session: %w", err)
	}
	return nil
}

// SessionByID returns a session that has not ended.
func (s *Postgres) SessionByID(ctx context.Context, id string) (Session, error) {
	sess, err := scanSession(s.pool.QueryRow(ctx, "SELECT "+sessionCols+" FROM sessions WHERE id = $1", id))
	if err = notFoundIfNoRows(err); err != nil && !errors.Is(err, ErrNotFound) {
		return Session{}, fmt.Errorf("accounts: session: %w", err)
	}
	return sess, err
}

// TouchSession moves the session's last-seen time.
func (s *Postgres) TouchSession(ctx context.Context, id string, at time.Time) error {
	_, err := s.pool.Exec(ctx, "UPDATE sessions SET last_seen_at = $1 WHERE id = $2", ms(at), id)
	return err
}

// EndSession deletes one of the account's sessions.
func (s *Postgres) EndSession(ctx context.Context, accountID int64, id string) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM sessions WHERE id = $1 AND account_id = $2", id, accountID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		return notify(ctx, tx, "s:"+id)
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("accounts: end session: %w", err)
	}
	return err
}

// ListSessions lists the account's sessions, most recently seen first.
func (s *Postgres) ListSessions(ctx context.Context, accountID int64) ([]Session, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+sessionCols+" FROM sessions WHERE account_id = $1 ORDER BY last_seen_at DESC, created_at DESC", accountID)
	if err != nil {
		return nil, fmt.Errorf("accounts: list sessions: %w", err)
	}
	defer rows.Close()
	return collectSessions(rows)
}

// PruneSessions deletes sessions last seen before a time.
func (s *Postgres) PruneSessions(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, "DELETE FROM sessions WHERE last_seen_at < $1", ms(before))
	if err != nil {
		return 0, fmt.Errorf("accounts: prune sessions: %w", err)
	}
	return tag.RowsAffected(), nil
}

// LockProvisioning holds a PostgreSQL advisory lock keyed by the
// normalised email on a connection of its own until unlock: every instance
// on the database waits for it. Waiters in this process queue in memory
// first, so they do not each hold a pooled connection.
func (s *Postgres) LockProvisioning(ctx context.Context, email string) (func(), error) {
	key := regKey(email)
	unlockLocal, err := s.provisioning.lock(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("accounts: provisioning lock: %w", err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		unlockLocal()
		return nil, fmt.Errorf("accounts: provisioning lock: %w", err)
	}
	k := lockKey("ssobridge-provision", key)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", k); err != nil {
		// A cancelled wait may leave the connection in doubt: drop it.
		_ = conn.Conn().Close(context.Background())
		conn.Release()
		unlockLocal()
		return nil, fmt.Errorf("accounts: provisioning lock: %w", err)
	}
	return onlyOnce(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", k); err != nil {
			// Closing the session releases its advisory locks.
			_ = conn.Conn().Close(ctx)
		}
		conn.Release()
		unlockLocal()
	}), nil
}

var _ Store = (*Postgres)(nil)
