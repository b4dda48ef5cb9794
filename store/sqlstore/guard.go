package sqlstore

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

// GuardStats is what the guard has seen, for metrics.
type GuardStats struct {
	Up       bool
	Outages  int64         // outages begun
	Down     time.Duration // time unavailable, the current outage included
	Timeouts int64         // calls that ran past the deadline
	Lost     int64         // calls that found the connection refused or broken
	Refused  int64         // calls refused at once while the database was silent
}

// Stats reports the guard's counts.
func (g *Guard) Stats() GuardStats {
	g.mu.Lock()
	down := time.Duration(g.downTotal.Load())
	st := g.state.Load()
	if st == guardDown {
		down += g.now().Sub(g.since)
	}
	g.mu.Unlock()
	return GuardStats{Up: st != guardDown, Outages: g.outages.Load(), Down: down, Timeouts: g.timeouts.Load(), Lost: g.lostConns.Load(), Refused: g.refusedN.Load()}
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

// guarded runs f bounded by the guard.
func guarded[T any](g *Guard, ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := g.admit(); err != nil {
		return zero, err
	}
	bounded, cancel := context.WithTimeout(ctx, g.timeout)
	v, err := f(bounded)
	cancel()
	if err = g.settle(ctx, bounded, err); err != nil {
		return zero, err
	}
	return v, nil
}

// pair carries two results through guarded.
type pair[X, Y any] struct {
	x X
	y Y
}

// guarded0 is guarded for a call that returns only an error.
func guarded0(g *Guard, ctx context.Context, f func(context.Context) error) error {
	_, err := guarded(g, ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	return err
}

// The Store methods, each bounded by the guard. LockProvisioning's wait for
// another holder is not bounded here (it may rightly take as long as the
// holder's platform calls): the backends bound each attempt to take it.

// CreateAccount is the store's, bounded.
func (g *Guard) CreateAccount(ctx context.Context, n store.NewAccount) (store.Account, error) {
	return guarded(g, ctx, func(ctx context.Context) (store.Account, error) { return g.inner.CreateAccount(ctx, n) })
}

// CreateAccounts is the store's, bounded.
func (g *Guard) CreateAccounts(ctx context.Context, ns []store.NewAccount) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.CreateAccounts(ctx, ns) })
}

// AccountByEmail is the store's, bounded.
func (g *Guard) AccountByEmail(ctx context.Context, email string) (store.Account, error) {
	return guarded(g, ctx, func(ctx context.Context) (store.Account, error) { return g.inner.AccountByEmail(ctx, email) })
}

// AccountByID is the store's, bounded.
func (g *Guard) AccountByID(ctx context.Context, id int64) (store.Account, error) {
	return guarded(g, ctx, func(ctx context.Context) (store.Account, error) { return g.inner.AccountByID(ctx, id) })
}

// FreshAccountByID is the store's, bounded.
func (g *Guard) FreshAccountByID(ctx context.Context, id int64) (store.Account, error) {
	return guarded(g, ctx, func(ctx context.Context) (store.Account, error) { return g.inner.FreshAccountByID(ctx, id) })
}

// ListAccounts is the store's, bounded.
func (g *Guard) ListAccounts(ctx context.Context, f store.AccountFilter) ([]store.Account, int, error) {
	v, err := guarded(g, ctx, func(ctx context.Context) (pair[[]store.Account, int], error) {
		x, y, err := g.inner.ListAccounts(ctx, f)
		return pair[[]store.Account, int]{x, y}, err
	})
	return v.x, v.y, err
}

// CountAccounts is the store's, bounded.
func (g *Guard) CountAccounts(ctx context.Context) (int, error) {
	return guarded(g, ctx, func(ctx context.Context) (int, error) { return g.inner.CountAccounts(ctx) })
}

// SetDisabled is the store's, bounded.
func (g *Guard) SetDisabled(ctx context.Context, id int64, disabled bool) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.SetDisabled(ctx, id, disabled) })
}

// DeleteAccount is the store's, bounded.
func (g *Guard) DeleteAccount(ctx context.Context, id int64) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.DeleteAccount(ctx, id) })
}

// SetAdmin is the store's, bounded.
func (g *Guard) SetAdmin(ctx context.Context, id int64, admin bool) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.SetAdmin(ctx, id, admin) })
}

// SetPasswordHash is the store's, bounded.
func (g *Guard) SetPasswordHash(ctx context.Context, id int64, hash string) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.SetPasswordHash(ctx, id, hash) })
}

// EndSessions is the store's, bounded.
func (g *Guard) EndSessions(ctx context.Context, id int64) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.EndSessions(ctx, id) })
}

// CreateSession is the store's, bounded.
func (g *Guard) CreateSession(ctx context.Context, s store.Session) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.CreateSession(ctx, s) })
}

// SessionByID is the store's, bounded.
func (g *Guard) SessionByID(ctx context.Context, id string) (store.Session, error) {
	return guarded(g, ctx, func(ctx context.Context) (store.Session, error) { return g.inner.SessionByID(ctx, id) })
}

