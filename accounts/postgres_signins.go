package accounts

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgRegulation is regulationTx on a PostgreSQL transaction.
type pgRegulation struct{ tx pgx.Tx }

// lock takes the transaction's advisory locks on the counts an attempt
// touches (in one order on every instance, so two cannot deadlock): under
// READ COMMITTED two admissions would otherwise count at once and both find
// room under the limit.
func (q pgRegulation) lock(ctx context.Context, ls []signInLimit) error {
	keys := make([]int64, 0, len(ls))
	for _, l := range ls {
		keys = append(keys, lockKey("ssobridge-signin", l.kind, l.value))
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		if _, err := q.tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", k); err != nil {
			return err
		}
	}
	return nil
}

func (q pgRegulation) bannedUntil(ctx context.Context, email, ip string, now int64) (int64, bool, error) {
	var until *int64
	err := q.tx.QueryRow(ctx, `SELECT max(until) FROM bans WHERE until > $1 AND ((kind = 'email' AND value = $2) OR (kind = 'ip' AND value = $3))`,
		now, email, ip).Scan(&until)
	if err != nil || until == nil {
		return 0, false, err
	}
	return *until, true, nil
}

func (q pgRegulation) count(ctx context.Context, l signInLimit, since int64) (all, failed int, err error) {
	err = q.tx.QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE failed) FROM sign_in_attempts WHERE "+l.col+" = $1 AND at > $2",
		l.value, since).Scan(&all, &failed)
	return all, failed, err
}

func (q pgRegulation) ban(ctx context.Context, kind, value string, until time.Time) error {
	_, err := q.tx.Exec(ctx, `INSERT INTO bans (kind, value, until) VALUES ($1, $2, $3)
		ON CONFLICT (kind, value) DO UPDATE SET until = GREATEST(bans.until, excluded.until)`, kind, value, ms(until))
	return err
}

func (q pgRegulation) record(ctx context.Context, email, ip string, at int64) (id int64, err error) {
	err = q.tx.QueryRow(ctx, "INSERT INTO sign_in_attempts (email, ip, at) VALUES ($1, $2, $3) RETURNING id", email, ip, at).Scan(&id)
	return id, err
}

func (q pgRegulation) markFailed(ctx context.Context, id int64) (email, ip string, found bool, err error) {
	err = q.tx.QueryRow(ctx, "UPDATE sign_in_attempts SET failed = true WHERE id = $1 RETURNING email, ip", id).Scan(&email, &ip)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", false, nil
	}
	return email, ip, err == nil, err
}

// AdmitSignIn runs admit in one transaction, under the advisory locks of
// the attempt's email and IP.
func (s *Postgres) AdmitSignIn(ctx context.Context, a SignIn, r RegulationConfig) (int64, time.Time, error) {
	var id int64
	var until time.Time
	var busy bool
	err := s.inTx(ctx, func(tx pgx.Tx) (err error) {
		id, until, busy, err = admit(ctx, pgRegulation{tx}, a, r)
		return err
	})
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("accounts: admit sign-in: %w", err)
	}
	if busy {
		return 0, time.Time{}, ErrBusy
	}
	return id, until, nil
}

// FailSignIn marks the attempt failed; failures at the limit start a ban.
func (s *Postgres) FailSignIn(ctx context.Context, id int64, r RegulationConfig, now time.Time) (bool, error) {
	if id == 0 {
		return false, nil
	}
	var started bool
	err := s.inTx(ctx, func(tx pgx.Tx) (err error) {
		started, err = fail(ctx, pgRegulation{tx}, id, r, now)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("accounts: fail sign-in: %w", err)
	}
	return started, nil
}

// SucceedSignIn clears the failures counted for the attempt's email.
func (s *Postgres) SucceedSignIn(ctx context.Context, id int64) error {
	if id == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, "DELETE FROM sign_in_attempts WHERE id = $1 OR email = (SELECT email FROM sign_in_attempts WHERE id = $1)", id)
	if err != nil {
		return fmt.Errorf("accounts: sign-in succeeded: %w", err)
	}
	return nil
}

// ListBans lists the bans in force, the latest to end first.
func (s *Postgres) ListBans(ctx context.Context, now time.Time) ([]Ban, error) {
	rows, err := s.pool.Query(ctx, "SELECT kind, value, until FROM bans WHERE until > $1 ORDER BY until DESC, kind, value", ms(now))
	if err != nil {
		return nil, fmt.Errorf("accounts: list bans: %w", err)
	}
	defer rows.Close()
	var out []Ban
	for rows.Next() {
		var b Ban
		var until int64
		if err := rows.Scan(&b.Kind, &b.Value, &until); err != nil {
			return nil, err
		}
		b.Until = time.UnixMilli(until).UTC()
		out = append(out, b)
	}
	return out, rows.Err()
}

// LiftBans ends the bans on email and ip and clears their counted attempts.
func (s *Postgres) LiftBans(ctx context.Context, email, ip string) (int, error) {
	email = regKey(email)
	lifted := 0
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		lifted = 0
		for _, k := range []signInLimit{{kind: BanEmail, col: "email", value: email}, {kind: BanIP, col: "ip", value: ip}} {
			if k.value == "" {
				continue
			}
			tag, err := tx.Exec(ctx, "DELETE FROM bans WHERE kind = $1 AND value = $2", k.kind, k.value)
			if err != nil {
				return err
			}
			lifted += int(tag.RowsAffected())
			if _, err := tx.Exec(ctx, "DELETE FROM sign_in_attempts WHERE "+k.col+" = $1", k.value); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("accounts: lift bans: %w", err)
	}
	return lifted, nil
}

// PruneSignIns deletes attempts older than before and bans ended by then.
func (s *Postgres) PruneSignIns(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		n = 0
		for _, q := range []string{"DELETE FROM sign_in_attempts WHERE at < $1", "DELETE FROM bans WHERE until < $1"} {
			tag, err := tx.Exec(ctx, q, ms(before))
			if err != nil {
				return err
			}
			n += tag.RowsAffected()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("accounts: prune sign-ins: %w", err)
	}
	return n, nil
}
