package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/store"
)

// Option adjusts how a backend is opened.
type Option func(*options)

type options struct {
	timeout time.Duration
	logger  *slog.Logger
}

func newOptions(opts []Option) options {
	o := options{timeout: store.DefaultTimeout, logger: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithTimeout (store.timeout) bounds what the backend does on its own on a
// caller's behalf as Guard bounds the calls: each try of the provisioning
// lease; on PostgreSQL an audit batch's commit, and five times it a
// connection attempt made for no request. DefaultTimeout otherwise.
func WithTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.timeout = d
		}
	}
}

// WithLogger is where opening the store says what its migrations did (a
// line per start that migrated, and one when the schema is newer than
// this binary's).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// upMigrations applies p's pending migrations and says what they did:
// "store migrated 18 → 20 (roster_waiting, platform_slow)" with the time
// it took; a schema newer than this binary's is said, and left as it is.
func upMigrations(ctx context.Context, p *goose.Provider, logger *slog.Logger, where string) error {
	from, err := p.GetDBVersion(ctx)
	if err != nil {
		return err
	}
	srcs := p.ListSources()
	latest := int64(0)
	if len(srcs) > 0 {
		latest = srcs[len(srcs)-1].Version
	}
	if from > latest {
		logger.Warn("the store's schema is newer than this version's: it runs on it (a newer version migrated it; see docs/deploy.md)",
			"store", where, "schema", from, "this_version_knows", latest)
		return nil
	}
	results, err := p.Up(ctx)
	if err != nil {
		return err
	}
	if len(results) == 0 {
		return nil
	}
	var names []string
	var took time.Duration
	for _, r := range results {
		name := strings.TrimSuffix(filepath.Base(r.Source.Path), ".sql")
		if _, rest, ok := strings.Cut(name, "_"); ok {
			name = rest
		}
		names = append(names, name)
		took += r.Duration
	}
	to := results[len(results)-1].Source.Version
	logger.Info(fmt.Sprintf("store migrated %d → %d (%s)", from, to, strings.Join(names, ", ")), "store", where, "took", took.Round(time.Millisecond))
	return nil
}

// sqlStore is the part of Store that SQLite and PostgreSQL answer with the
// same SQL, each query written once over database/sql (PostgreSQL's through
// pgx's stdlib adapter) in PostgreSQL's placeholders; dialect holds what
// really differs. A backend embeds it and adds what is its own: how writes
// commit, audit events, the provisioning lock, opening and closing.
type sqlStore struct {
	d   dialect
	db  *sql.DB // reads; on PostgreSQL, writes too
	now func() time.Time

	// inTx runs fn in a write transaction, committed when fn returns nil:
	// on SQLite in the one writer's next group commit, on PostgreSQL in a
	// transaction of its own. fn may run more than once (a group commit
	// whose batch failed runs each write again alone): it sets its results
	// afresh each time.
	inTx func(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error
	// loneWritesInTx: a single-statement write goes through inTx too
	// (SQLite: every write is the writer's); otherwise it runs on db at
	// once, one round trip.
	loneWritesInTx bool
	// commitEvent commits an audit event, and with stamp set also stamps
	// the account's link with its time; each backend batches them its own
	// way.
	commitEvent func(ctx context.Context, e store.Event, stamp bool) error

	timeout time.Duration // bounds each try of the provisioning lease (PostgreSQL: an audit batch's commit too)

	provisioning keyLocks // this process's holders of provisioning leases
	holder       string   // this store's id in provisioning_leases

	// The reads every request makes, when prepared (SQLite: its driver
	// keeps no statement cache; pgx does, per connection).
	stmtAccountByID, stmtLinkFor, stmtSessionByID *sql.Stmt
}

// The reads by primary key that every request makes.
const (
	queryAccountByID = "SELECT " + accountCols + " FROM accounts WHERE id = $1"
	queryLinkFor     = "SELECT account_id, platform_user_id, linked_at, last_launch_at FROM links WHERE account_id = $1"
	querySessionByID = "SELECT " + sessionCols + " FROM sessions WHERE id = $1"
)

// prepare prepares the reads by primary key on db.
func (s *sqlStore) prepare(ctx context.Context) error {
	for _, p := range []struct {
		dst **sql.Stmt
		q   string
	}{
		{&s.stmtAccountByID, queryAccountByID},
		{&s.stmtLinkFor, queryLinkFor},
		{&s.stmtSessionByID, querySessionByID},
	} {
		st, err := s.db.PrepareContext(ctx, s.d.bind(p.q))
		if err != nil {
			return fmt.Errorf("accounts: prepare: %w", err)
		}
		*p.dst = st
	}
	return nil
}

// closeStatements closes what prepare prepared.
func (s *sqlStore) closeStatements() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.stmtAccountByID, s.stmtLinkFor, s.stmtSessionByID} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// pointRow reads one row by primary key, through st if it is prepared.
func (s *sqlStore) pointRow(ctx context.Context, st *sql.Stmt, q string, key any) *sql.Row {
	ctx = s.d.pointLookup(ctx)
	if st != nil {
		return st.QueryRowContext(ctx, key)
	}
	return s.row(ctx, q, key)
}