// TouchSession is the store's, bounded.
func (g *Guard) TouchSession(ctx context.Context, id string, at time.Time) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.TouchSession(ctx, id, at) })
}

// EndSession is the store's, bounded.
func (g *Guard) EndSession(ctx context.Context, accountID int64, id string) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.EndSession(ctx, accountID, id) })
}

// ListSessions is the store's, bounded.
func (g *Guard) ListSessions(ctx context.Context, accountID int64) ([]store.Session, error) {
	return guarded(g, ctx, func(ctx context.Context) ([]store.Session, error) { return g.inner.ListSessions(ctx, accountID) })
}

// PruneSessions is the store's, bounded.
func (g *Guard) PruneSessions(ctx context.Context, before time.Time, limit int) (int64, error) {
	return guarded(g, ctx, func(ctx context.Context) (int64, error) { return g.inner.PruneSessions(ctx, before, limit) })
}

// UseOnce is the store's, bounded.
func (g *Guard) UseOnce(ctx context.Context, kind, id string, until time.Time) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.UseOnce(ctx, kind, id, until) })
}

// PruneUsedIDs is the store's, bounded.
func (g *Guard) PruneUsedIDs(ctx context.Context, before time.Time) (int64, error) {
	return guarded(g, ctx, func(ctx context.Context) (int64, error) { return g.inner.PruneUsedIDs(ctx, before) })
}

// CreatePasswordLink is the store's, bounded.
func (g *Guard) CreatePasswordLink(ctx context.Context, accountID int64, id string, expires time.Time) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.CreatePasswordLink(ctx, accountID, id, expires) })
}

// PasswordLink is the store's, bounded.
func (g *Guard) PasswordLink(ctx context.Context, id string, now time.Time) (accountID int64, err error) {
	return guarded(g, ctx, func(ctx context.Context) (int64, error) { return g.inner.PasswordLink(ctx, id, now) })
}

// TakePasswordLink is the store's, bounded.
func (g *Guard) TakePasswordLink(ctx context.Context, id string, now time.Time) (accountID int64, err error) {
	return guarded(g, ctx, func(ctx context.Context) (int64, error) { return g.inner.TakePasswordLink(ctx, id, now) })
}

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

// LinkFor is the store's, bounded.
func (g *Guard) LinkFor(ctx context.Context, accountID int64) (store.Link, error) {
	return guarded(g, ctx, func(ctx context.Context) (store.Link, error) { return g.inner.LinkFor(ctx, accountID) })
}

// SaveLink is the store's, bounded.
func (g *Guard) SaveLink(ctx context.Context, accountID int64, platformUserID string) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.SaveLink(ctx, accountID, platformUserID) })
}

// DeleteLink is the store's, bounded.
func (g *Guard) DeleteLink(ctx context.Context, accountID int64, platformUserID string) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.DeleteLink(ctx, accountID, platformUserID) })
}

// ListLinks is the store's, bounded.
func (g *Guard) ListLinks(ctx context.Context, platformUserIDs []string) (map[string]int64, error) {
	return guarded(g, ctx, func(ctx context.Context) (map[string]int64, error) { return g.inner.ListLinks(ctx, platformUserIDs) })
}

// Record is the store's, bounded.
func (g *Guard) Record(ctx context.Context, e store.Event) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.Record(ctx, e) })
}

// RecordLaunch is the store's, bounded.
func (g *Guard) RecordLaunch(ctx context.Context, e store.Event) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.RecordLaunch(ctx, e) })
}

// ListEvents is the store's, bounded.
func (g *Guard) ListEvents(ctx context.Context, f store.AuditFilter) ([]store.Event, int, error) {
	v, err := guarded(g, ctx, func(ctx context.Context) (pair[[]store.Event, int], error) {
		x, y, err := g.inner.ListEvents(ctx, f)
		return pair[[]store.Event, int]{x, y}, err
	})
	return v.x, v.y, err
}

// PruneEvents is the store's, bounded.
func (g *Guard) PruneEvents(ctx context.Context, before time.Time, limit int) (int64, error) {
	return guarded(g, ctx, func(ctx context.Context) (int64, error) { return g.inner.PruneEvents(ctx, before, limit) })
}

// AdmitSignIn is the store's, bounded.
func (g *Guard) AdmitSignIn(ctx context.Context, a store.SignIn, r store.RegulationConfig) (id int64, bannedUntil time.Time, err error) {
	v, err := guarded(g, ctx, func(ctx context.Context) (pair[int64, time.Time], error) {
		x, y, err := g.inner.AdmitSignIn(ctx, a, r)
		return pair[int64, time.Time]{x, y}, err
	})
	return v.x, v.y, err
}

// FailSignIn is the store's, bounded.
func (g *Guard) FailSignIn(ctx context.Context, id int64, r store.RegulationConfig, now time.Time) (banStarted bool, err error) {
	return guarded(g, ctx, func(ctx context.Context) (bool, error) { return g.inner.FailSignIn(ctx, id, r, now) })
}

