// Package waitline keeps users in a fair line when the platform's pace is
// the limit (a first morning of term). A launch runs in the background at
// its place in the line (its arrival, package pacing's Priority); the user
// gets the editor at once when it is done within a moment, and otherwise
// a waiting page that refreshes itself. The launch's ticket is kept in the
// store, so the refresh may reach any instance: the exchange URL of a
// finished launch waits there sealed (authenticated encryption under the
// session keys), and an instance takes over the launch of one that
// stopped, at the launch's first place.
package waitline

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/launch/pacing"
	"github.com/ssobridge/ssobridge/store"
)

// Launcher runs one launch (launch.Service).
type Launcher interface {
	Launch(ctx context.Context, acct store.Account, returnTo, requestID string) (launch.Result, error)
}

// Store keeps the tickets (accounts.Store).
type Store interface {
	AccountByID(ctx context.Context, id int64) (store.Account, error)
	CreateTicket(ctx context.Context, t store.Ticket) error
	TicketByID(ctx context.Context, id string) (store.Ticket, error)
	ClaimTicket(ctx context.Context, id, owner string, staleBefore, now time.Time) error
	FinishTicket(ctx context.Context, id, owner, state, sealed, failure string) error
	TakeTicket(ctx context.Context, id string, accountID int64) (store.Ticket, error)
	KeepTickets(ctx context.Context, owner string, now time.Time) error
	// LinkFor tells a linked account (one platform call a launch) from
	// one that is not (its look-up, maybe its creation, then the token),
	// for the estimate.
	LinkFor(ctx context.Context, accountID int64) (store.Link, error)
}

// Budget is the platform budget the line waits for (pacing.Budget).
type Budget interface {
	Stats() pacing.Stats
	// MarkSlow tells every instance the platform is slow for a while.
	MarkSlow(d time.Duration)
}

// Sealer seals the exchange URL kept with a finished ticket (the session
// cookie's sealer: every instance has its keys).
type Sealer interface {
	Seal(name string, payload []byte) string
	Open(dst []byte, name, value string) ([]byte, time.Time, error)
}

// Config is how the line behaves.
type Config struct {
	// Patience is how long a request waits for its launch before the
	// waiting page; a launch expected to take longer gets the page at
	// once. Default DefaultPatience.
	Patience time.Duration
	// MaxWait bounds a user's wait in line (platform.max_wait); past it
	// the user is told the platform is too busy. Default DefaultMaxWait.
	MaxWait time.Duration
	Logger  *slog.Logger
	Now     func() time.Time
	// OnLanded observes each launch that reached the editor through the
	// line: how long the user waited since arriving (metrics).
	OnLanded func(wait time.Duration)
	// OnRefused observes each arrival turned away: the line was too long.
	OnRefused func()
}

// Defaults.
const (
	DefaultPatience = 2 * time.Second
	DefaultMaxWait  = 2 * time.Minute
	// staleAfter: a waiting ticket whose owner has not kept it this long is
	// taken over by the instance the user's refresh reaches.
	staleAfter = 10 * time.Second
	keepEvery  = 2 * time.Second
	// ticketLife: a ticket is pruned this long after its launch's bound
	// (the platform's login tokens are short-lived anyway).
	ticketLife = 10 * time.Minute
	// slowFor: after a launch run in its request took longer than the
	// patience, launches go in the line this long.
	slowFor = 30 * time.Second
)

// TooBusyError: the line is longer than MaxWait; try again after
// RetryAfter. Since, when set, is the arrival of a launch whose turn did
// not come within MaxWait: its place in the line, which Rejoin keeps.
type TooBusyError struct {
	RetryAfter time.Duration
	Since      time.Time
}

func (e *TooBusyError) Error() string {
	return fmt.Sprintf("the platform is too busy: the line is longer than the wait allowed; try again in %s", e.RetryAfter.Round(time.Second))
}

// ErrTicketGone: the ticket was used already, expired, or is not the
// user's session's.
var ErrTicketGone = errors.New("waitline: no such launch waiting")

// ErrLaunchedElsewhere: another request of the same session launched
// already (a double click, a second tab) and took the editor; a launch
// gives one login token, never two.
var ErrLaunchedElsewhere = errors.New("waitline: this session's launch was answered in another request")