// exec runs one write statement and returns how many rows it changed.
func (s *sqlStore) exec(ctx context.Context, q string, args ...any) (int64, error) {
	q = s.d.bind(q)
	if !s.loneWritesInTx {
		res, err := s.db.ExecContext(ctx, q, args...)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	var n int64
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, args...)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	return n, err
}

// writeRow runs one write statement that returns a row (RETURNING) and
// scans it into dest.
func (s *sqlStore) writeRow(ctx context.Context, q string, args []any, dest ...any) error {
	q = s.d.bind(q)
	if !s.loneWritesInTx {
		return s.db.QueryRowContext(ctx, q, args...).Scan(dest...)
	}
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, q, args...).Scan(dest...)
	})
}

// txExec runs a statement in tx, in the dialect's placeholders.
func (s *sqlStore) txExec(ctx context.Context, tx *sql.Tx, q string, args ...any) (int64, error) {
	res, err := tx.ExecContext(ctx, s.d.bind(q), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// txRow reads one row in tx, in the dialect's placeholders.
func (s *sqlStore) txRow(ctx context.Context, tx *sql.Tx, q string, args ...any) *sql.Row {
	return tx.QueryRowContext(ctx, s.d.bind(q), args...)
}

// row reads one row, in the dialect's placeholders.
func (s *sqlStore) row(ctx context.Context, q string, args ...any) *sql.Row {
	return s.db.QueryRowContext(ctx, s.d.bind(q), args...)
}

// query reads rows, in the dialect's placeholders.
func (s *sqlStore) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.db.QueryContext(ctx, s.d.bind(q), args...)
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// notFoundIfNoRows maps "no rows" to ErrNotFound.
func notFoundIfNoRows(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

func limit(n int) int {
	if n <= 0 || n > 500 {
		return 50
	}
	return n
}

const accountCols = "id, email, first_name, last_name, password_hash, is_admin, disabled, session_epoch, created_at, updated_at, external_id, managed_by"

func scanAccount(row scanner) (store.Account, error) {
	var a store.Account
	var created, updated int64
	err := row.Scan(&a.ID, &a.Email, &a.FirstName, &a.LastName, &a.PasswordHash, &a.Admin, &a.Disabled, &a.SessionEpoch, &created, &updated,
		&a.ExternalID, &a.ManagedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Account{}, store.ErrNotFound
	}
	a.CreatedAt = time.UnixMilli(created).UTC()
	a.UpdatedAt = time.UnixMilli(updated).UTC()
	return a, err
}

// insertAccount is the statement and arguments that add n and return its id.
func (s *sqlStore) insertAccount(n *store.NewAccount) (string, []any, error) {
	if err := n.Normalize(); err != nil {
		return "", nil, err
	}
	now := ms(s.now())
	q := `INSERT INTO accounts (` + s.d.accountIDCol + `email, email_key, first_name, last_name, password_hash, is_admin, created_at, updated_at, external_id, managed_by, disabled)
		VALUES (` + s.d.accountIDValue + `$1, $2, $3, $4, $5, $6, $7, $7, $8, $9, $10) RETURNING id`
	return q, []any{n.Email, mailaddr.Key(n.Email), n.FirstName, n.LastName, n.PasswordHash, n.Admin, now, n.ExternalID, n.ManagedBy, n.Disabled}, nil
}

// insertErr names a taken email.
func (s *sqlStore) insertErr(n store.NewAccount, err error) error {
	if s.d.unique(err) {
		return fmt.Errorf("%w: %s", store.ErrEmailTaken, n.Email)
	}
	return fmt.Errorf("accounts: insert: %w", err)
}

// CreateAccount adds an account.
func (s *sqlStore) CreateAccount(ctx context.Context, n store.NewAccount) (store.Account, error) {
	q, args, err := s.insertAccount(&n)
	if err != nil {
		return store.Account{}, err
	}
	var id int64
	if err := s.writeRow(ctx, q, args, &id); err != nil {
		return store.Account{}, s.insertErr(n, err)
	}
	return s.AccountByID(ctx, id)
}

// CreateAccounts adds all accounts or none.
func (s *sqlStore) CreateAccounts(ctx context.Context, ns []store.NewAccount) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for i, n := range ns {
			q, args, err := s.insertAccount(&n)
			if err == nil {
				var id int64
				if err = s.txRow(ctx, tx, q, args...).Scan(&id); err != nil {
					err = s.insertErr(n, err)
				}
			}
			if err != nil {
				return fmt.Errorf("row %d: %w", i+1, err)
			}
		}
		return nil
	})
}

