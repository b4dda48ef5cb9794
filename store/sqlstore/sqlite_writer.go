package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/store"
)

// SQLite's one writer: every write goes through one connection in group
// commits (batchWrites), and the WAL is folded into the database in the
// background, off the writers' path (checkpoints, restartWAL).

// writeOp is one write waiting for the next group commit.
type writeOp struct {
	fn   func(ctx context.Context, tx *sql.Tx) error
	done chan error
	// event, instead of fn: an audit event, inserted with the batch's
	// others in multi-row statements; stamp also stamps its link.
	event *store.Event
	stamp bool
}

// maxBatch bounds one group commit.
const maxBatch = 256

// ErrClosed is a write to a closed store.
var ErrClosed = errors.New("accounts: store closed")

// write runs fn in the next group commit and waits for it: every write
// that arrives while one commit runs shares the following one, so under
// load one commit carries many writes instead of each paying its own.
func (s *SQLite) write(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return s.enqueue(ctx, writeOp{fn: fn, done: make(chan error, 1)})
}

// enqueue hands op to the group commit and waits for its result.
func (s *SQLite) enqueue(ctx context.Context, op writeOp) error {
	select {
	case s.ops <- op:
	case <-s.stop:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-op.done // queued: it runs, whatever the caller's context does
}

// recordEvent hands the event to the group commit and waits for it.
func (s *SQLite) recordEvent(ctx context.Context, e store.Event, stampLink bool) error {
	return s.enqueue(ctx, writeOp{event: &e, stamp: stampLink, done: make(chan error, 1)})
}

// checkpointEvery is how often the WAL is folded into the database file.
// SQLite's default is to do it inside the commit that crosses 1,000 WAL
// pages: that commit then waits for the copy and its fsync, and so does
// every launch in its group, which made the launch latency's tail
// (docs/performance.md, "Decisions and their figures", has the figures).
const checkpointEvery = 250 * time.Millisecond

// restartFrames is the WAL length (16 MiB of 4 KiB pages) past which the
// writer restarts the WAL. A PASSIVE checkpoint copies pages but cannot
// rewind the WAL: only a writer that starts when every frame is copied does,
// and under steady writes that never happens, so the file grew without end
// at full load.
const restartFrames = 4096

// checkpoints folds the WAL into the database in the background, off the
// writers' path. PASSIVE neither waits for nor blocks readers and writers;
// what it cannot copy now it copies next time. A failed checkpoint is
// retried at the next tick (the WAL only grows meanwhile). When the WAL is
// long it asks the writer to restart it (restartWAL).
func (s *SQLite) checkpoints() {
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	var asked int64 // the WAL length at the last restart request: an idle WAL is not asked again
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		var busy, walFrames, copied int64
		if err := s.db.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &walFrames, &copied); err == nil && copied > 0 {
			s.checkpointsRun.Add(1)
			if walFrames >= restartFrames && walFrames != asked {
				asked = walFrames
				select {
				case s.restart <- struct{}{}:
				default:
				}
			}
		}
	}
}

func (s *SQLite) batchWrites() {
	for {
		var first writeOp
		select {
		case first = <-s.ops:
		case <-s.restart:
			s.restartWAL()
			continue
		case <-s.stop:
			return
		}
		// Gather what is queued, then yield and gather again for as long as
		// yielding brings more. A sender hands its op straight to this
		// goroutine, which Go then runs next, so without the yield batches
		// held under two writes on average and nearly every launch paid a
		// whole commit (docs/performance.md, fix 8). With nothing else
		// runnable the yield returns at once, so a lone write does not wait.
		batch := s.drain([]writeOp{first})
		for len(batch) < maxBatch {
			n := len(batch)
			runtime.Gosched()
			if batch = s.drain(batch); len(batch) == n {
				break
			}
		}
		s.commits.Add(1)
		if err := s.commitBatch(batch); err != nil {
			// The writes that queued while this batch waited out the busy
			// timeout have waited as long: they fail with it, rather than
			// each batch waiting the timeout again (waiting stays bounded).
			for queued := s.drain(nil); len(queued) > 0; queued = s.drain(nil) {
				for _, op := range queued {
					op.done <- err
				}
			}
		}
	}
}

