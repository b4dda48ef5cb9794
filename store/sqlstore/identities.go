package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ssobridge/ssobridge/store"
)

// AccountOfIdentity returns the account an outside identity is linked to.
func (s *sqlStore) AccountOfIdentity(ctx context.Context, issuer, subject string) (int64, error) {
	var id int64
	err := s.row(ctx, "SELECT account_id FROM identities WHERE issuer = $1 AND subject = $2", keyIn(issuer), keyIn(subject)).Scan(&id)
	if err != nil {
		return 0, notFoundIfNoRows(err)
	}
	return id, nil
}

// LinkIdentity links an outside identity to the account (moving it from
// another account).
func (s *sqlStore) LinkIdentity(ctx context.Context, issuer, subject string, accountID int64) error {
	_, err := s.exec(ctx, `INSERT INTO identities (issuer, subject, account_id, linked_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (issuer, subject) DO UPDATE SET account_id = excluded.account_id, linked_at = excluded.linked_at
		WHERE identities.account_id <> excluded.account_id`, keyIn(issuer), keyIn(subject), accountID, ms(s.now()))
	if err != nil {
		return fmt.Errorf("identities: link: %w", err)
	}
	return nil
}

// MoveIdentities moves the identities of source from to source to in one
// transaction (a subject linked under both keeps to's link).
func (s *sqlStore) MoveIdentities(ctx context.Context, from, to string) (int64, error) {
	from, to = keyIn(from), keyIn(to)
	var n int64
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := s.txExec(ctx, tx, "DELETE FROM identities WHERE issuer = $1 AND subject IN (SELECT subject FROM identities WHERE issuer = $2)", from, to); err != nil {
			return err
		}
		var err error
		n, err = s.txExec(ctx, tx, "UPDATE identities SET issuer = $2 WHERE issuer = $1", from, to)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("identities: move: %w", err)
	}
	return n, nil
}

// IdentitiesOf lists the outside identities linked to the account.
func (s *sqlStore) IdentitiesOf(ctx context.Context, accountID int64) ([]store.Identity, error) {
	rows, err := s.query(ctx, "SELECT issuer, subject, linked_at FROM identities WHERE account_id = $1 ORDER BY issuer, subject", accountID)
	if err != nil {
		return nil, fmt.Errorf("identities: list: %w", err)
	}
	defer rows.Close()
	var out []store.Identity
	for rows.Next() {
		var id store.Identity
		var at int64
		if err := rows.Scan(&id.Source, &id.Subject, &at); err != nil {
			return nil, fmt.Errorf("identities: list: %w", err)
		}
		id.Source, id.Subject = keyOut(id.Source), keyOut(id.Subject)
		id.LinkedAt = time.UnixMilli(at).UTC()
		out = append(out, id)
	}
	return out, rows.Err()
}

// KeptValue returns the value kept under name, or ErrNotFound.
func (s *sqlStore) KeptValue(ctx context.Context, name string) (string, error) {
	var kept string
	if err := s.row(ctx, "SELECT value FROM kept_values WHERE name = $1", keyIn(name)).Scan(&kept); err != nil {
		return "", notFoundIfNoRows(err)
	}
	return kept, nil
}

// KeepValue keeps value under name unless a value is kept there (another
// instance's, written meanwhile, wins) and returns the kept one.
func (s *sqlStore) KeepValue(ctx context.Context, name, value string) (string, error) {
	if _, err := s.exec(ctx, "INSERT INTO kept_values (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
		keyIn(name), value, ms(s.now())); err != nil {
		return "", fmt.Errorf("kept values: %w", err)
	}
	return s.KeptValue(ctx, name)
}