// AccountByEmail finds an account by email, case-insensitively.
func (s *sqlStore) AccountByEmail(ctx context.Context, email string) (store.Account, error) {
	return scanAccount(s.row(ctx, "SELECT "+accountCols+" FROM accounts WHERE email_key = $1", mailaddr.Key(email)))
}

// AccountByID finds an account by id.
func (s *sqlStore) AccountByID(ctx context.Context, id int64) (store.Account, error) {
	if err := ctx.Err(); err != nil {
		return store.Account{}, err
	}
	return scanAccount(s.pointRow(ctx, s.stmtAccountByID, queryAccountByID, id))
}

// FreshAccountByID is AccountByID: the backend has no cache of its own.
func (s *sqlStore) FreshAccountByID(ctx context.Context, id int64) (store.Account, error) {
	return s.AccountByID(ctx, id)
}

// ListAccounts pages through accounts matching f.Search, by email.
func (s *sqlStore) ListAccounts(ctx context.Context, f store.AccountFilter) ([]store.Account, int, error) {
	where, args := accountWhere(f)
	var total int
	if err := s.row(ctx, "SELECT count(*) FROM accounts"+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("accounts: count: %w", err)
	}
	rows, err := s.query(ctx, "SELECT "+accountCols+" FROM accounts"+where+" ORDER BY email_key"+page(len(args)),
		append(args, limit(f.Limit), max(f.Offset, 0))...)
	if err != nil {
		return nil, 0, fmt.Errorf("accounts: list: %w", err)
	}
	defer rows.Close()
	var out []store.Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, a)
	}
	return out, total, rows.Err()
}

// page is the LIMIT and OFFSET clause after n other parameters.
func page(n int) string {
	return " LIMIT $" + strconv.Itoa(n+1) + " OFFSET $" + strconv.Itoa(n+2)
}

// CountAccounts counts accounts.
func (s *sqlStore) CountAccounts(ctx context.Context) (int, error) {
	var n int
	err := s.row(ctx, "SELECT count(*) FROM accounts").Scan(&n)
	return n, err
}

// adminChange runs a change that might remove an active admin in one write
// transaction with the check, so two admins demoting each other at once
// cannot both succeed: on PostgreSQL the account's row and every other
// active admin's are locked first (FOR UPDATE); SQLite has one writer.
// endsSessions deletes the account's sessions in the same transaction.
func (s *sqlStore) adminChange(ctx context.Context, id int64, removesAdmin, endsSessions bool, query string, args ...any) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return s.adminChangeTx(ctx, tx, id, removesAdmin, endsSessions, query, args...)
	})
}

