package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/store"
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
func limits(email, ip string, r store.RegulationConfig) []signInLimit {
	var out []signInLimit
	for _, l := range []signInLimit{{store.BanEmail, "email", email, r.MaxRetries}, {store.BanIP, "ip", ip, r.MaxRetriesPerIP}} {
		if l.max > 0 {
			out = append(out, l)
		}
	}
	return out
}

// regulation is one write transaction's view of the sign-in counts: the
// rules below (admit, fail) run on it.
type regulation struct {
	s  *sqlStore
	tx *sql.Tx
}

// lock serialises the counts ls touch against every other attempt: on
// PostgreSQL under the transaction's advisory locks (taken in one order on
// every instance, so two cannot deadlock), since under READ COMMITTED two
// admissions would otherwise count at once and both find room under the
// limit; SQLite's one writer already serialises them.
func (q regulation) lock(ctx context.Context, ls []signInLimit) error {
	if q.s.d.lockCounts == nil {
		return nil
	}
	keys := make([]int64, 0, len(ls))
	for _, l := range ls {
		keys = append(keys, lockKey("ssobridge-signin", l.kind, l.value))
	}
	slices.Sort(keys)
	return q.s.d.lockCounts(ctx, q.tx, keys)
}

// bannedUntilQuery is the latest end of a ban in force at $1 on the
// e-mail key $2 or the IP $3 (NULL: none); each ban is read by its primary
// key.
const bannedUntilQuery = `SELECT max(until) FROM bans WHERE until > $1 AND ((kind = 'email' AND value = $2) OR (kind = 'ip' AND value = $3))`

// bannedUntil is the latest end of a ban in force on email or ip.
func (q regulation) bannedUntil(ctx context.Context, email, ip string, now int64) (int64, bool, error) {
	var until sql.NullInt64
	err := q.s.txRow(ctx, q.tx, bannedUntilQuery, now, email, ip).Scan(&until)
	return until.Int64, until.Valid, err
}

// count is the limit's attempts since then: all, and the failed ones.
func (q regulation) count(ctx context.Context, l signInLimit, since int64) (all, failed int, err error) {
	err = q.s.txRow(ctx, q.tx, "SELECT count(*), count(*) FILTER (WHERE failed) FROM sign_in_attempts WHERE "+l.col+" = $1 AND at > $2",
		l.value, since).Scan(&all, &failed)
	return all, failed, err
}

func (q regulation) ban(ctx context.Context, kind, value string, until time.Time) error {
	_, err := q.s.txExec(ctx, q.tx, `INSERT INTO bans (kind, value, until) VALUES ($1, $2, $3)
		ON CONFLICT (kind, value) DO UPDATE SET until = CASE WHEN excluded.until > bans.until THEN excluded.until ELSE bans.until END`, kind, value, ms(until))
	return err
}

func (q regulation) record(ctx context.Context, email, ip string, at int64) (id int64, err error) {
	err = q.s.txRow(ctx, q.tx, "INSERT INTO sign_in_attempts (email, ip, at) VALUES ($1, $2, $3) RETURNING id", email, ip, at).Scan(&id)
	return id, err
}

// markFailed marks the attempt failed; found is false once it was lifted.
func (q regulation) markFailed(ctx context.Context, id int64) (email, ip string, found bool, err error) {
	err = q.s.txRow(ctx, q.tx, "UPDATE sign_in_attempts SET failed = TRUE WHERE id = $1 RETURNING email, ip", id).Scan(&email, &ip)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	}
	return email, ip, err == nil, err
}