// Answer is where a launch stands for its user: done (ExchangeURL) or
// waiting (Ticket, about Wait more).
type Answer struct {
	ExchangeURL string // done: the browser goes here
	Result      launch.Result
	Ticket      string        // waiting: the ticket to refresh with
	Wait        time.Duration // waiting: the estimate
	Waited      time.Duration // since the user arrived
	// Ready (Peek only): the launch has ended, done or failed; the next
	// Check takes its answer.
	Ready bool
}

// Done reports whether the launch is done.
func (a Answer) Done() bool { return a.ExchangeURL != "" }

// Line is the line of one instance. It is safe for concurrent use.
type Line struct {
	cfg      Config
	launcher Launcher
	store    Store
	budget   Budget
	sealer   Sealer
	owner    string

	base context.Context // ends at Close: launches in flight stop
	stop context.CancelFunc

	perUnlinked atomic.Uint64 // float64 bits: the platform calls of recent launches of accounts not linked, averaged
	inFlight    sync.WaitGroup

	mu        sync.Mutex
	jobs      map[*job]struct{}   // the launches in the line (not those run in their request)
	bySession map[sessionKey]*job // one launch in flight per session
	tickets   map[string]*job
	holding   bool // tickets are out: logged when it starts and ends
	// slowUntil: a launch run in its request took longer than Patience
	// (the platform is slow); until then launches go in the line.
	slowUntil time.Time
}

// sessionKey names the session a launch is for: one launch in flight
// per session, however often it asks.
type sessionKey struct {
	account int64
	session string
}

// job is a launch in flight on this instance.
type job struct {
	key      sessionKey
	returnTo string
	arrived  time.Time // its place in the line
	came     time.Time // when its request came (after arrived for a kept place): Patience and MaxWait count from then
	calls    atomic.Int32
	expect   float64 // the platform calls it makes in all (0: not known yet); set under Line.mu
	// learned is what its run in the request found out (no platform user
	// yet): the run in the line takes it instead of asking again.
	learned apiclient.Learned
	done    chan struct{}
	cancel  context.CancelFunc // ends the launch (its session ended); set under Line.mu
	ended   atomic.Bool        // cancelled by End
	lined   bool               // in the line (else run in its request); set under Line.mu

	mu       sync.Mutex // taken before Line.mu, never after
	finished bool
	res      launch.Result
	err      error
	ticket   string // the ticket, once the user got the page
}