// adminChangeTx is adminChange within tx.
func (s *sqlStore) adminChangeTx(ctx context.Context, tx *sql.Tx, id int64, removesAdmin, endsSessions bool, query string, args ...any) error {
	if removesAdmin {
		if err := s.lockAdmins(ctx, tx, id); err != nil {
			return err
		}
	}
	var activeAdmin bool
	err := s.txRow(ctx, tx, "SELECT is_admin AND NOT disabled FROM accounts WHERE id = $1"+s.d.forUpdate, id).Scan(&activeAdmin)
	if err != nil {
		if err = notFoundIfNoRows(err); errors.Is(err, store.ErrNotFound) {
			return err
		}
		return fmt.Errorf("accounts: read account: %w", err)
	}
	if removesAdmin && activeAdmin {
		if err := s.anotherAdmin(ctx, tx, id); err != nil {
			return err
		}
	}
	n, err := s.txExec(ctx, tx, query, args...)
	if err != nil {
		return fmt.Errorf("accounts: update: %w", err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	if endsSessions {
		if err := s.endSessionsTx(ctx, tx, id); err != nil {
			return err
		}
	}
	return s.d.changed(ctx, tx, "a:"+strconv.FormatInt(id, 10))
}

// setAdminQuery sets account $3's admin role to $1 at $2 (adminChange).
const setAdminQuery = "UPDATE accounts SET is_admin = $1, updated_at = $2 WHERE id = $3"

// lockAdmins locks, on PostgreSQL, the account id and every enabled
// admin's row in one order (by id) before a change that may remove an
// admin reads any of them: two such changes that took their own row first
// and then the others' locked them in opposite orders and deadlocked.
// SQLite has one writer and locks nothing here.
func (s *sqlStore) lockAdmins(ctx context.Context, tx *sql.Tx, id int64) error {
	if s.d.forUpdate == "" {
		return nil
	}
	rows, err := tx.QueryContext(ctx, s.d.bind("SELECT id FROM accounts WHERE id = $1 OR (is_admin AND NOT disabled) ORDER BY id"+s.d.forUpdate), id)
	if err != nil {
		return fmt.Errorf("accounts: lock admins: %w", err)
	}
	for rows.Next() { // every row read is a row locked
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("accounts: lock admins: %w", err)
	}
	return rows.Close()
}

// anotherAdmin is ErrLastAdmin unless an enabled admin other than id is
// left (locking them on PostgreSQL).
func (s *sqlStore) anotherAdmin(ctx context.Context, tx *sql.Tx, id int64) error {
	var others int
	if err := s.txRow(ctx, tx, "SELECT count(*) FROM (SELECT id FROM accounts WHERE is_admin AND NOT disabled AND id <> $1"+s.d.forUpdate+") a", id).Scan(&others); err != nil {
		return fmt.Errorf("accounts: count admins: %w", err)
	}
	if others == 0 {
		return store.ErrLastAdmin
	}
	return nil
}

// endSessionsTx deletes the account's sessions and their waiting launches
// in tx.
func (s *sqlStore) endSessionsTx(ctx context.Context, tx *sql.Tx, id int64) error {
	if _, err := s.txExec(ctx, tx, "DELETE FROM sessions WHERE account_id = $1", id); err != nil {
		return fmt.Errorf("accounts: end sessions: %w", err)
	}
	// The waiting launches of those sessions go with them.
	if _, err := s.txExec(ctx, tx, "DELETE FROM launch_tickets WHERE account_id = $1", id); err != nil {
		return fmt.Errorf("accounts: end sessions' launches: %w", err)
	}
	// And every set-password link: a grant that outlived "sign out
	// everywhere", a new password or disabling would be a way back in.
	if _, err := s.txExec(ctx, tx, "DELETE FROM password_links WHERE account_id = $1", id); err != nil {
		return fmt.Errorf("accounts: end set-password links: %w", err)
	}
	return nil
}

// UpdateAccount changes an account's details in one transaction.
func (s *sqlStore) UpdateAccount(ctx context.Context, id int64, u store.AccountUpdate) (store.Account, error) {
	var out store.Account
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if u.Disabled != nil && *u.Disabled {
			// It may disable an admin: the admins' rows first, in order.
			if err := s.lockAdmins(ctx, tx, id); err != nil {
				return err
			}
		}
		cur, err := scanAccount(s.txRow(ctx, tx, "SELECT "+accountCols+" FROM accounts WHERE id = $1"+s.d.forUpdate, id))
		if err != nil {
			return err
		}
		next, err := u.Apply(cur)
		if err != nil {
			return err
		}
		disabling := next.Disabled && !cur.Disabled
		if disabling && cur.Admin {
			if err := s.anotherAdmin(ctx, tx, id); err != nil {
				return err
			}
		}
		if disabling {
			next.SessionEpoch++
		}
		next.UpdatedAt = time.UnixMilli(ms(s.now())).UTC()
		if _, err := s.txExec(ctx, tx, `UPDATE accounts SET email = $1, email_key = $2, first_name = $3, last_name = $4, external_id = $5,
			disabled = $6, session_epoch = $7, updated_at = $8, managed_by = $9 WHERE id = $10`,
			next.Email, mailaddr.Key(next.Email), next.FirstName, next.LastName, next.ExternalID, next.Disabled, next.SessionEpoch, ms(next.UpdatedAt), next.ManagedBy, id); err != nil {
			if s.d.unique(err) {
				return fmt.Errorf("%w: %s", store.ErrEmailTaken, next.Email)
			}
			return fmt.Errorf("accounts: update: %w", err)
		}
		if disabling {
			if err := s.endSessionsTx(ctx, tx, id); err != nil {
				return err
			}
		}
		out = next
		return s.d.changed(ctx, tx, "a:"+strconv.FormatInt(id, 10))
	})
	return out, err
}