// admit is AdmitSignIn's rule, run inside one serialised transaction: the
// check and the record cannot interleave with another attempt's. Failures
// at the limit ban; attempts still being verified at the limit turn the
// new one away (busy) without a ban, so many people signing in at once
// behind one address are not banned, and parallel attempts still cannot
// test more passwords than the limit.
func admit(ctx context.Context, q regulation, a store.SignIn, r store.RegulationConfig) (id int64, until time.Time, busy bool, err error) {
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
func fail(ctx context.Context, q regulation, id int64, r store.RegulationConfig, now time.Time) (started bool, err error) {
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

// AdmitSignIn runs admit in one write transaction, serialised with every
// other attempt on the counts it touches.
func (s *sqlStore) AdmitSignIn(ctx context.Context, a store.SignIn, r store.RegulationConfig) (int64, time.Time, error) {
	var id int64
	var until time.Time
	var busy bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) (err error) {
		id, until, busy, err = admit(ctx, regulation{s, tx}, a, r)
		return err
	})
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("accounts: admit sign-in: %w", err)
	}
	if busy {
		return 0, time.Time{}, store.ErrBusy
	}
	return id, until, nil
}

// FailSignIn marks the attempt failed; failures at the limit start a ban.
func (s *sqlStore) FailSignIn(ctx context.Context, id int64, r store.RegulationConfig, now time.Time) (bool, error) {
	if id == 0 {
		return false, nil
	}
	var started bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) (err error) {
		started, err = fail(ctx, regulation{s, tx}, id, r, now)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("accounts: fail sign-in: %w", err)
	}
	return started, nil
}

// SucceedSignIn clears the failures counted for the attempt's email (the
// per-IP count keeps the failures of other emails).
func (s *sqlStore) SucceedSignIn(ctx context.Context, id int64) error {
	if id == 0 {
		return nil
	}
	if _, err := s.exec(ctx, "DELETE FROM sign_in_attempts WHERE id = $1 OR email = (SELECT email FROM sign_in_attempts WHERE id = $1)", id); err != nil {
		return fmt.Errorf("accounts: sign-in succeeded: %w", err)
	}
	return nil
}

// ListBans lists the bans in force, the latest to end first.
func (s *sqlStore) ListBans(ctx context.Context, now time.Time) ([]store.Ban, error) {
	rows, err := s.query(ctx, "SELECT kind, value, until FROM bans WHERE until > $1 ORDER BY until DESC, kind, value", ms(now))
	if err != nil {
		return nil, fmt.Errorf("accounts: list bans: %w", err)
	}
	defer rows.Close()
	var out []store.Ban
	for rows.Next() {
		var b store.Ban
		var until sql.NullInt64
		if err := rows.Scan(&b.Kind, &b.Value, &until); err != nil {
			return nil, err
		}
		b.Until = fromMS(until)
		out = append(out, b)
	}
	return out, rows.Err()
}

// BannedUntil is the ban check of an admission (bannedUntilQuery),
// outside its transaction.
func (s *sqlStore) BannedUntil(ctx context.Context, email, ip string, now time.Time) (time.Time, error) {
	var until sql.NullInt64
	if err := s.row(ctx, bannedUntilQuery, ms(now), regKey(email), ip).Scan(&until); err != nil {
		return time.Time{}, fmt.Errorf("accounts: bans: %w", err)
	}
	return fromMS(until), nil
}

// LiftBans ends the bans on email and ip and clears their counted attempts.
func (s *sqlStore) LiftBans(ctx context.Context, email, ip string) (int, error) {
	email = regKey(email)
	lifted := 0
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		lifted = 0
		for _, k := range []signInLimit{{kind: store.BanEmail, col: "email", value: email}, {kind: store.BanIP, col: "ip", value: ip}} {
			if k.value == "" {
				continue
			}
			n, err := s.txExec(ctx, tx, "DELETE FROM bans WHERE kind = $1 AND value = $2", k.kind, k.value)
			if err != nil {
				return err
			}
			lifted += int(n)
			if _, err := s.txExec(ctx, tx, "DELETE FROM sign_in_attempts WHERE "+k.col+" = $1", k.value); err != nil {
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
func (s *sqlStore) PruneSignIns(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n = 0
		for _, q := range []string{"DELETE FROM sign_in_attempts WHERE at < $1", "DELETE FROM bans WHERE until < $1"} {
			m, err := s.txExec(ctx, tx, q, ms(before))
			if err != nil {
				return err
			}
			n += m
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("accounts: prune sign-ins: %w", err)
	}
	return n, nil
}