// SucceedSignIn is the store's, bounded.
func (g *Guard) SucceedSignIn(ctx context.Context, id int64) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.SucceedSignIn(ctx, id) })
}

// ListBans is the store's, bounded.
func (g *Guard) ListBans(ctx context.Context, now time.Time) ([]store.Ban, error) {
	return guarded(g, ctx, func(ctx context.Context) ([]store.Ban, error) { return g.inner.ListBans(ctx, now) })
}

// LiftBans is the store's, bounded.
func (g *Guard) LiftBans(ctx context.Context, email, ip string) (int, error) {
	return guarded(g, ctx, func(ctx context.Context) (int, error) { return g.inner.LiftBans(ctx, email, ip) })
}

// PruneSignIns is the store's, bounded.
func (g *Guard) PruneSignIns(ctx context.Context, before time.Time) (int64, error) {
	return guarded(g, ctx, func(ctx context.Context) (int64, error) { return g.inner.PruneSignIns(ctx, before) })
}

// Ping is the store's, bounded.
func (g *Guard) Ping(ctx context.Context) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.Ping(ctx) })
}

// PlatformHeartbeat is the store's, bounded.
func (g *Guard) PlatformHeartbeat(ctx context.Context, c store.PlatformCaller, now time.Time, window time.Duration) (store.PlatformCallers, error) {
	return guarded(g, ctx, func(ctx context.Context) (store.PlatformCallers, error) {
		return g.inner.PlatformHeartbeat(ctx, c, now, window)
	})
}

// CreateTicket is the store's, bounded.
func (g *Guard) CreateTicket(ctx context.Context, t store.Ticket) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.CreateTicket(ctx, t) })
}

// TicketByID is the store's, bounded.
func (g *Guard) TicketByID(ctx context.Context, id string) (store.Ticket, error) {
	return guarded(g, ctx, func(ctx context.Context) (store.Ticket, error) { return g.inner.TicketByID(ctx, id) })
}

// ClaimTicket is the store's, bounded.
func (g *Guard) ClaimTicket(ctx context.Context, id, owner string, staleBefore, now time.Time) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.ClaimTicket(ctx, id, owner, staleBefore, now) })
}

// FinishTicket is the store's, bounded.
func (g *Guard) FinishTicket(ctx context.Context, id, owner, state, sealed, failure string) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.FinishTicket(ctx, id, owner, state, sealed, failure) })
}

// TakeTicket is the store's, bounded.
func (g *Guard) TakeTicket(ctx context.Context, id string, accountID int64) (store.Ticket, error) {
	return guarded(g, ctx, func(ctx context.Context) (store.Ticket, error) { return g.inner.TakeTicket(ctx, id, accountID) })
}

// KeepTickets is the store's, bounded.
func (g *Guard) KeepTickets(ctx context.Context, owner string, now time.Time) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.KeepTickets(ctx, owner, now) })
}

// PruneTickets is the store's, bounded.
func (g *Guard) PruneTickets(ctx context.Context, before time.Time) (int64, error) {
	return guarded(g, ctx, func(ctx context.Context) (int64, error) { return g.inner.PruneTickets(ctx, before) })
}

// StartProvisionJob is the store's, bounded.
func (g *Guard) StartProvisionJob(ctx context.Context, j store.ProvisionJob, staleBefore time.Time) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.StartProvisionJob(ctx, j, staleBefore) })
}

// UpdateProvisionJob is the store's, bounded.
func (g *Guard) UpdateProvisionJob(ctx context.Context, j store.ProvisionJob) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.UpdateProvisionJob(ctx, j) })
}

// UnlinkedAccounts is the store's, bounded.
func (g *Guard) UnlinkedAccounts(ctx context.Context, afterID int64, limit int) ([]store.Account, error) {
	return guarded(g, ctx, func(ctx context.Context) ([]store.Account, error) {
		return g.inner.UnlinkedAccounts(ctx, afterID, limit)
	})
}

// CountLinks is the store's, bounded.
func (g *Guard) CountLinks(ctx context.Context) (linked, unlinked int, err error) {
	v, err := guarded(g, ctx, func(ctx context.Context) (pair[int, int], error) {
		x, y, err := g.inner.CountLinks(ctx)
		return pair[int, int]{x, y}, err
	})
	return v.x, v.y, err
}

// LatestProvisionJob is the store's, bounded.
func (g *Guard) LatestProvisionJob(ctx context.Context) (store.ProvisionJob, error) {
	return guarded(g, ctx, func(ctx context.Context) (store.ProvisionJob, error) { return g.inner.LatestProvisionJob(ctx) })
}

// PausePlatform is the store's, bounded.
func (g *Guard) PausePlatform(ctx context.Context, until time.Time) error {
	return guarded0(g, ctx, func(ctx context.Context) error { return g.inner.PausePlatform(ctx, until) })
}

// Close stops the outage's pings and closes the store.
func (g *Guard) Close() error {
	g.closeOnce.Do(func() { close(g.closed) })
	return g.inner.Close()
}

var _ store.Store = (*Guard)(nil)