// SetDisabled disables or enables an account. Disabling ends its sessions.
func (s *sqlStore) SetDisabled(ctx context.Context, id int64, disabled bool) error {
	return s.adminChange(ctx, id, disabled, disabled, "UPDATE accounts SET disabled = $1, session_epoch = session_epoch + $2, updated_at = $3 WHERE id = $4",
		disabled, boolInt(disabled), ms(s.now()), id)
}

// DeleteAccount removes an account; its link, sessions and set-password
// links go with it (ON DELETE CASCADE). The last active admin stays.
func (s *sqlStore) DeleteAccount(ctx context.Context, id int64) error {
	return s.adminChange(ctx, id, true, true, "DELETE FROM accounts WHERE id = $1", id)
}

// SetAdmin grants or revokes the admin role; the last admin stays admin.
func (s *sqlStore) SetAdmin(ctx context.Context, id int64, admin bool) error {
	return s.adminChange(ctx, id, !admin, false, setAdminQuery, admin, ms(s.now()), id)
}

// SetPasswordHash replaces the password and ends the account's sessions.
func (s *sqlStore) SetPasswordHash(ctx context.Context, id int64, hash string) error {
	if hash == "" {
		return fmt.Errorf("%w: empty password hash", store.ErrInvalid)
	}
	return s.adminChange(ctx, id, false, true, "UPDATE accounts SET password_hash = $1, session_epoch = session_epoch + 1, updated_at = $2 WHERE id = $3", hash, ms(s.now()), id)
}

// EndSessions raises the account's session epoch and deletes its sessions.
func (s *sqlStore) EndSessions(ctx context.Context, id int64) error {
	return s.adminChange(ctx, id, false, true, "UPDATE accounts SET session_epoch = session_epoch + 1, updated_at = $1 WHERE id = $2", ms(s.now()), id)
}