// New makes a line; Run keeps its tickets alive, Close stops it.
func New(cfg Config, l Launcher, s Store, b Budget, sealer Sealer) *Line {
	if cfg.Patience <= 0 {
		cfg.Patience = DefaultPatience
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	base, stop := context.WithCancel(context.Background())
	ln := &Line{cfg: cfg, launcher: l, store: s, budget: b, sealer: sealer, owner: randomID(8),
		base: base, stop: stop, jobs: map[*job]struct{}{}, bySession: map[sessionKey]*job{}, tickets: map[string]*job{}}
	ln.perUnlinked.Store(math.Float64bits(3)) // look up, create, token: a new user's
	return ln
}

func randomID(n int) string { return randid.Hex(n) }

// Join puts the launch of acct's session in the line: the answer is done
// when the launch ends within Patience (a failure is its error), waiting
// otherwise (at once when the line is long). Without a line (no platform
// call waiting for its turn, no pause, no launch of the line in flight,
// no slow platform lately) the launch runs in the request, told not to
// wait for the platform's pace: should a call have to wait, it goes on in
// the line from where it stands, and the request waits for it what is
// left of Patience. A session holds one place: a further Join while its
// launch is in flight waits behind it (within the same Patience) and
// answers its waiting page once it has one, never a second place or a
// token of its own meanwhile. A line longer than MaxWait refuses the
// arrival (TooBusyError).
func (l *Line) Join(ctx context.Context, acct store.Account, session, returnTo, requestID string) (Answer, error) {
	return l.join(ctx, acct, session, returnTo, requestID, time.Time{})
}

// Rejoin is Join for a person told the platform was too busy because
// their launch's turn did not come within MaxWait (TooBusyError.Since),
// who comes back: the launch takes its place of then (since), ahead of
// everyone who arrived after, bounded by MaxWait from now, and the line's
// length does not refuse it.
func (l *Line) Rejoin(ctx context.Context, acct store.Account, session, returnTo, requestID string, since time.Time) (Answer, error) {
	return l.join(ctx, acct, session, returnTo, requestID, since)
}

func (l *Line) join(ctx context.Context, acct store.Account, session, returnTo, requestID string, since time.Time) (Answer, error) {
	now := l.cfg.Now()
	arrived := now
	if !since.IsZero() && since.Before(now) {
		arrived = since
	}
	var expect float64 // known only where there is a line: no read on the way without one
	if l.Waiting() > 0 || l.budget.Stats().Waiting > 0 {
		expect = l.expectedCalls(ctx, acct.ID)
	}
	key := sessionKey{acct.ID, session}
	var patience <-chan time.Time // for a request that waits behind its session's launch
	for {
		l.mu.Lock()
		j, ok := l.bySession[key]
		if !ok {
			break // l.mu held
		}
		l.mu.Unlock()
		if patience == nil {
			t := time.NewTimer(l.cfg.Patience)
			defer t.Stop()
			patience = t.C
		}
		j.mu.Lock()
		waiting := j.ticket != ""
		j.mu.Unlock()
		if waiting {
			return l.page(ctx, j, false) // the session's launch waits: its page
		}
		select {
		case <-j.done:
			// Answered to the request that started it: this one's turn
			// (a double click on a quick platform lands twice).
			continue
		case <-patience:
			return l.page(ctx, j, false)
		case <-ctx.Done():
			return Answer{}, ctx.Err()
		}
	}
	if st := l.budget.Stats(); len(l.jobs) == 0 && st.Waiting == 0 && !st.Paused && !l.slowLocked(now) {
		j := l.newJobLocked(key, returnTo, arrived, now, "", false)
		l.mu.Unlock()
		return l.inline(ctx, j, acct, returnTo, requestID)
	}
	est := l.estimateLocked(&job{arrived: arrived, expect: expect})
	if est > l.cfg.MaxWait && arrived.Equal(now) {
		l.mu.Unlock()
		if l.cfg.OnRefused != nil {
			l.cfg.OnRefused()
		}
		return Answer{}, &TooBusyError{RetryAfter: est - l.cfg.MaxWait + time.Minute}
	}
	j := l.newJobLocked(key, returnTo, arrived, now, "", true)
	j.expect = expect
	l.mu.Unlock()
	l.background(j, acct, returnTo, requestID)
	wait := l.cfg.Patience
	if est > wait {
		wait = 0 // the line says it takes longer: the page at once
	}
	return l.await(ctx, j, wait)
}

// slowLocked reports whether the platform is slow: a launch run in its
// request took longer than Patience lately, or one in flight has. Called
// with l.mu held.
func (l *Line) slowLocked(now time.Time) bool {
	if now.Before(l.slowUntil) || l.budget.Stats().Slow {
		return true // slow as this instance saw it, or as another did
	}
	for _, j := range l.bySession {
		if !j.lined && now.Sub(j.came) > l.cfg.Patience {
			return true
		}
	}
	return false
}

// inline runs j's launch in its request. Should a platform call have to
// wait for its turn, the launch goes on in the line (at its arrival's
// place, from where it stands) and the request waits for it what is left
// of Patience.
func (l *Line) inline(ctx context.Context, j *job, acct store.Account, returnTo, requestID string) (Answer, error) {
	ctx, cancel := context.WithDeadline(ctx, l.deadline(j))
	defer cancel()
	l.mu.Lock()
	j.cancel = cancel // End reaches it
	if j.ended.Load() {
		cancel()
	}
	l.mu.Unlock()
	// Its platform calls are bounded by what is left of Patience: a
	// platform slower than that cuts the run off, and its person gets the
	// waiting page at Patience as in the line, not a blank tab. (The
	// store's waits are not cut: a busy database answers in its request.)
	patience := time.Now().Add(l.cfg.Patience - l.cfg.Now().Sub(j.came))
	rctx := pacing.WithoutWaiting(pacing.WithPriority(apiclient.WithPatience(ctx, patience), pacing.Priority{Since: j.arrived}))
	if !l.run(rctx, j, acct, returnTo, requestID, true) {
		expect := l.expectedCalls(ctx, acct.ID)
		l.mu.Lock()
		l.jobs[j] = struct{}{} // in the line now
		j.expect = expect
		l.mu.Unlock()
		l.background(j, acct, returnTo, requestID)
		return l.await(ctx, j, l.cfg.Patience-l.cfg.Now().Sub(j.came))
	}
	return l.page(ctx, j, true)
}

// await waits up to wait for j, then answers its request (the one that
// started it).
func (l *Line) await(ctx context.Context, j *job, wait time.Duration) (Answer, error) {
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-j.done:
		case <-t.C:
		case <-ctx.Done():
			return Answer{}, ctx.Err() // the launch goes on; its token expires unused
		}
	}
	return l.page(ctx, j, true)
}

