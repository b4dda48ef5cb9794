package sqlstore

import (
	"context"
	"database/sql"
	"strings"
)

// dialect is where SQLite and PostgreSQL really differ for the queries
// sqlStore writes once. Everything else (placeholders aside) is the same
// SQL on both.
type dialect struct {
	// questionMarks: placeholders are written $n (PostgreSQL's) and sent
	// as ?n (SQLite's numbered form, which may also repeat a parameter).
	// The rewrite replaces every $: no query has one anywhere else (values
	// travel as parameters).
	questionMarks bool
	// unique reports a unique-constraint violation.
	unique func(error) bool
	// forUpdate locks the rows a read in a write transaction selects
	// (PostgreSQL); SQLite's one writer already serialises such reads.
	forUpdate string
	// accountIDCol and accountIDValue open an account insert's columns and
	// values: SQLite numbers accounts itself so that an id is never reused
	// (account_id_high); PostgreSQL's identity column never reuses one.
	accountIDCol, accountIDValue string
	// pointReadsIgnoreCancel: reads by primary key keep the context's
	// values but not its cancellation (see pointLookup).
	pointReadsIgnoreCancel bool
	// notify queues a change notice in tx, sent on commit to every
	// instance's cache (nil: a database of one process).
	notify func(ctx context.Context, tx *sql.Tx, change string) error
	// lockCounts serialises, in tx, the sign-in counts with these keys
	// against every other instance (nil: the one writer already does).
	lockCounts func(ctx context.Context, tx *sql.Tx, keys []int64) error
}

// bind rewrites q's placeholders for the dialect.
func (d *dialect) bind(q string) string {
	if !d.questionMarks {
		return q
	}
	return strings.ReplaceAll(q, "$", "?")
}

// changed queues the change notice change in tx (see notify).
func (d *dialect) changed(ctx context.Context, tx *sql.Tx, change string) error {
	if d.notify == nil {
		return nil
	}
	return d.notify(ctx, tx, change)
}

// pointLookup is the context for a read by primary key, which every request
// makes. On SQLite it keeps the context's values but not its cancellation:
// such a read takes tens of microseconds, too short to be worth cancelling,
// and a cancellable context costs two goroutines per query (database/sql's
// and the driver's watchers); under load each waited about 0.6 ms to be
// scheduled (go tool trace), delaying the requests queued behind them. Over
// a network the read can hang, so PostgreSQL's stays cancellable.
func (d *dialect) pointLookup(ctx context.Context) context.Context {
	if d.pointReadsIgnoreCancel {
		return context.WithoutCancel(ctx)
	}
	return ctx
}