// LinkFor returns the account's link, or ErrNotFound.
func (s *sqlStore) LinkFor(ctx context.Context, accountID int64) (store.Link, error) {
	var l store.Link
	var linked int64
	var last sql.NullInt64
	if err := ctx.Err(); err != nil {
		return store.Link{}, err
	}
	err := s.pointRow(ctx, s.stmtLinkFor, queryLinkFor, accountID).Scan(&l.AccountID, &l.PlatformUserID, &linked, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Link{}, store.ErrNotFound
	}
	if err != nil {
		return store.Link{}, fmt.Errorf("accounts: link: %w", err)
	}
	l.LinkedAt = time.UnixMilli(linked).UTC()
	l.LastLaunchAt = fromMS(last)
	return l, nil
}

// SaveLink stores (or replaces) the account's link. A platform user
// linked to another account is refused with ErrLinkTaken.
func (s *sqlStore) SaveLink(ctx context.Context, accountID int64, platformUserID string) error {
	if platformUserID == "" {
		return fmt.Errorf("%w: empty platform user id", store.ErrInvalid)
	}
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := s.txExec(ctx, tx, `INSERT INTO links (account_id, platform_user_id, linked_at) VALUES ($1, $2, $3)
			ON CONFLICT (account_id) DO UPDATE SET platform_user_id = excluded.platform_user_id, linked_at = excluded.linked_at
			WHERE links.platform_user_id <> excluded.platform_user_id`, accountID, platformUserID, ms(s.now())); err != nil {
			return err
		}
		return s.d.changed(ctx, tx, "l:"+strconv.FormatInt(accountID, 10))
	})
	if s.d.unique(err) {
		return fmt.Errorf("%w: platform user %s", store.ErrLinkTaken, platformUserID)
	}
	if err != nil {
		return fmt.Errorf("accounts: save link: %w", err)
	}
	return nil
}

// DeleteLink removes the link if it still points at platformUserID ("":
// whatever it points at).
func (s *sqlStore) DeleteLink(ctx context.Context, accountID int64, platformUserID string) error {
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := s.txExec(ctx, tx, "DELETE FROM links WHERE account_id = $1 AND ($2 = '' OR platform_user_id = $2)", accountID, platformUserID); err != nil {
			return err
		}
		return s.d.changed(ctx, tx, "l:"+strconv.FormatInt(accountID, 10))
	})
	if err != nil {
		return fmt.Errorf("accounts: delete link: %w", err)
	}
	return nil
}

