package sqlstore

//go:generate go run ./internal/guardgen ../store.go guard_gen.go

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/ssobridge/ssobridge/store"
)

// Guard is a Store that bounds every call by a deadline and tells an outage
// of the database from its other answers, for both backends alike:
//
//   - every call gets the deadline (except LockProvisioning's wait for
//     another holder, which the backends bound per attempt): a frozen or
//     black-holed database answers the request within the timeout;
//   - a call that fails because the database may be away (a connection
//     refused or broken, or the deadline passed) returns an error that is
//     ErrUnavailable, and the guard pings the database (half the timeout);
//     meanwhile other calls are refused at once, so a request that met the
//     silence does not wait for it again in its next call;
//   - if the ping fails too, an outage begins: one ERROR line with the
//     cause; every call is refused at once, and the guard pings the
//     database (again probeEvery after a failure); the first answer ends
//     the outage: one line with how long it lasted and how many calls were
//     refused. No request waits on a database known to be away;
//   - if the ping is answered, the query was slow or one connection was
//     lost (a terminated backend): only that call failed.
type Guard struct {
	inner   store.Store
	timeout time.Duration
	logger  *slog.Logger
	now     func() time.Time

	state atomic.Int32 // guardUp, guardSuspect or guardDown; changed under mu

	mu      sync.Mutex
	since   time.Time // when the current outage began
	cause   string
	refused int64 // calls refused during the current outage

	closed    chan struct{} // closed by Close: the outage's pings stop
	closeOnce sync.Once

	outages   atomic.Int64
	downTotal atomic.Int64 // nanoseconds of ended outages
	timeouts  atomic.Int64
	lostConns atomic.Int64
	refusedN  atomic.Int64
}

// The guard's states.
const (
	guardUp      = iota // calls go through
	guardSuspect        // a call found the database silent: a ping is checking
	guardDown           // an outage: calls refused while the guard pings
)

// suspectTries and suspectRetry bound the pings that check a suspicion.
const (
	suspectTries = 20
	suspectRetry = 10 * time.Millisecond
)

// probeEvery is how often, during an outage, the guard pings the database
// to find out whether it is back.
const probeEvery = 200 * time.Millisecond

