package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ssobridge/ssobridge/store"
)

// Single-use ids and set-password links.

// UseOnce records id of kind until a time; ErrUsed while it is recorded.
func (s *sqlStore) UseOnce(ctx context.Context, kind, id string, until time.Time) error {
	n, err := s.exec(ctx, `INSERT INTO used_ids (kind, id, until) VALUES ($1, $2, $3)
		ON CONFLICT (kind, id) DO UPDATE SET until = excluded.until WHERE used_ids.until <= $4`, keyIn(kind), keyIn(id), ms(until), ms(s.now()))
	if err != nil {
		return fmt.Errorf("accounts: use once: %w", err)
	}
	if n != 1 {
		return store.ErrUsed
	}
	return nil
}

// PruneUsedIDs forgets ids whose time has passed.
func (s *sqlStore) PruneUsedIDs(ctx context.Context, before time.Time) (int64, error) {
	return s.exec(ctx, "DELETE FROM used_ids WHERE until < $1", ms(before))
}

// CreatePasswordLink stores the link, replacing the account's earlier one.
func (s *sqlStore) CreatePasswordLink(ctx context.Context, accountID int64, id string, expires time.Time) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := s.txExec(ctx, tx, "DELETE FROM password_links WHERE account_id = $1", accountID); err != nil {
			return err
		}
		_, err := s.txExec(ctx, tx, "INSERT INTO password_links (id, account_id, expires_at) VALUES ($1, $2, $3)", id, accountID, ms(expires))
		return err
	})
}

// PasswordLink returns the link's account while it is valid.
func (s *sqlStore) PasswordLink(ctx context.Context, id string, now time.Time) (int64, error) {
	var aid int64
	err := s.row(ctx, "SELECT account_id FROM password_links WHERE id = $1 AND expires_at > $2", id, ms(now)).Scan(&aid)
	return aid, notFoundIfNoRows(err)
}

// TakePasswordLink deletes the link, returning its account if it was valid.
func (s *sqlStore) TakePasswordLink(ctx context.Context, id string, now time.Time) (int64, error) {
	var aid, expires int64
	err := notFoundIfNoRows(s.writeRow(ctx, "DELETE FROM password_links WHERE id = $1 RETURNING account_id, expires_at", []any{id}, &aid, &expires))
	if err == nil && expires <= ms(now) {
		return 0, store.ErrNotFound
	}
	return aid, err
}