// ListLinks maps those of platformUserIDs that are linked to their account.
func (s *sqlStore) ListLinks(ctx context.Context, platformUserIDs []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(platformUserIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(platformUserIDs))
	marks := make([]string, len(platformUserIDs))
	for i, id := range platformUserIDs {
		args[i], marks[i] = id, "$"+strconv.Itoa(i+1)
	}
	rows, err := s.query(ctx, "SELECT platform_user_id, account_id FROM links WHERE platform_user_id IN ("+strings.Join(marks, ", ")+")", args...)
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
func (s *sqlStore) Record(ctx context.Context, e store.Event) error {
	return s.record(ctx, e, false)
}

// RecordLaunch records a launch event and, when it succeeded, stamps the
// account's link with its time (see LaunchStampEvery), in the same commit.
func (s *sqlStore) RecordLaunch(ctx context.Context, e store.Event) error {
	e.Kind = store.KindLaunch
	return s.record(ctx, e, e.Outcome == "ok" && e.AccountID != 0)
}

func (s *sqlStore) record(ctx context.Context, e store.Event, stamp bool) error {
	e.Detail, e.Email = plain(store.Cut(e.Detail, store.MaxDetail)), plain(store.Cut(e.Email, store.MaxKey))
	if e.At.IsZero() {
		e.At = s.now()
	}
	if err := s.commitEvent(ctx, e, stamp); err != nil {
		return fmt.Errorf("accounts: audit: %w", err)
	}
	return nil
}

// ListEvents pages through audit events, newest first.
func (s *sqlStore) ListEvents(ctx context.Context, f store.AuditFilter) ([]store.Event, int, error) {
	var after int64
	if f.Newest > 0 {
		// The ids grow with the log: the newest f.Newest events are those
		// above the last id less f.Newest (fewer where ids were skipped).
		// Read first, not as a subquery: PostgreSQL plans a range whose
		// bound it knows as an index range, an unknown one as a full scan.
		var last int64
		if err := s.row(ctx, "SELECT COALESCE(max(id), 0) FROM audit_log").Scan(&last); err != nil {
			return nil, 0, fmt.Errorf("accounts: last event: %w", err)
		}
		after = last - int64(f.Newest)
	}
	where, args := auditWhere(f, after)
	var total int
	if err := s.row(ctx, "SELECT count(*) FROM audit_log"+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("accounts: count events: %w", err)
	}
	rows, err := s.query(ctx, "SELECT "+eventCols+" FROM audit_log"+where+" ORDER BY id DESC"+page(len(args)),
		append(args, limit(f.Limit), max(f.Offset, 0))...)
	if err != nil {
		return nil, 0, fmt.Errorf("accounts: events: %w", err)
	}
	defer rows.Close()
	out, err := collectEvents(rows)
	return out, total, err
}

// PruneEvents deletes the events older than before among the next limit
// after the id after (pruneChunk).
func (s *sqlStore) PruneEvents(ctx context.Context, before time.Time, after int64, limit int) (int64, int64, error) {
	n, next, err := pruneChunk(ctx, s, "audit_log", "at", after, before, limit)
	if err != nil {
		return 0, 0, fmt.Errorf("accounts: prune: %w", err)
	}
	return n, next, nil
}

// EventsStampedAfter counts the events of an id range stamped after at.
func (s *sqlStore) EventsStampedAfter(ctx context.Context, after, upTo int64, at time.Time) (int64, int64, error) {
	var n int64
	var first sql.NullInt64
	// Two statements, not "($2 = 0 OR id <= $2)": the planner reads a
	// bounded range only when the bound is one.
	var err error
	if upTo == 0 {
		err = s.row(ctx, "SELECT count(*), min(id) FROM audit_log WHERE id > $1 AND at > $2", after, ms(at)).Scan(&n, &first)
	} else {
		err = s.row(ctx, "SELECT count(*), min(id) FROM audit_log WHERE id > $1 AND id <= $2 AND at > $3", after, upTo, ms(at)).Scan(&n, &first)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("accounts: events stamped after: %w", err)
	}
	return n, first.Int64, nil
}

// PlatformHeartbeat records the caller's heartbeat, forgets callers long
// gone, and counts those heard within window.
func (s *sqlStore) PlatformHeartbeat(ctx context.Context, c store.PlatformCaller, now time.Time, window time.Duration) (store.PlatformCallers, error) {
	var out store.PlatformCallers
	var until, slow int64
	busyAt, activeAt := int64(0), int64(0)
	if c.Busy {
		busyAt = ms(now)
	}
	if c.Active {
		activeAt = ms(now)
	}
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = store.PlatformCallers{}
		if _, err := s.txExec(ctx, tx, `INSERT INTO platform_callers (id, seen_at, background, busy_at, active_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at, background = excluded.background,
				busy_at = CASE WHEN excluded.busy_at > 0 THEN excluded.busy_at ELSE platform_callers.busy_at END,
				active_at = CASE WHEN excluded.active_at > 0 THEN excluded.active_at ELSE platform_callers.active_at END`,
			c.ID, ms(now), c.Background, busyAt, activeAt); err != nil {
			return err
		}
		if _, err := s.txExec(ctx, tx, "DELETE FROM platform_callers WHERE seen_at < $1", ms(now.Add(-10*window))); err != nil {
			return err
		}
		since := ms(now.Add(-window))
		if err := s.txRow(ctx, tx, `SELECT
				COALESCE(SUM(CASE WHEN background THEN 0 ELSE 1 END), 0),
				COALESCE(SUM(CASE WHEN background THEN 1 ELSE 0 END), 0),
				COALESCE(SUM(CASE WHEN NOT background AND busy_at >= $1 THEN 1 ELSE 0 END), 0),
				COALESCE(SUM(CASE WHEN NOT background AND active_at >= $1 THEN 1 ELSE 0 END), 0),
				COALESCE(SUM(CASE WHEN background AND active_at >= $1 THEN 1 ELSE 0 END), 0)
			FROM platform_callers WHERE seen_at >= $1`, since).Scan(&out.Serving, &out.Background, &out.Busy, &out.ActiveServing, &out.ActiveBackground); err != nil {
			return err
		}
		return s.txRow(ctx, tx, "SELECT until, slow_until FROM platform_pause WHERE id = 1").Scan(&until, &slow)
	})
	if err != nil {
		return store.PlatformCallers{}, fmt.Errorf("accounts: platform heartbeat: %w", err)
	}
	out.PausedUntil = fromMS(sql.NullInt64{Int64: until, Valid: until != 0})
	out.SlowUntil = fromMS(sql.NullInt64{Int64: slow, Valid: slow != 0})
	return out, nil
}

