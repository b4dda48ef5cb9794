package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ssobridge/ssobridge/mailaddr"
)

// regKey is how an email is counted: unknown emails alike, case folded.
func regKey(email string) string { return mailaddr.Key(email) }

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

// regulationTx is what the regulation rules need of one transaction; each
// backend adapts its own (sqliteRegulation, pgRegulation), so the rules
// below are written once.
type regulationTx interface {
	// lock serialises the counts ls touch against every other attempt
	// (SQLite's single writer already does).
	lock(ctx context.Context, ls []signInLimit) error
	// bannedUntil is the latest end of a ban in force on email or ip.
	bannedUntil(ctx context.Context, email, ip string, now int64) (until int64, banned bool, err error)
	// count is the limit's attempts since then: all, and the failed ones.
	count(ctx context.Context, l signInLimit, since int64) (all, failed int, err error)
	ban(ctx context.Context, kind, value string, until time.Time) error
	record(ctx context.Context, email, ip string, at int64) (id int64, err error)
	// markFailed marks the attempt failed; found is false once it was
	// lifted.
	markFailed(ctx context.Context, id int64) (email, ip string, found bool, err error)
}

// admit is AdmitSignIn's rule, run inside one serialised transaction: the
// check and the record cannot interleave with another attempt's. Failures
// at the limit ban; attempts still being verified at the limit turn the
// new one away (busy) without a ban, so many people signing in at once
// behind one address are not banned, and parallel attempts still cannot
// test more passwords than the limit.
func admit(ctx context.Context, q regulationTx, a SignIn, r RegulationConfig) (id int64, until time.Time, busy bool, err error) {
	email, now := regKey(a.Email), ms(a.At)
	ls := limits(email, a.IP, r)
	if err := q.lock(ctx, ls); err != nil {
		return 0, time.Time{}, false, err
	}
	switch u, banned, err := q.bannedUntil(ctx, email, a.IP, now); {
	case err != nil:
		return 0, time.Time{}, false, err
	case banned:
		return 0, time.UnixMilli(u).UTC(), false, nil
	}
	if len(ls) == 0 {
		return 0, time.Time{}, false, nil // regulation off: nothing to count
	}
	since := ms(a.At.Add(-r.FindTime))
	for _, l := range ls {
		all, failed, err := q.count(ctx, l, since)
		switch {
		case err != nil:
			return 0, time.Time{}, false, err
		case failed >= l.max:
			until = a.At.Add(r.BanTime)
			return 0, until, false, q.ban(ctx, l.kind, l.value, until)
		case all >= l.max:
			busy = true
		}
	}
	if busy {
		return 0, time.Time{}, true, nil
	}
	id, err = q.record(ctx, email, a.IP, now)
	return id, time.Time{}, false, err
}

// fail is FailSignIn's rule: the attempt is marked failed, and each count
// whose failures reach its limit starts a ban.
func fail(ctx context.Context, q regulationTx, id int64, r RegulationConfig, now time.Time) (started bool, err error) {
	email, ip, found, err := q.markFailed(ctx, id)
	if err != nil || !found {
		return false, err
	}
	ls := limits(email, ip, r)
	if err := q.lock(ctx, ls); err != nil {
		return false, err
	}
	since := ms(now.Add(-r.FindTime))
	for _, l := range ls {
		_, failed, err := q.count(ctx, l, since)
		if err != nil {
			return false, err
		}
		if failed >= l.max {
			if err := q.ban(ctx, l.kind, l.value, now.Add(r.BanTime)); err != nil {
				return false, err
			}
			started = true
		}
	}
	return started, nil
}

// sqliteRegulation is regulationTx on a SQLite write transaction.
type sqliteRegulation struct{ tx *sql.Tx }

func (sqliteRegulation) lock(context.Context, []signInLimit) error { return nil }

func (q sqliteRegulation) bannedUntil(ctx context.Context, email, ip string, now int64) (int64, bool, error) {
	var until sql.NullInt64
	err := q.tx.QueryRowContext(ctx, `SELECT max(until) FROM bans WHERE until > ? AND ((kind = 'email' AND value = ?) OR (kind = 'ip' AND value = ?))`,
		now, email, ip).Scan(&until)
	return until.Int64, until.Valid, err
}

func (q sqliteRegulation) count(ctx context.Context, l signInLimit, since int64) (all, failed int, err error) {
	err = q.tx.QueryRowContext(ctx, "SELECT count(*), coalesce(sum(failed), 0) FROM sign_in_attempts WHERE "+l.col+" = ? AND at > ?",
		l.value, since).Scan(&all, &failed)
	return all, failed, err
}

func (q sqliteRegulation) ban(ctx context.Context, kind, value string, until time.Time) error {
	_, err := q.tx.ExecContext(ctx, `INSERT INTO bans (kind, value, until) VALUES (?, ?, ?)
		ON CONFLICT(kind, value) DO UPDATE SET until = max(until, excluded.until)`, kind, value, ms(until))
	return err
}

func (q sqliteRegulation) record(ctx context.Context, email, ip string, at int64) (int64, error) {
	res, err := q.tx.ExecContext(ctx, "INSERT INTO sign_in_attempts (email, ip, at) VALUES (?, ?, ?)", email, ip, at)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

func (q sqliteRegulation) markFailed(ctx context.Context, id int64) (email, ip string, found bool, err error) {
	err = q.tx.QueryRowContext(ctx, "UPDATE sign_in_attempts SET failed = 1 WHERE id = ? RETURNING email, ip", id).Scan(&email, &ip)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	}
	return email, ip, err == nil, err
}

// AdmitSignIn runs admit as one write, serialised with every other.
func (s *SQLite) AdmitSignIn(ctx context.Context, a SignIn, r RegulationConfig) (int64, time.Time, error) {
	var id int64
	var until time.Time
	var busy bool
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) (err error) {
		id, until, busy, err = admit(ctx, sqliteRegulation{tx}, a, r)
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
func (s *SQLite) FailSignIn(ctx context.Context, id int64, r RegulationConfig, now time.Time) (bool, error) {
	if id == 0 {
		return false, nil
	}
	var started bool
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) (err error) {
		started, err = fail(ctx, sqliteRegulation{tx}, id, r, now)
		return err
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
