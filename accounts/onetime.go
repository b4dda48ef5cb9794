package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Single-use ids and set-password links, in both dialects.

// UseOnce records id of kind until a time; ErrUsed while it is recorded.
func (s *SQLite) UseOnce(ctx context.Context, kind, id string, until time.Time) error {
	var took bool
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO used_ids (kind, id, until) VALUES (?, ?, ?)
			ON CONFLICT(kind, id) DO UPDATE SET until = excluded.until WHERE used_ids.until <= ?`, kind, id, ms(until), ms(s.now()))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		took = n == 1
		return err
	})
	return usedOnce(took, err)
}

func usedOnce(took bool, err error) error {
	if err != nil {
		return fmt.Errorf("accounts: use once: %w", err)
	}
	if !took {
		return ErrUsed
	}
	return nil
}

// PruneUsedIDs forgets ids whose time has passed.
func (s *SQLite) PruneUsedIDs(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM used_ids WHERE until < ?", ms(before))
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	return n, err
}

// CreatePasswordLink stores the link, replacing the account's earlier one.
func (s *SQLite) CreatePasswordLink(ctx context.Context, accountID int64, id string, expires time.Time) error {
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM password_links WHERE account_id = ?", accountID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO password_links (id, account_id, expires_at) VALUES (?, ?, ?)", id, accountID, ms(expires))
		return err
	})
}

// PasswordLink returns the link's account while it is valid.
func (s *SQLite) PasswordLink(ctx context.Context, id string, now time.Time) (int64, error) {
	var aid int64
	err := s.db.QueryRowContext(ctx, "SELECT account_id FROM password_links WHERE id = ? AND expires_at > ?", id, ms(now)).Scan(&aid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	return aid, err
}

// TakePasswordLink deletes the link, returning its account if it was valid.
func (s *SQLite) TakePasswordLink(ctx context.Context, id string, now time.Time) (int64, error) {
	var aid, expires int64
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, "DELETE FROM password_links WHERE id = ? RETURNING account_id, expires_at", id).Scan(&aid, &expires)
	})
	if errors.Is(err, sql.ErrNoRows) || (err == nil && expires <= ms(now)) {
		return 0, ErrNotFound
	}
	return aid, err
}

// UseOnce records id of kind until a time; ErrUsed while it is recorded.
func (s *Postgres) UseOnce(ctx context.Context, kind, id string, until time.Time) error {
	tag, err := s.pool.Exec(ctx, `INSERT INTO used_ids (kind, id, until) VALUES ($1, $2, $3)
		ON CONFLICT (kind, id) DO UPDATE SET until = excluded.until WHERE used_ids.until <= $4`, kind, id, ms(until), ms(s.now()))
	return usedOnce(err == nil && tag.RowsAffected() == 1, err)
}

// PruneUsedIDs forgets ids whose time has passed.
func (s *Postgres) PruneUsedIDs(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, "DELETE FROM used_ids WHERE until < $1", ms(before))
	return tag.RowsAffected(), err
}

// CreatePasswordLink stores the link, replacing the account's earlier one.
func (s *Postgres) CreatePasswordLink(ctx context.Context, accountID int64, id string, expires time.Time) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM password_links WHERE account_id = $1", accountID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO password_links (id, account_id, expires_at) VALUES ($1, $2, $3)", id, accountID, ms(expires))
		return err
	})
}

// PasswordLink returns the link's account while it is valid.
func (s *Postgres) PasswordLink(ctx context.Context, id string, now time.Time) (int64, error) {
	var aid int64
	err := s.pool.QueryRow(ctx, "SELECT account_id FROM password_links WHERE id = $1 AND expires_at > $2", id, ms(now)).Scan(&aid)
	return aid, notFoundIfNoRows(err)
}

// TakePasswordLink deletes the link, returning its account if it was valid.
func (s *Postgres) TakePasswordLink(ctx context.Context, id string, now time.Time) (int64, error) {
	var aid, expires int64
	err := notFoundIfNoRows(s.pool.QueryRow(ctx, "DELETE FROM password_links WHERE id = $1 RETURNING account_id, expires_at", id).Scan(&aid, &expires))
	if err == nil && expires <= ms(now) {
		return 0, ErrNotFound
	}
	return aid, err
}

// PasswordLinkTTL is how long a set-password link is valid.
const PasswordLinkTTL = 72 * time.Hour

// IssuePasswordLink makes a set-password link for the account, valid for
// PasswordLinkTTL from now and replacing any earlier one: it returns the
// token for the link; the store keeps only its SHA-256.
func IssuePasswordLink(ctx context.Context, s interface {
	CreatePasswordLink(ctx context.Context, accountID int64, id string, expires time.Time) error
}, accountID int64, now time.Time) (string, error) {
	token, id := NewSessionToken()
	if err := s.CreatePasswordLink(ctx, accountID, id, now.Add(PasswordLinkTTL)); err != nil {
		return "", fmt.Errorf("accounts: password link: %w", err)
	}
	return token, nil
}

// SetPasswordPath is the bridge's path of a set-password link's token.
func SetPasswordPath(token string) string { return "/set-password?token=" + token }