// page answers a request for j: the editor when j is done and no waiting
// page was given out for it (only to the request that started it,
// starter), else j's waiting page, whose ticket is made (and stored, so a
// refresh reaching another instance finds it) the first time. A request
// that waited behind j and finds it answered to its starter meanwhile
// gets ErrLaunchedElsewhere.
func (l *Line) page(ctx context.Context, j *job, starter bool) (Answer, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	now := l.cfg.Now()
	if j.ticket == "" && j.finished {
		if !starter {
			return Answer{}, ErrLaunchedElsewhere
		}
		return l.answerDone(j)
	}
	l.mu.Lock()
	est := l.estimateLocked(j)
	l.mu.Unlock()
	if j.ticket != "" {
		return Answer{Ticket: j.ticket, Wait: est, Waited: now.Sub(j.arrived)}, nil
	}
	id := randomID(16)
	tk := store.Ticket{ID: id, AccountID: j.key.account, SessionID: j.key.session, ReturnTo: j.returnTo, ArrivedAt: j.arrived,
		ETA: now.Add(est), Owner: l.owner, SeenAt: now, ExpiresAt: l.deadline(j).Add(ticketLife)}
	if err := l.store.CreateTicket(context.WithoutCancel(ctx), tk); err != nil {
		return Answer{}, err
	}
	j.ticket = id
	l.mu.Lock()
	l.tickets[id] = j
	l.holdingLocked()
	l.mu.Unlock()
	return Answer{Ticket: id, Wait: est, Waited: now.Sub(j.arrived)}, nil
}

// answerDone is the answer of a job done before it got a ticket.
func (l *Line) answerDone(j *job) (Answer, error) {
	if j.err != nil {
		return Answer{}, j.err
	}
	waited := l.cfg.Now().Sub(j.arrived)
	if l.cfg.OnLanded != nil && j.lined {
		l.cfg.OnLanded(waited)
	}
	return Answer{ExchangeURL: j.res.ExchangeURL, Result: j.res, Waited: waited}, nil
}

// newJobLocked makes the launch of a session (key), at its place in the
// line (arrived), whose request came at came: in the line (lined) or run
// in its request. Called with l.mu held.
func (l *Line) newJobLocked(key sessionKey, returnTo string, arrived, came time.Time, ticket string, lined bool) *job {
	j := &job{key: key, returnTo: returnTo, arrived: arrived, came: came, done: make(chan struct{}), ticket: ticket, lined: lined}
	if lined {
		l.jobs[j] = struct{}{}
	}
	if _, taken := l.bySession[key]; !taken {
		l.bySession[key] = j
	}
	if ticket != "" {
		l.tickets[ticket] = j
		l.holdingLocked()
	}
	return j
}

// deadline is j's bound: MaxWait from when its request came.
func (l *Line) deadline(j *job) time.Time { return j.came.Add(l.cfg.MaxWait) }

// background runs j's launch in the line, bounded by its deadline.
func (l *Line) background(j *job, acct store.Account, returnTo, requestID string) {
	ctx, cancel := context.WithDeadline(l.base, l.deadline(j))
	l.mu.Lock()
	j.lined = true
	j.cancel = cancel
	if j.ended.Load() {
		cancel() // its session ended while it ran in its request
	}
	l.mu.Unlock()
	l.inFlight.Add(1)
	go func() {
		defer l.inFlight.Done()
		defer cancel()
		l.run(pacing.WithPriority(ctx, pacing.Priority{Since: j.arrived}), j, acct, returnTo, requestID, false)
	}()
}

