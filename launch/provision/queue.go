package provision

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/ssobridge/ssobridge/launch/pacing"
	"github.com/ssobridge/ssobridge/store"
)

// Queue provisions accounts as they are made (by the identity provider,
// through SCIM), a few at a time, below every user's launch in the
// platform budget's line: the account's first click then needs one
// platform call. An account the queue cannot take (full, or closed) is
// provisioned by its first launch, as any other; so is one that failed.
type Queue struct {
	p      Provisioner
	next   chan store.Account
	logger *slog.Logger
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex // guards closed, and sends against Close
	closed bool
}

// QueueSize is how many accounts may wait in a Queue.
const QueueSize = 10000

// NewQueue starts workers (DefaultWorkers if <= 0) provisioning through
// p.
func NewQueue(p Provisioner, workers int, logger *slog.Logger) *Queue {
	if workers <= 0 {
		workers = DefaultWorkers
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, stop := context.WithCancel(context.Background())
	q := &Queue{p: p, next: make(chan store.Account, QueueSize), logger: logger, ctx: ctx, stop: stop}
	for range workers {
		q.wg.Add(1)
		go q.work()
	}
	return q
}

func (q *Queue) work() {
	defer q.wg.Done()
	for {
		select {
		case <-q.ctx.Done():
			return
		case a := <-q.next:
			ctx := pacing.WithPriority(q.ctx, pacing.Priority{Background: true, Since: time.Now()})
			r := One(ctx, q.p, a)
			if r.Outcome == Failed && q.ctx.Err() == nil {
				q.logger.Warn("provisioning: the platform user was not created ahead; the first launch will", "email", a.Email, "reason", r.Reason)
			}
		}
	}
}

// Add queues a; false when the queue is full or closed.
func (q *Queue) Add(a store.Account) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	select {
	case q.next <- a:
		return true
	default:
		q.logger.Warn("provisioning: the queue is full; the account's first launch creates its platform user", "email", a.Email)
		return false
	}
}

// Close stops the workers (a provisioning in flight is cancelled: its
// account's first launch finishes the job, never a duplicate) and waits
// for them.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.stop()
	q.wg.Wait()
}
