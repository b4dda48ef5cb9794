package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/store"
)

// Fill is what a store that has served a while holds, for benchmarks: it
// is written by FillStore straight through the SQL layer.
type Fill struct {
	Accounts int // accounts, each linked to a platform user of its own
	Sessions int // sessions of those accounts, each seen within SeenWithin
	Events   int // audit events (launches), spread evenly over Span
	// FreshFirst of the events, spread over the oldest 1% of ids, are
	// stamped Now instead: rows whose time runs ahead of their id (a clock
	// set wrong once, an instance whose clock ran ahead, a restored log).
	FreshFirst   int
	Span         time.Duration // the events' times end at Now and begin Span earlier
	SeenWithin   time.Duration // the sessions' last-seen times lie within this of Now
	Now          time.Time
	PasswordHash string // the accounts' (passhash.NoPassword: they arrive without one)
	// Progress, when set, is told how far each table has come.
	Progress func(table string, done, total int)
}

// FillPrefix starts the filled accounts' addresses (fill-0000001@…).
const FillPrefix = "fill-"

// fillRows is how many rows one INSERT of FillStore carries, and
// fillStatements how many statements one transaction commits.
const (
	fillRows       = 500
	fillStatements = 20
)

// FillStore writes f's rows into s, a store opened by OpenSQLite or
// OpenPostgres: the accounts through CreateAccounts (every rule of an
// account), then the links, sessions and audit events in multi-row
// INSERTs, fillRows a statement and fillRows*fillStatements a transaction.
func FillStore(ctx context.Context, s store.Store, f Fill) error {
	var q *sqlStore
	var postgres bool
	switch b := s.(type) {
	case *SQLite:
		q = &b.sqlStore
	case *Postgres:
		q, postgres = &b.sqlStore, true
	default:
		return fmt.Errorf("sqlstore: fill: %T is not a store of this package", s)
	}
	if f.Progress == nil {
		f.Progress = func(string, int, int) {}
	}
	ids, err := fillAccounts(ctx, s, q, f)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	now := ms(f.Now)
	err = fillTable(ctx, q, "links", "account_id, platform_user_id, linked_at, last_launch_at", len(ids), f.Progress,
		func(i int) []any {
			return []any{ids[i], "fill-u-" + strconv.FormatInt(ids[i], 10), now - 300*86_400_000, now - rand.Int64N(86_400_000)}
		})
	if err != nil {
		return err
	}
	seen := max(1, f.SeenWithin.Milliseconds())
	err = fillTable(ctx, q, "sessions", "id, account_id, created_at, last_seen_at, user_agent", f.Sessions, f.Progress,
		func(int) []any {
			last := now - rand.Int64N(seen)
			return []any{randid.Hex(32), ids[rand.IntN(len(ids))], last - rand.Int64N(3_600_000), last, "Mozilla/5.0 (fill)"}
		})
	if err != nil {
		return err
	}
	span, first := f.Span.Milliseconds(), now-f.Span.Milliseconds()
	freshEvery := max(1, f.Events/100/max(1, f.FreshFirst)) // FreshFirst of them in the oldest 1%
	err = fillTable(ctx, q, "audit_log", "at, kind, account_id, email, outcome, platform_calls, latency_ms, detail, request_id", f.Events, f.Progress,
		func(i int) []any {
			id := ids[rand.IntN(len(ids))]
			at := first + span*int64(i)/int64(max(1, f.Events))
			if f.FreshFirst > 0 && i%freshEvery == 0 && i/freshEvery < f.FreshFirst {
				at = now
			}
			return []any{at, store.KindLaunch, id, fillEmail(id), "ok", 1, 30 + rand.IntN(40), "", randid.Hex(8)}
		})
	if err != nil {
		return err
	}
	if postgres {
		// A store that has served a year has been vacuumed and analyzed
		// (autovacuum) as it grew; rows loaded in bulk have neither their
		// visibility map nor statistics, and the first reads after the fill
		// would do that work during the benchmark's first minutes.
		f.Progress("vacuum", 0, 1)
		if _, err := q.db.ExecContext(ctx, "VACUUM (ANALYZE) accounts, links, sessions, audit_log"); err != nil {
			return fmt.Errorf("sqlstore: fill: vacuum: %w", err)
		}
		f.Progress("vacuum", 1, 1)
	}
	return nil
}

// fillEmail is a filled account's address (by its number, not its id:
// ids are the store's to choose).
func fillEmail(n int64) string { return fmt.Sprintf("%s%07d@fill.example", FillPrefix, n) }

// fillAccounts creates f.Accounts accounts, 5,000 a transaction, and
// returns their ids.
func fillAccounts(ctx context.Context, s store.Store, q *sqlStore, f Fill) ([]int64, error) {
	const chunk = 5000
	for done := 0; done < f.Accounts; done += chunk {
		ns := make([]store.NewAccount, 0, chunk)
		for i := done; i < min(done+chunk, f.Accounts); i++ {
			ns = append(ns, store.NewAccount{Email: fillEmail(int64(i)), FirstName: "Fill", LastName: strconv.Itoa(i), PasswordHash: f.PasswordHash})
		}
		if err := s.CreateAccounts(ctx, ns); err != nil {
			return nil, fmt.Errorf("sqlstore: fill accounts: %w", err)
		}
		f.Progress("accounts", done+len(ns), f.Accounts)
	}
	rows, err := q.query(ctx, "SELECT id FROM accounts WHERE email LIKE $1", FillPrefix+"%")
	if err != nil {
		return nil, fmt.Errorf("sqlstore: fill: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// fillTable inserts n rows of cols into table, row(i) giving row i.
func fillTable(ctx context.Context, q *sqlStore, table, cols string, n int, progress func(string, int, int), row func(i int) []any) error {
	width := strings.Count(cols, ",") + 1
	// SQLite's driver finds a numbered parameter (?NNN) by a linear search
	// of the statement's names, which thousands of them make quadratic:
	// plain ? there, $n on PostgreSQL.
	positional := q.d.bind("$1") != "$1"
	stmt := func(rows int) string {
		var b strings.Builder
		b.WriteString("INSERT INTO " + table + " (" + cols + ") VALUES ")
		for r := range rows {
			if r > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('(')
			for c := range width {
				if c > 0 {
					b.WriteByte(',')
				}
				if positional {
					b.WriteByte('?')
				} else {
					b.WriteString("$" + strconv.Itoa(r*width+c+1))
				}
			}
			b.WriteByte(')')
		}
		return b.String()
	}
	full := stmt(fillRows)
	for done := 0; done < n; {
		perTx := min(n-done, fillRows*fillStatements)
		// The rows are made before the transaction, once: inTx may run its
		// function again.
		args := make([]any, 0, perTx*width)
		for i := done; i < done+perTx; i++ {
			args = append(args, row(i)...)
		}
		err := q.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			for at := 0; at < perTx; at += fillRows {
				rows := min(fillRows, perTx-at)
				query := full
				if rows < fillRows {
					query = stmt(rows)
				}
				if _, err := tx.ExecContext(ctx, query, args[at*width:(at+rows)*width]...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("sqlstore: fill %s: %w", table, err)
		}
		done += perTx
		progress(table, done, n)
	}
	return nil
}
