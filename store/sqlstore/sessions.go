package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/store"
)

// Sessions, in both backends.

// scanner is a row of database/sql.
type scanner interface{ Scan(dest ...any) error }

const sessionCols = "id, account_id, created_at, last_seen_at, user_agent"

func scanSession(row scanner) (store.Session, error) {
	var s store.Session
	var created, seen int64
	if err := row.Scan(&s.ID, &s.AccountID, &created, &seen, &s.UserAgent); err != nil {
		return store.Session{}, err
	}
	s.CreatedAt, s.LastSeenAt = time.UnixMilli(created).UTC(), time.UnixMilli(seen).UTC()
	return s, nil
}

// checkSession refuses a session record that could not have come from
// NewSessionToken, and bounds the user agent.
func checkSession(s *store.Session) error {
	if len(s.ID) != 64 || strings.Trim(s.ID, "0123456789abcdef") != "" || s.AccountID == 0 {
		return fmt.Errorf("%w: a session needs an account and the SessionID of a token", store.ErrInvalid)
	}
	s.UserAgent = strings.ToValidUTF8(truncateUTF8(s.UserAgent, store.MaxUserAgent), "")
	return nil
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n]
}

// collectSessions reads every row; the caller closes them.
func collectSessions(rows interface {
	scanner
	Next() bool
	Err() error
}) ([]store.Session, error) {
	var out []store.Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sess)
	}
	return out, rows.Err()
}

// CreateSession records a new session.
func (s *sqlStore) CreateSession(ctx context.Context, sess store.Session) error {
	if err := checkSession(&sess); err != nil {
		return err
	}
	if _, err := s.exec(ctx, "INSERT INTO sessions ("+sessionCols+") VALUES ($1, $2, $3, $4, $5)",
		sess.ID, sess.AccountID, ms(sess.CreatedAt), ms(sess.LastSeenAt), sess.UserAgent); err != nil {
		return fmt.Errorf("accounts: create session: %w", err)
	}
	return nil
}

// SessionByID returns a session that has not ended.
func (s *sqlStore) SessionByID(ctx context.Context, id string) (store.Session, error) {
	if err := ctx.Err(); err != nil {
		return store.Session{}, err
	}
	sess, err := scanSession(s.pointRow(ctx, s.stmtSessionByID, querySessionByID, id))
	if err = notFoundIfNoRows(err); err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.Session{}, fmt.Errorf("accounts: session: %w", err)
	}
	return sess, err
}

// TouchSession moves the session's last-seen time if it is due: the
// condition is the statement's, so a session is written once however many
// requests (and instances) found it due together.
func (s *sqlStore) TouchSession(ctx context.Context, id string, at, seenBefore time.Time) (bool, error) {
	n, err := s.exec(ctx, "UPDATE sessions SET last_seen_at = $1 WHERE id = $2 AND last_seen_at <= $3", ms(at), id, ms(seenBefore))
	return n == 1, err
}

// EndSession deletes one of the account's sessions.
func (s *sqlStore) EndSession(ctx context.Context, accountID int64, id string) error {
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n, err := s.txExec(ctx, tx, "DELETE FROM sessions WHERE id = $1 AND account_id = $2", id, accountID)
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		// Its waiting launches go with it.
		if _, err := s.txExec(ctx, tx, "DELETE FROM launch_tickets WHERE account_id = $1 AND session_id = $2", accountID, id); err != nil {
			return err
		}
		return s.d.changed(ctx, tx, "s:"+id)
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("accounts: end session: %w", err)
	}
	return err
}

// ListSessions lists the account's sessions, most recently seen first.
func (s *sqlStore) ListSessions(ctx context.Context, accountID int64) ([]store.Session, error) {
	rows, err := s.query(ctx, "SELECT "+sessionCols+" FROM sessions WHERE account_id = $1 ORDER BY last_seen_at DESC, created_at DESC", accountID)
	if err != nil {
		return nil, fmt.Errorf("accounts: list sessions: %w", err)
	}
	defer rows.Close()
	return collectSessions(rows)
}

// PruneSessions deletes the idle sessions among the next limit after the
// id after (pruneChunk).
func (s *sqlStore) PruneSessions(ctx context.Context, before time.Time, after string, limit int) (int64, string, error) {
	n, next, err := pruneChunk(ctx, s, "sessions", "last_seen_at", after, before, limit)
	if err != nil {
		return 0, "", fmt.Errorf("accounts: prune sessions: %w", err)
	}
	return n, next, nil
}

// pruneChunk deletes the rows of table whose timeCol is before `before`
// among the next limit rows after the key after, in key order (the primary
// key id), and returns how many and the chunk's last key (the zero key once
// the last rows were reached). The chunk's end is read by the primary key,
// then one DELETE of the key range checks the time row by row: a walk that
// never rereads what it deleted, and needs no index on the time.
func pruneChunk[K string | int64](ctx context.Context, s *sqlStore, table, timeCol string, after K, before time.Time, limit int) (int64, K, error) {
	var end K
	err := s.row(ctx, "SELECT id FROM "+table+" WHERE id > $1 ORDER BY id LIMIT 1 OFFSET $2", after, max(1, limit)-1).Scan(&end)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, end, err
	}
	var n int64
	if err != nil { // the last chunk: fewer than limit rows are left
		n, err = s.exec(ctx, "DELETE FROM "+table+" WHERE id > $1 AND "+timeCol+" < $2", after, ms(before))
	} else {
		n, err = s.exec(ctx, "DELETE FROM "+table+" WHERE id > $1 AND id <= $2 AND "+timeCol+" < $3", after, end, ms(before))
	}
	return n, end, err
}