// run runs j's launch and records its end (with its ticket, if it has one
// by then); it reports false, having recorded nothing, when a launch run
// in its request (inline) was told its call would wait.
func (l *Line) run(ctx context.Context, j *job, acct store.Account, returnTo, requestID string, inline bool) bool {
	ctx = apiclient.WithLearned(apiclient.WithCallCounter(ctx, &j.calls), &j.learned)
	res, err := l.launcher.Launch(ctx, acct, returnTo, requestID)
	switch {
	case inline && (errors.Is(err, pacing.ErrWouldWait) || errors.Is(err, apiclient.ErrOutOfPatience)) && !j.ended.Load():
		if errors.Is(err, apiclient.ErrOutOfPatience) {
			l.markSlow() // cut off at Patience: the platform itself is slow
		}
		return false
	case err == nil:
		if res.Path != launch.PathReturning {
			l.learn(res.PlatformCalls)
		}
	case j.ended.Load():
		err = launch.ErrSessionEnded
	case !inline && l.base.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		// Its turn did not come within the bound.
		err = &TooBusyError{RetryAfter: time.Minute, Since: j.arrived}
	}
	j.mu.Lock()
	j.res, j.err, j.finished = res, err, true
	tid := j.ticket
	j.mu.Unlock()
	// Out of the line before its waiter wakes: whoever it answers sees it
	// no longer in flight.
	now := l.cfg.Now()
	l.mu.Lock()
	delete(l.jobs, j)
	if l.bySession[j.key] == j {
		delete(l.bySession, j.key)
	}
	slow := inline && now.Sub(j.came) > l.cfg.Patience
	l.mu.Unlock()
	if slow {
		l.markSlow()
	}
	close(j.done)
	switch {
	case tid == "":
	case !inline && l.base.Err() != nil:
		// Stopped (Close): the ticket stays waiting, and the instance the
		// user's refresh reaches takes the launch over.
	case j.ended.Load():
		l.forget(tid) // its session ended: the store dropped the ticket
	default:
		l.finish(tid, j)
	}
	return true
}

// markSlow notes that the platform itself is slow (a launch run in its
// request outlasted Patience): for a while, launches go in the line,
// where their users get the page after Patience, on this instance and,
// through the store, on every other.
func (l *Line) markSlow() {
	l.mu.Lock()
	l.slowUntil = l.cfg.Now().Add(slowFor)
	l.mu.Unlock()
	l.budget.MarkSlow(slowFor)
}

// End stops the launches in flight of the account's session (every
// session of the account when session is ""): the session ended, so
// nobody may receive what they would bring. The store drops their
// tickets with the session (accounts.Store); a launch of the account on
// another instance is stopped there by the launch's own check of the
// account before its token (package launch).
func (l *Line) End(accountID int64, session string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	inFlight := slices.Collect(maps.Keys(l.jobs))
	for _, j := range l.bySession {
		if !j.lined {
			inFlight = append(inFlight, j) // run in its request
		}
	}
	for _, j := range inFlight {
		if j.key.account == accountID && (session == "" || j.key.session == session) {
			j.ended.Store(true)
			if j.cancel != nil {
				j.cancel()
			}
			if l.bySession[j.key] == j {
				delete(l.bySession, j.key)
			}
		}
	}
}

// failure is a failed launch as kept with its ticket.
type failure struct {
	launch.Failure
	Text     string `json:"text"`
	TooBusy  bool   `json:"too_busy,omitempty"`
	RetrySec int    `json:"retry_s,omitempty"`
	SinceMS  int64  `json:"since_ms,omitempty"` // a too-busy launch's place (TooBusyError.Since)
}

// finish records the job's end with its ticket.
func (l *Line) finish(id string, j *job) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	state, sealed, failed := store.TicketDone, "", ""
	if j.err != nil {
		state = store.TicketFailed
		f := failure{Failure: launch.Explain(j.err), Text: j.err.Error()}
		var tb *TooBusyError
		if errors.As(j.err, &tb) {
			f.TooBusy, f.RetrySec = true, int(tb.RetryAfter/time.Second)
			if !tb.Since.IsZero() {
				f.SinceMS = tb.Since.UnixMilli()
			}
		}
		b, _ := json.Marshal(f) // plain fields: never fails
		failed = string(b)
	} else {
		sealed = l.sealer.Seal(sealName(id), []byte(j.res.ExchangeURL))
	}
	if err := l.store.FinishTicket(ctx, id, l.owner, state, sealed, failed); err != nil {
		// Another instance took it over (it will finish it), or the store
		// is away: the user's refresh finds the ticket waiting, stale, and
		// the launch runs again there (its token here expires unused).
		l.cfg.Logger.Warn("waiting launch: could not record its end", "err", err)
	}
	l.forget(id)
}

// forget drops a ticket this instance no longer answers for.
func (l *Line) forget(id string) {
	l.mu.Lock()
	delete(l.tickets, id)
	l.holdingLocked()
	l.mu.Unlock()
}