// restartWAL runs between group commits, on the writer connection: a
// RESTART checkpoint copies the little that the last PASSIVE one left and
// waits for readers to leave the WAL, so that the next commit writes it from
// the start (and journal_size_limit trims the file). It blocks writers while
// it runs, so it waits for readers 20 ms at most; if they are still there,
// the next PASSIVE checkpoint asks again. Errors are retried the same way.
func (s *SQLite) restartWAL() {
	ctx := context.Background()
	c, err := s.wdb.Conn(ctx) // the one writer connection, pinned for the three statements
	if err != nil {
		return
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "PRAGMA busy_timeout=20"); err != nil {
		return
	}
	defer func() { _, _ = c.ExecContext(ctx, "PRAGMA busy_timeout="+strconv.Itoa(busyTimeoutMS)) }()
	var busy, walFrames, copied int64
	if err := c.QueryRowContext(ctx, "PRAGMA wal_checkpoint(RESTART)").Scan(&busy, &walFrames, &copied); err == nil && busy == 0 {
		s.restarts.Add(1)
	}
}

// drain appends the queued writes to batch, up to maxBatch.
func (s *SQLite) drain(batch []writeOp) []writeOp {
	for len(batch) < maxBatch {
		select {
		case op := <-s.ops:
			batch = append(batch, op)
		default:
			return batch
		}
	}
	return batch
}

// commitBatch runs the batch in one transaction; if any write fails, it
// runs each on its own so one failure does not take the others with it.
// A locked database fails the whole batch, and commitBatch returns that
// error (nil otherwise).
func (s *SQLite) commitBatch(batch []writeOp) error {
	ctx := context.Background()
	run := func(ops []writeOp) error {
		tx, err := s.wdb.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		var events []*store.Event
		var stamps map[int64]int64 // account -> latest launch in the batch
		for _, op := range ops {
			if op.event != nil {
				events = append(events, op.event)
				if op.stamp {
					if stamps == nil {
						stamps = map[int64]int64{}
					}
					stamps[op.event.AccountID] = max(stamps[op.event.AccountID], ms(op.event.At))
				}
				continue
			}
			if err := op.fn(ctx, tx); err != nil {
				_ = tx.Rollback()
				return err
			}
		}
		ids, at := s.stamps.due(stamps)
		if err := s.insertEvents(ctx, tx, events); err != nil {
			_ = tx.Rollback()
			s.stamps.forget(ids)
			return err
		}
		for i, id := range ids {
			if _, err := tx.StmtContext(ctx, s.stmtTouch).ExecContext(ctx, at[i], id, store.LaunchStampEvery.Milliseconds()); err != nil {
				_ = tx.Rollback()
				s.stamps.forget(ids)
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			s.stamps.forget(ids)
			return err
		}
		return nil
	}
	err := run(batch)
	if busy(err) {
		// Another process has held the write lock for the whole busy
		// timeout: every write of the batch fails now, rather than each
		// waiting the timeout again on its own (waiting stays bounded).
		err = fmt.Errorf("%w: %w", store.ErrStoreBusy, err)
	}
	if err == nil || len(batch) == 1 || errors.Is(err, store.ErrStoreBusy) {
		for _, op := range batch {
			op.done <- err
		}
		if errors.Is(err, store.ErrStoreBusy) {
			return err
		}
		return nil
	}
	for _, op := range batch {
		op.done <- run([]writeOp{op})
	}
	return nil
}

// eventInsertCols is how many columns an audit insert writes per row.
const eventInsertCols = 9

// maxEventRows is the most rows one audit insert statement writes.
const maxEventRows = 64

// insertEvents inserts events in multi-row statements of 64, 32, ... 1
// rows (prepareEventInserts): one statement per row cost the
// batch a statement execution, argument conversion and bind per event.
func (s *SQLite) insertEvents(ctx context.Context, tx *sql.Tx, events []*store.Event) error {
	args := make([]any, 0, eventInsertCols*min(len(events), maxEventRows))
	for len(events) > 0 {
		n := maxEventRows
		for n > len(events) {
			n /= 2
		}
		st := s.stmtEvents[n]
		args = args[:0]
		for _, e := range events[:n] {
			var account any
			if e.AccountID != 0 {
				account = e.AccountID
			}
			args = append(args, ms(e.At), e.Kind, account, e.Email, e.Outcome, e.PlatformCalls, e.Latency.Milliseconds(), e.Detail, e.RequestID)
		}
		if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, args...); err != nil {
			return err
		}
		events = events[n:]
	}
	return nil
}

// prepareEventInserts prepares the audit inserts of 1, 2, 4 ... 64 rows.
// At open: on the one writer connection, preparing inside a batch's
// transaction would wait for that connection forever.
func (s *SQLite) prepareEventInserts(ctx context.Context) error {
	s.stmtEvents = map[int]*sql.Stmt{}
	row := "(?, ?, ?, ?, ?, ?, ?, ?, ?)"
	for n := 1; n <= maxEventRows; n *= 2 {
		q := "INSERT INTO audit_log (at, kind, account_id, email, outcome, platform_calls, latency_ms, detail, request_id) VALUES " +
			strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
		st, err := s.wdb.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		s.stmtEvents[n] = st
	}
	return nil
}