// MarkPlatformSlow moves the shared slowness to until, if that is later.
func (s *sqlStore) MarkPlatformSlow(ctx context.Context, until time.Time) error {
	if _, err := s.exec(ctx, "UPDATE platform_pause SET slow_until = $1 WHERE id = 1 AND slow_until < $1", ms(until)); err != nil {
		return fmt.Errorf("accounts: mark the platform slow: %w", err)
	}
	return nil
}

// PausePlatform moves the shared pause to until, if that is later.
func (s *sqlStore) PausePlatform(ctx context.Context, until time.Time) error {
	if _, err := s.exec(ctx, "UPDATE platform_pause SET until = $1 WHERE id = 1 AND until < $1", ms(until)); err != nil {
		return fmt.Errorf("accounts: pause platform: %w", err)
	}
	return nil
}

// provisioningLease bounds how long a lease held by a process that died
// (kill -9 in a provisioning run) keeps others waiting; a live holder
// renews it every provisioningLease/3 while it waits on the platform.
const provisioningLease = 15 * time.Second

// LockProvisioning takes the email's lease in provisioning_leases: a row
// that other processes on the database wait for, trying again every
// provisioningPoll until ctx ends, each try bounded by the store's timeout.
// A row rather than a lock: the holder waits on the platform meanwhile
// (paced, perhaps for seconds), and SQLite's write lock would stall every
// write, a PostgreSQL advisory lock hold a pooled connection each.
func (s *sqlStore) LockProvisioning(ctx context.Context, email string) (func(), error) {
	key := regKey(email)
	unlockLocal, err := s.provisioning.lock(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("accounts: provisioning lock: %w", err)
	}
	for {
		now := s.now()
		tctx, cancel := context.WithTimeout(ctx, s.timeout)
		n, err := s.exec(tctx, `INSERT INTO provisioning_leases (email_key, holder, expires_at) VALUES ($1, $2, $3)
			ON CONFLICT(email_key) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
			WHERE provisioning_leases.expires_at < $4`, key, s.holder, ms(now.Add(provisioningLease)), ms(now))
		cancel()
		if err != nil {
			unlockLocal()
			return nil, fmt.Errorf("accounts: provisioning lock: %w", err)
		}
		if n == 1 {
			break
		}
		select {
		case <-ctx.Done():
			unlockLocal()
			return nil, fmt.Errorf("accounts: provisioning lock: %w", ctx.Err())
		case <-time.After(provisioningPoll):
		}
	}
	released := make(chan struct{})
	go func() { // renew while held
		t := time.NewTicker(provisioningLease / 3)
		defer t.Stop()
		for {
			select {
			case <-released:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
				_, _ = s.exec(ctx, "UPDATE provisioning_leases SET expires_at = $1 WHERE email_key = $2 AND holder = $3",
					ms(s.now().Add(provisioningLease)), key, s.holder)
				cancel()
			}
		}
	}()
	return onlyOnce(func() {
		close(released)
		// Released even when the launch's context has ended; a failure
		// leaves the lease to expire.
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		_, _ = s.exec(ctx, "DELETE FROM provisioning_leases WHERE email_key = $1 AND holder = $2", key, s.holder)
		unlockLocal()
	}), nil
}

// randomHolder names this store in provisioning leases.
func randomHolder() string { return randid.Hex(12) }
