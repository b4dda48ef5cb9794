package sqlstore

import (
	"errors"
	"fmt"
	"sync"
)

// groupCommit commits values that goroutines submit at once in batches,
// each batch in one commit, without a writer goroutine of its own: the
// first submitter to find no commit under way commits what is queued (the
// leader); those that queue meanwhile wait, and when the commit is done the
// leader hands the lead to the first of them, who commits everything queued
// by then (LevelDB's writers do the same).
//
// PostgreSQL's audit events use it: a writer goroutine would take each
// event over one channel and answer over another, two park/wake pairs per
// launch where this has one. SQLite keeps its writer goroutine
// (SQLite.batchWrites): its commit is in process and short, and leading
// from the submitters cost it more CPU per launch. docs/performance.md
// ("Decisions and their figures") has the measurements.
type groupCommit[T any] struct {
	// commit writes a batch; it returns one result per value, in order.
	commit   func(batch []T) []error
	maxBatch int

	mu      sync.Mutex
	idle    sync.Cond // signalled when leading turns false
	queue   []*groupOp[T]
	leading bool // a submitter is committing (or has been handed the lead)
	closed  bool
}

type groupOp[T any] struct {
	v    T
	done chan error // the result, or errLead first when this op's submitter is to lead
}

// errLead tells a waiting submitter it leads the next commit.
var errLead = errors.New("accounts: lead the next group commit")

func newGroupCommit[T any](maxBatch int, commit func([]T) []error) *groupCommit[T] {
	g := &groupCommit[T]{commit: commit, maxBatch: maxBatch}
	g.idle.L = &g.mu
	return g
}

// do commits v with whatever else is queued and returns v's result. Once
// queued, v is committed whatever the caller does meanwhile. After close
// it returns ErrClosed.
func (g *groupCommit[T]) do(v T) error {
	op := &groupOp[T]{v: v, done: make(chan error, 1)}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return ErrClosed
	}
	// The queue is empty whenever nobody leads: a leader steps down only
	// when it finds nothing queued.
	g.queue = append(g.queue, op)
	if g.leading {
		g.mu.Unlock()
		if err := <-op.done; err != errLead {
			return err
		}
	} else {
		g.leading = true
		g.mu.Unlock()
	}
	g.lead()
	return <-op.done
}

// lead commits the queue's first maxBatch values (the leader's own first
// among them), delivers their results and hands the lead on, or steps down
// when nothing queued meanwhile.
func (g *groupCommit[T]) lead() {
	g.mu.Lock()
	n := min(len(g.queue), g.maxBatch)
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	if len(g.queue) == 0 {
		g.queue = nil // let the backing array go
	}
	g.mu.Unlock()

	vals := make([]T, n)
	for i, op := range batch {
		vals[i] = op.v
	}
	errs, panicked := g.run(vals)

	g.mu.Lock()
	var next *groupOp[T]
	if len(g.queue) > 0 {
		next = g.queue[0]
	} else {
		g.leading = false
		g.idle.Broadcast()
	}
	g.mu.Unlock()
	for i, op := range batch {
		op.done <- errs[i]
	}
	// Last: a woken goroutine runs next on this processor, and the new
	// leader's commit is what everything queued is waiting for.
	if next != nil {
		next.done <- errLead
	}
	if panicked != nil {
		panic(panicked) // the batch has failed and the lead has passed on
	}
}

// run calls commit, turning a panic into every value's error (so the lead
// passes on and nobody waits forever) and returning it to re-raise.
func (g *groupCommit[T]) run(vals []T) (errs []error, panicked any) {
	defer func() {
		if panicked = recover(); panicked != nil {
			err := fmt.Errorf("accounts: group commit: %v", panicked)
			errs = make([]error, len(vals))
			for i := range errs {
				errs[i] = err
			}
		}
	}()
	errs = g.commit(vals)
	if len(errs) != len(vals) {
		panic(fmt.Sprintf("group commit returned %d results for %d values", len(errs), len(vals)))
	}
	return errs, nil
}

// close refuses new values and waits for those queued to be committed.
func (g *groupCommit[T]) close() {
	g.mu.Lock()
	g.closed = true
	for g.leading {
		g.idle.Wait()
	}
	g.mu.Unlock()
}
