package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// CreateSession records a new session.
func (s *SQLite) CreateSession(ctx context.Context, sess Session) error {
	if err := checkSession(&sess); err != nil {
		return err
	}
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO sessions ("+sessionCols+") VALUES (?, ?, ?, ?, ?)",
			sess.ID, sess.AccountID, ms(sess.CreatedAt), ms(sess.LastSeenAt), sess.UserAgent)
		return err
	})
	if err != nil {
		return fmt.Errorf("accounts: create session: %w", err)
	}
	return nil
}

// SessionByID returns a session that has not ended.
func (s *SQLite) SessionByID(ctx context.Context, id string) (Session, error) {
	if err := ctx.Err(); err != nil {
		return Session{}, err
	}
	sess, err := scanSession(s.db.QueryRowContext(pointLookup(ctx), "SELECT "+sessionCols+" FROM sessions WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("accounts: session: %w", err)
	}
	return sess, nil
}

// TouchSession moves the session's last-seen time.
func (s *SQLite) TouchSession(ctx context.Context, id string, at time.Time) error {
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE sessions SET last_seen_at = ? WHERE id = ?", ms(at), id)
		return err
	})
}

// EndSession deletes one of the account's sessions.
func (s *SQLite) EndSession(ctx context.Context, accountID int64, id string) error {
	var n int64
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE id = ? AND account_id = ?", id, accountID)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("accounts: end session: %w", err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// ListSessions lists the account's sessions, most recently seen first.
func (s *SQLite) ListSessions(ctx context.Context, accountID int64) ([]Session, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+sessionCols+" FROM sessions WHERE account_id = ? ORDER BY last_seen_at DESC, created_at DESC", accountID)
	if err != nil {
		return nil, fmt.Errorf("accounts: list sessions: %w", err)
	}
	defer rows.Close()
	return collectSessions(rows)
}

// PruneSessions deletes sessions last seen before a time.
func (s *SQLite) PruneSessions(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE last_seen_at < ?", ms(before))
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("accounts: prune sessions: %w", err)
	}
	return n, nil
}

// provisioningLease bounds how long a lease held by a process that died
// keeps others waiting; a live holder releases it within a launch's bound.
const provisioningLease = 2 * time.Minute

// provisioningPoll is how often a process waits for another's lease.
const provisioningPoll = 20 * time.Millisecond

// LockProvisioning takes the email's lease in provisioning_leases: a row
// that other processes on the file wait for (SQLite has no advisory locks,
// and holding its write lock across platform calls would stall every write).
func (s *SQLite) LockProvisioning(ctx context.Context, email string) (func(), error) {
	key := regKey(email)
	unlockLocal, err := s.provisioning.lock(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("accounts: provisioning lock: %w", err)
	}
	for {
		var took bool
		err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
			now := s.now()
			res, err := tx.ExecContext(ctx, `INSERT INTO provisioning_leases (email_key, holder, expires_at) VALUES (?, ?, ?)
				ON CONFLICT(email_key) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
				WHERE provisioning_leases.expires_at < ?`, key, s.holder, ms(now.Add(provisioningLease)), ms(now))
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			took = n == 1
			return err
		})
		if err != nil {
			unlockLocal()
			return nil, fmt.Errorf("accounts: provisioning lock: %w", err)
		}
		if took {
			break
		}
		select {
		case <-ctx.Done():
			unlockLocal()
			return nil, fmt.Errorf("accounts: provisioning lock: %w", ctx.Err())
		case <-time.After(provisioningPoll):
		}
	}
	return onlyOnce(func() {
		// Released even when the launch's context has ended; a failure
		// leaves the lease to expire.
		_ = s.write(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "DELETE FROM provisioning_leases WHERE email_key = ? AND holder = ?", key, s.holder)
			return err
		})
		unlockLocal()
	}), nil
}
