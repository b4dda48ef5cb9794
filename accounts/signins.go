package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// regKey is how an email is counted: unknown emails alike, case folded.
func regKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// signInLimit is one count regulation keeps: the attempts of one email or of
// one client IP, and how many it allows (0: off).
type signInLimit struct {
	kind, col, value string
	max              int
}

// limits are the counts in force for an attempt from email at ip.
func limits(email, ip string, r RegulationConfig) []signInLimit {
	var out []signInLimit
	for _, l := range []signInLimit{{BanEmail, "email", email, r.MaxRetries}, {BanIP, "ip", ip, r.MaxRetriesPerIP}} {
		if l.max > 0 {
			out = append(out, l)
		}
	}
	return out
}

// count is the limit's attempts since then: all (being verified or
// failed) and the failed ones.
func (l signInLimit) count(ctx context.Context, tx *sql.Tx, since int64) (all, failed int, err error) {
	err = tx.QueryRowContext(ctx, "SELECT count(*), coalesce(sum(failed), 0) FROM sign_in_attempts WHERE "+l.col+" = ? AND at > ?",
		l.value, since).Scan(&all, &failed)
	return all, failed, err
}

// AdmitSignIn runs as one write, serialised with every other: the check
// and the record cannot interleave with another attempt's. Failures at the
// limit ban; attempts still being verified at the limit turn the new one
// away (ErrBusy) without a ban, so many people signing in at once behind
// one address are not banned, and parallel attempts still cannot test more
// passwords than the limit.
func (s *SQLite) AdmitSignIn(ctx context.Context, a SignIn, r RegulationConfig) (int64, time.Time, error) {
	email, now := regKey(a.Email), ms(a.At)
	var id int64
	var until time.Time
	var busy bool
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		id, until, busy = 0, time.Time{}, false
		var bannedUntil sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(until) FROM bans WHERE until > ? AND ((kind = 'email' AND value = ?) OR (kind = 'ip' AND value = ?))`,
			now, email, a.IP).Scan(&bannedUntil); err != nil {
			return err
		}
		if bannedUntil.Valid {
			until = fromMS(bannedUntil)
			return nil
		}
		ls := limits(email, a.IP, r)
		if len(ls) == 0 {
			return nil // regulation off: nothing to count
		}
		since := ms(a.At.Add(-r.FindTime))
		for _, l := range ls {
			all, failed, err := l.count(ctx, tx, since)
			switch {
			case err != nil:
				return err
			case failed >= l.max:
				until = a.At.Add(r.BanTime)
				return ban(ctx, tx, l.kind, l.value, until)
			case all >= l.max:
				busy = true
			}
		}
		if busy {
			return nil
		}
		res, err := tx.ExecContext(ctx, "INSERT INTO sign_in_attempts (email, ip, at) VALUES (?, ?, ?)", email, a.IP, now)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
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

func ban(ctx context.Context, tx *sql.Tx, kind, value string, until time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO bans (kind, value, until) VALUES (?, ?, ?)
		ON CONFLICT(kind, value) DO UPDATE SET until = max(until, excluded.until)`, kind, value, ms(until))
	return err
}

// FailSignIn marks the attempt failed; failures at the limit start a ban.
func (s *SQLite) FailSignIn(ctx context.Context, id int64, r RegulationConfig, now time.Time) (bool, error) {
	if id == 0 {
		return false, nil
	}
	started := false
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		started = false
		var email, ip string
		err := tx.QueryRowContext(ctx, "UPDATE sign_in_attempts SET failed = 1 WHERE id = ? RETURNING email, ip", id).Scan(&email, &ip)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // lifted meanwhile
		}
		if err != nil {
			return err
		}
		since := ms(now.Add(-r.FindTime))
		for _, l := range limits(email, ip, r) {
			_, failed, err := l.count(ctx, tx, since)
			if err != nil {
				return err
			}
			if failed >= l.max {
				if err := ban(ctx, tx, l.kind, l.value, now.Add(r.BanTime)); err != nil {
					return err
				}
				started = true
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("accounts: fail sign-in: %w", err)
	}
	return started, nil
}

// SucceedSignIn clears the failures counted for the attempt's email (the
// per-IP count keeps the failures of other emails).
func (s *SQLite) SucceedSignIn(ctx context.Context, id int64) error {
	if id == 0 {
		return nil
	}
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM sign_in_attempts WHERE id = ? OR email = (SELECT email FROM sign_in_attempts WHERE id = ?)", id, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("accounts: sign-in succeeded: %w", err)
	}
	return nil
}

// ListBans lists the bans in force, the latest to end first.
func (s *SQLite) ListBans(ctx context.Context, now time.Time) ([]Ban, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT kind, value, until FROM bans WHERE until > ? ORDER BY until DESC, kind, value", ms(now))
	if err != nil {
		return nil, fmt.Errorf("accounts: list bans: %w", err)
	}
	defer rows.Close()
	var out []Ban
	for rows.Next() {
		var b Ban
		var until sql.NullInt64
		if err := rows.Scan(&b.Kind, &b.Value, &until); err != nil {
			return nil, err
		}
		b.Until = fromMS(until)
		out = append(out, b)
	}
	return out, rows.Err()
}

// LiftBans ends the bans on email and ip and clears their counted attempts.
func (s *SQLite) LiftBans(ctx context.Context, email, ip string) (int, error) {
	email = regKey(email)
	lifted := 0
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		lifted = 0
		for _, k := range []signInLimit{{kind: BanEmail, col: "email", value: email}, {kind: BanIP, col: "ip", value: ip}} {
			if k.value == "" {
				continue
			}
			res, err := tx.ExecContext(ctx, "DELETE FROM bans WHERE kind = ? AND value = ?", k.kind, k.value)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			lifted += int(n)
			if _, err := tx.ExecContext(ctx, "DELETE FROM sign_in_attempts WHERE "+k.col+" = ?", k.value); err != nil {
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
func (s *SQLite) PruneSignIns(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n = 0
		for _, q := range []string{"DELETE FROM sign_in_attempts WHERE at < ?", "DELETE FROM bans WHERE until < ?"} {
			res, err := tx.ExecContext(ctx, q, ms(before))
			if err != nil {
				return err
			}
			m, _ := res.RowsAffected()
			n += m
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("accounts: prune sign-ins: %w", err)
	}
	return n, nil
}