// NewGuard wraps inner; timeout bounds each call (DefaultTimeout when 0).
func NewGuard(inner store.Store, timeout time.Duration, logger *slog.Logger, now func() time.Time) *Guard {
	if timeout <= 0 {
		timeout = store.DefaultTimeout
	}
	if now == nil {
		now = time.Now
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Guard{inner: inner, timeout: timeout, logger: logger, now: now, closed: make(chan struct{})}
}

// Unwrap is the store the guard wraps.
func (g *Guard) Unwrap() store.Store { return g.inner }

// Stats reports the guard's counts.
func (g *Guard) Stats() store.OutageStats {
	g.mu.Lock()
	down := time.Duration(g.downTotal.Load())
	st := g.state.Load()
	if st == guardDown {
		down += g.now().Sub(g.since)
	}
	g.mu.Unlock()
	return store.OutageStats{Up: st != guardDown, Outages: g.outages.Load(), Down: down, Timeouts: g.timeouts.Load(), Lost: g.lostConns.Load(), Refused: g.refusedN.Load()}
}

// admit lets a call through, or refuses it while the database is silent.
func (g *Guard) admit() error {
	if g.state.Load() == guardUp {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch g.state.Load() {
	case guardUp:
		return nil
	case guardSuspect:
		g.refusedN.Add(1)
		return fmt.Errorf("%w (a call found it silent; checking)", store.ErrUnavailable)
	}
	g.refused++
	g.refusedN.Add(1)
	return fmt.Errorf("%w (since %s: %s)", store.ErrUnavailable, g.since.UTC().Format(time.TimeOnly), g.cause)
}

// settle reads the call's outcome: err as the database's answer (it is
// up), a sign that it is away (ErrUnavailable), or the caller's own end.
func (g *Guard) settle(ctx, bounded context.Context, err error) error {
	switch {
	case err == nil:
		g.up()
		return nil
	case ctx.Err() != nil:
		return err // the caller went away: says nothing of the database
	case errors.Is(err, store.ErrStoreBusy):
		// SQLite answered: another process holds its write lock (its own
		// busy timeout bounds the wait; the busy page says so).
		g.up()
		return err
	case errors.Is(bounded.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		g.timeouts.Add(1)
		err = fmt.Errorf("no answer within %s (store.timeout): %w", g.timeout, err)
		g.suspect(err)
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	case lostConnection(err):
		g.lostConns.Add(1)
		g.suspect(err)
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	g.up() // an answer, if not the one hoped for
	return err
}

// suspect pings the database after a call found it silent or its
// connection gone (unless a ping or an outage is under way): no answer
// starts an outage. The pings get half the timeout in all (a database that
// answers, answers a ping in milliseconds); one that fails at once is tried
// again a little later, up to suspectTries, so the pooled connections that
// died unseen (every backend terminated) are replaced rather than taken for
// the database.
func (g *Guard) suspect(cause error) {
	g.mu.Lock()
	if g.state.Load() != guardUp {
		g.mu.Unlock()
		return
	}
	g.state.Store(guardSuspect)
	g.mu.Unlock()
	go func() {
		if err := g.ping(g.timeout/2, suspectTries); err != nil {
			g.fall(fmt.Errorf("%w (and no answer to a ping: %v)", cause, err))
			return
		}
		g.up()
	}()
}

// ping pings the database within budget, trying again (up to tries)
// after a failure that came at once.
func (g *Guard) ping(budget time.Duration, tries int) error {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	var err error
	for range tries {
		if err = g.inner.Ping(ctx); err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(suspectRetry):
		}
	}
	return err
}

// watch pings the database during an outage and ends it at the first
// answer. A ping may wait for up to five timeouts: the one that waits on a
// frozen server is answered first when it resumes, where abandoning it for
// a new one would pile connection attempts onto the server's backlog and
// delay its return. One that fails at once is tried again probeEvery later.
func (g *Guard) watch() {
	for {
		select {
		case <-g.closed:
			return
		case <-time.After(probeEvery):
		}
		if g.ping(5*g.timeout, 1) == nil {
			g.up()
			return
		}
	}
}

// fall starts an outage, unless one is under way or the database answered
// meanwhile.
func (g *Guard) fall(cause error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state.Load() != guardSuspect {
		return
	}
	g.state.Store(guardDown)
	g.since, g.cause, g.refused = g.now(), cause.Error(), 0
	g.outages.Add(1)
	go g.watch()
	g.logger.Error("store unavailable: requests that need the database get the \"back in a moment\" page until it answers again",
		"err", cause, "timeout", g.timeout)
}

// up records an answer from the database: a suspicion or an outage ends.
func (g *Guard) up() {
	if g.state.Load() == guardUp {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch g.state.Load() {
	case guardSuspect:
		g.state.Store(guardUp)
	case guardDown:
		d := g.now().Sub(g.since)
		g.state.Store(guardUp)
		g.downTotal.Add(int64(d))
		g.logger.Info("store available again", "unavailable_for", d.Round(time.Millisecond), "refused_calls", g.refused)
	}
}

// lostConnection reports an error that says the database is away: the
// connection refused, reset or closed under the call, or the server
// shutting down or not accepting connections.
func lostConnection(err error) bool {
	var pe *pgconn.PgError
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.Is(err, store.ErrStoreGone), errors.Is(err, driver.ErrBadConn), errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.As(err, &ce), errors.As(err, &ne):
		return true
	case errors.As(err, &pe):
		// Class 08: connection exceptions; 57P01-03: shut down, or not
		// accepting connections yet.
		return len(pe.Code) == 5 && (pe.Code[:2] == "08" || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03")
	}
	return false
}

// do runs f bounded by the guard: refused at once while the database is
// silent, else given the deadline, its error read by settle. The generated
// methods (guard_gen.go) run every Store method through it.
func (g *Guard) do(ctx context.Context, f func(context.Context) error) error {
	if err := g.admit(); err != nil {
		return err
	}
	bounded, cancel := context.WithTimeout(ctx, g.timeout)
	err := f(bounded)
	cancel()
	return g.settle(ctx, bounded, err)
}

// The Store methods, each bounded by the guard. LockProvisioning's wait for
// another holder is not bounded here (it may rightly take as long as the
// holder's platform calls): the backends bound each attempt to take it.

// LockProvisioning is the store's: the wait for another holder is the
// caller's to bound; each attempt to take the lock is bounded by the
// backend.
func (g *Guard) LockProvisioning(ctx context.Context, email string) (unlock func(), err error) {
	if err := g.admit(); err != nil {
		return nil, err
	}
	unlock, err = g.inner.LockProvisioning(ctx, email)
	if err = g.settle(ctx, ctx, err); err != nil {
		return nil, err
	}
	return unlock, nil
}

// Close stops the outage's pings and closes the store.
func (g *Guard) Close() error {
	g.closeOnce.Do(func() { close(g.closed) })
	return g.inner.Close()
}

var _ store.Store = (*Guard)(nil)