// sealName binds a sealed exchange URL to its ticket.
func sealName(id string) string { return "launch-ticket:" + id }

// Check answers a waiting user's refresh of ticket id: done (once: the
// ticket is used up), still waiting, or the launch's failure. The ticket
// must be the one accountID's session made, and not expired
// (ErrTicketGone otherwise). A ticket whose instance stopped is taken over
// here, at its place.
func (l *Line) Check(ctx context.Context, id string, accountID int64, session string) (Answer, error) {
	return l.check(ctx, id, accountID, session, false)
}

// Peek is Check without using the ticket up: a launch that has ended is
// answered Ready, and the waiting page's script then loads Check's answer
// (the editor, or the failure's page). A ticket whose instance stopped is
// taken over here too.
func (l *Line) Peek(ctx context.Context, id string, accountID int64, session string) (Answer, error) {
	return l.check(ctx, id, accountID, session, true)
}

func (l *Line) check(ctx context.Context, id string, accountID int64, session string, peek bool) (Answer, error) {
	if !validID(id) {
		return Answer{}, ErrTicketGone
	}
	t, err := l.store.TicketByID(ctx, id)
	now := l.cfg.Now()
	if errors.Is(err, store.ErrNotFound) || (err == nil && (t.AccountID != accountID || t.SessionID != session || now.After(t.ExpiresAt))) {
		return Answer{}, ErrTicketGone
	}
	if err != nil {
		return Answer{}, err
	}
	waited := now.Sub(t.ArrivedAt)
	switch {
	case t.State != store.TicketWaiting && peek:
		return Answer{Ticket: id, Waited: waited, Ready: true}, nil
	case t.State != store.TicketWaiting:
		return l.take(ctx, id, accountID, waited)
	}
	l.mu.Lock()
	j, local := l.tickets[id]
	var est time.Duration
	if local {
		est = l.estimateLocked(j)
	}
	l.mu.Unlock()
	if local {
		return Answer{Ticket: id, Wait: est, Waited: waited}, nil
	}
	if now.Sub(t.SeenAt) > staleAfter {
		if err := l.takeOver(ctx, t, now); err != nil {
			return Answer{}, err
		}
	}
	return Answer{Ticket: id, Wait: max(time.Second, t.ETA.Sub(now)), Waited: waited}, nil
}

// take uses a finished ticket up.
func (l *Line) take(ctx context.Context, id string, accountID int64, waited time.Duration) (Answer, error) {
	t, err := l.store.TakeTicket(ctx, id, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return Answer{}, ErrTicketGone // taken by a refresh a moment before
	}
	if err != nil {
		return Answer{}, err
	}
	if t.State == store.TicketFailed {
		var f failure
		if err := json.Unmarshal([]byte(t.Failure), &f); err != nil {
			return Answer{}, fmt.Errorf("waitline: ticket's failure: %w", err)
		}
		if f.TooBusy {
			tb := &TooBusyError{RetryAfter: time.Duration(f.RetrySec) * time.Second}
			if f.SinceMS != 0 {
				tb.Since = time.UnixMilli(f.SinceMS)
			}
			return Answer{}, tb
		}
		return Answer{}, &launch.Reported{Failure: f.Failure, Text: f.Text}
	}
	url, _, err := l.sealer.Open(nil, sealName(id), t.Sealed)
	if err != nil {
		return Answer{}, fmt.Errorf("waitline: ticket's exchange URL: %w", err)
	}
	if l.cfg.OnLanded != nil {
		l.cfg.OnLanded(waited)
	}
	return Answer{ExchangeURL: string(url), Waited: waited}, nil
}

// takeOver runs the launch of a ticket whose instance stopped.
func (l *Line) takeOver(ctx context.Context, t store.Ticket, now time.Time) error {
	if err := l.store.ClaimTicket(ctx, t.ID, l.owner, now.Add(-staleAfter), now); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil // another instance took it a moment before
		}
		return err
	}
	acct, err := l.store.AccountByID(ctx, t.AccountID)
	if err != nil {
		return err
	}
	l.cfg.Logger.Info("waiting launch taken over from a stopped instance", "account_id", t.AccountID, "waited", now.Sub(t.ArrivedAt).Round(time.Millisecond).String())
	expect := l.expectedCalls(ctx, t.AccountID)
	l.mu.Lock()
	j := l.newJobLocked(sessionKey{t.AccountID, t.SessionID}, t.ReturnTo, t.ArrivedAt, t.ExpiresAt.Add(-ticketLife-l.cfg.MaxWait), t.ID, true)
	j.expect = expect
	l.mu.Unlock()
	l.background(j, acct, t.ReturnTo, "")
	return nil
}

// validID: a ticket id is 32 hex digits.
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// learn averages the platform calls of a launch of an account that was
// not linked (for the estimate): 3 for a new user, 2 for one the
// platform had, however the morning mixes them.
func (l *Line) learn(calls int) {
	for {
		old := l.perUnlinked.Load()
		v := 0.9*math.Float64frombits(old) + 0.1*float64(calls)
		if l.perUnlinked.CompareAndSwap(old, math.Float64bits(v)) {
			return
		}
	}
}

// expectedCalls is how many platform calls a launch of the account will
// make: one (the token) when it is linked, the learnt figure of launches
// of accounts not linked otherwise (and when the store cannot say).
func (l *Line) expectedCalls(ctx context.Context, accountID int64) float64 {
	if _, err := l.store.LinkFor(ctx, accountID); err == nil {
		return 1
	}
	return math.Float64frombits(l.perUnlinked.Load())
}

// remaining is the platform calls j has still to make.
func (l *Line) remaining(j *job) float64 {
	expect := j.expect
	if expect == 0 {
		expect = math.Float64frombits(l.perUnlinked.Load())
	}
	return max(0, expect-float64(j.calls.Load()))
}

// estimateLocked is how long until j is done (j.arrived and j.expect
// for a launch arriving now): the platform calls the launches ahead of
// it still make (one for a linked account, the learnt figure for one
// not linked, less those made), and its own, at this instance's share of
// the rate, after any pause.
func (l *Line) estimateLocked(j *job) time.Duration {
	st := l.budget.Stats()
	if st.Share <= 0 {
		return st.PausedFor // not paced: only a pause holds the calls
	}
	calls, ahead := l.remaining(j), 0
	for o := range l.jobs {
		if o == j || !o.arrived.Before(j.arrived) {
			continue
		}
		calls += l.remaining(o)
		ahead++
	}
	if ahead == 0 && st.Waiting == 0 && !st.Paused {
		// Nobody ahead and no call waiting for its turn: its calls go at
		// the platform's speed, not its pace.
		return st.PausedFor
	}
	pace := st.Share
	if st.Pace > 0 {
		// The pace the line really got lately, and the share as it stands
		// (which may have just changed: an instance came or left), alike.
		pace = (st.Share + st.Pace) / 2
	}
	return st.PausedFor + time.Duration(calls/pace*float64(time.Second))
}

// Waiting is the number of launches in flight on this instance (the
// line's length, for metrics).
func (l *Line) Waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.jobs)
}

// holdingLocked logs when the line starts and stops holding users on the
// waiting page.
func (l *Line) holdingLocked() {
	switch {
	case len(l.tickets) > 0 && !l.holding:
		l.holding = true
		l.cfg.Logger.Info("holding users in line: the platform's pace is the limit", "in_flight", len(l.jobs))
	case len(l.tickets) == 0 && l.holding:
		l.holding = false
		l.cfg.Logger.Info("no longer holding users in line", "in_flight", len(l.jobs))
	}
}

// Run keeps this instance's tickets alive (their owner's heartbeat) until
// ctx ends.
func (l *Line) Run(ctx context.Context) {
	t := time.NewTicker(keepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		l.mu.Lock()
		n := len(l.tickets)
		l.mu.Unlock()
		if n == 0 {
			continue
		}
		kctx, cancel := context.WithTimeout(ctx, keepEvery)
		if err := l.store.KeepTickets(kctx, l.owner, l.cfg.Now()); err != nil {
			l.cfg.Logger.Warn("waiting launches: heartbeat failed", "err", err)
		}
		cancel()
	}
}

// Drain waits until the launches in flight have ended (their ends
// recorded with their tickets), or ctx ends: a stopping instance lets its
// waiting users' launches finish, for their next refresh on any instance.
func (l *Line) Drain(ctx context.Context) error {
	done := make(chan struct{})
	go func() { l.inFlight.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the launches in flight; their tickets stay waiting, for
// another instance (or this one, started again) to take over.
func (l *Line) Close() { l.stop() }
