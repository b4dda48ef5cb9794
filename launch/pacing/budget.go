// Package pacing keeps the bridge's calls to the platform under the
// platform's rate limit, which every instance shares (one credential): a
// token bucket per instance holding the instance's share of the configured
// rate (the rate divided by the instances calling, counted through the
// store), and a pause that a 429 puts on every caller of every instance.
// Without a configured rate the budget learns one from the 429s: every
// 429 holds every caller for its Retry-After, and the instance then paces
// itself at a rate it lowers at each 429 (multiplicatively) and raises a
// little each second without one (additively).
//
// Calls that cannot go at once wait in a line ordered by Priority: a
// user's calls before background work, and among each the earliest
// arrival first, so a launch's second and third calls do not queue behind
// every launch that arrived after it.
package pacing

import (
	"container/heap"
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/store"
	"golang.org/x/time/rate"
)

// Shared is where the instances calling the platform meet: the store.
type Shared interface {
	// PlatformHeartbeat records that the caller calls the platform at now
	// and returns the callers heard from within window (itself included)
	// and until when every caller is to hold its calls.
	PlatformHeartbeat(ctx context.Context, c store.PlatformCaller, now time.Time, window time.Duration) (store.PlatformCallers, error)
	// PausePlatform holds every instance's calls until then (a later
	// pause wins).
	PausePlatform(ctx context.Context, until time.Time) error
	// MarkPlatformSlow tells every instance the platform is slow until
	// then (a later time wins).
	MarkPlatformSlow(ctx context.Context, until time.Time) error
}

// Config is how the budget paces.
type Config struct {
	// Rate is the platform's limit for the credential, in requests a
	// second, for all instances together; 0: not paced, only paused.
	Rate float64
	// Burst is how many calls may go at once (default: Rate rounded up).
	Burst int
	// Now and Sleep are the clock (tests switch waiting off).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// OnPause, when set, is told of each pause (its length).
	OnPause func(time.Duration)
	// Background: this process runs background work only (provisioning)
	// and serves no users. While users wait on any instance, it takes
	// BackgroundWeight of a serving instance's share.
	Background bool
}

// BackgroundWeight is a background-only process's weight in the shares
// while users wait somewhere: the rest of the rate goes to the users.
const BackgroundWeight = 0.05

// Heartbeat is how often an instance tells the others it calls, and reads
// their pause; an instance unheard of for liveWindow no longer counts.
const (
	Heartbeat  = 250 * time.Millisecond
	liveWindow = 3 * time.Second
)

// Budget paces one instance's calls. It is safe for concurrent use.
type Budget struct {
	cfg      Config
	shared   Shared
	instance string

	mu          sync.Mutex
	lim         *rate.Limiter
	callers     store.PlatformCallers // as last counted
	busyAt      time.Time             // a user's call last waited in line
	activeAt    time.Time             // a call last asked
	activeBeat  time.Time             // the last heartbeat that told the others it calls
	learn       learning              // without a configured rate
	wasActive   bool                  // the others count it among the callers (activeBeat within liveWindow)
	pausedUntil time.Time             // no call before then
	slowUntil   time.Time             // the platform is slow until then (seen here or by another instance)
	line        line                  // the calls waiting, in Priority order
	seq         uint64                // arrival order among equal priorities
	dispatching bool                  // a goroutine hands out the line's turns
	pace        pace                  // the turns the line was given lately
}

// pace counts the turns handed out to the line (calls that waited) per
// second, while the line lasts: the pace this instance really gets, which
// the share (a count of instances) only foretells.
type pace struct {
	since  time.Time           // the line's start; zero: no line
	second int64               // the Unix second of counts[second%len]
	counts [paceWindow + 1]int // turns per second, the current one included
}

// paceWindow is the seconds over which the pace is measured.
const paceWindow = 5

// turn counts a turn handed out at now.
func (p *pace) turn(now time.Time) {
	p.roll(now)
	p.counts[p.second%int64(len(p.counts))]++
}

// roll moves the window to now's second, zeroing the seconds it passes.
func (p *pace) roll(now time.Time) {
	sec := now.Unix()
	if sec-p.second > int64(len(p.counts)) {
		p.counts, p.second = [len(p.counts)]int{}, sec // every second in it is long gone
		return
	}
	for p.second < sec {
		p.second++
		p.counts[p.second%int64(len(p.counts))] = 0
	}
}

// perSecond is the turns a second over the last paceWindow whole
// seconds, once the line has lasted that long (0 otherwise).
func (p *pace) perSecond(now time.Time) float64 {
	if p.since.IsZero() || now.Sub(p.since) < (paceWindow+1)*time.Second {
		return 0
	}
	p.roll(now)
	n := 0
	for i := int64(1); i <= paceWindow; i++ {
		n += p.counts[(p.second-i)%int64(len(p.counts))]
	}
	return float64(n) / paceWindow
}

// Priority is a call's place in the line: Background work goes after
// every user's call; within each, the earlier Since goes first.
type Priority struct {
	Background bool
	Since      time.Time // when the work the call belongs to arrived
}

type priorityKey struct{}

type noWaitKey struct{}

// ErrWouldWait: a call made with WithoutWaiting could not go at once.
var ErrWouldWait = errors.New("pacing: the call would wait for its turn")

// WithoutWaiting marks the calls made with ctx as ones that must not wait
// for their turn: Wait answers ErrWouldWait instead (a launch run in its
// request then goes on in the line, where its user gets the waiting page).
// A pause (a 429's Retry-After) and a retry (WaitRetry) are waited for.
func WithoutWaiting(ctx context.Context) context.Context {
	return context.WithValue(ctx, noWaitKey{}, true)
}

// MustNotWait reports whether ctx was made WithoutWaiting.
func MustNotWait(ctx context.Context) bool {
	v, _ := ctx.Value(noWaitKey{}).(bool)
	return v
}

// WaitRetry is Wait for a retry of a call under way: it waits its turn
// even when ctx was made WithoutWaiting, so a call is never cut between
// its attempts (the client's count of retries stands).
func (b *Budget) WaitRetry(ctx context.Context) error {
	return b.Wait(context.WithValue(ctx, noWaitKey{}, false))
}

// WithPriority gives the platform calls made with ctx their place in the
// line. A call without one is a user's, arrived when it asks.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityOf is ctx's priority and whether it has one.
func PriorityOf(ctx context.Context) (Priority, bool) {
	p, ok := ctx.Value(priorityKey{}).(Priority)
	return p, ok
}

// waiter is a call in the line.
type waiter struct {
	p     Priority
	seq   uint64
	turn  chan struct{} // closed when the call may go
	index int           // in the heap; -1 once out of it
}

// line is a heap of waiters, the next to go first.
type line []*waiter

func (l line) Len() int { return len(l) }
func (l line) Less(i, j int) bool {
	a, b := l[i], l[j]
	if a.p.Background != b.p.Background {
		return !a.p.Background
	}
	if !a.p.Since.Equal(b.p.Since) {
		return a.p.Since.Before(b.p.Since)
	}
	return a.seq < b.seq
}
func (l line) Swap(i, j int) { l[i], l[j] = l[j], l[i]; l[i].index = i; l[j].index = j }
func (l *line) Push(x any) {
	w := x.(*waiter)
	w.index = len(*l)
	*l = append(*l, w)
}
func (l *line) Pop() any {
	old := *l
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*l = old[:len(old)-1]
	w.index = -1
	return w
}

// New makes a budget; Run keeps its share and pause current.
func New(cfg Config, shared Shared) *Budget {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.Burst <= 0 {
		cfg.Burst = max(1, int(math.Ceil(cfg.Rate)))
	}
	b := &Budget{cfg: cfg, shared: shared, instance: randomID(), lim: rate.NewLimiter(rate.Inf, 1)}
	if cfg.Background {
		b.callers.Background = 1
	} else {
		b.callers.Serving = 1
	}
	b.applyLocked()
	return b
}

func randomID() string { return randid.Hex(8) }

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// share is this process's part of the rate among the callers that call
// (an idle one takes nothing from the others; this one counts itself
// whether it calls or not, so that its first call has a share): equal
// parts, except that background-only processes weigh BackgroundWeight
// while users wait on a serving instance. Between heartbeats the parts
// may add up to more than the rate (an idle instance's first calls): the
// platform's burst takes that.
func share(c store.PlatformCallers, background, counted bool) float64 {
	wb, own := 1.0, 1.0
	if c.Busy > 0 {
		wb = BackgroundWeight
	}
	if background {
		own = wb
	}
	others := float64(c.ActiveServing) + wb*float64(c.ActiveBackground)
	if counted {
		others -= own // the heartbeat counted this process among them
	}
	return own / (own + max(0, others))
}

// learning is the rate learned from the 429s (no rate configured).
type learning struct {
	rate     float64   // calls a second; 0: none learned, not paced
	second   time.Time // start of the current second of counting
	sent     int       // calls sent in it
	sentPrev int       // calls sent in the second before
	lowered  time.Time // the last 429 that lowered the rate
	raised   time.Time
}

// Learning: how the rate moves without a configured one.
const (
	learnDown     = 0.7             // a 429 lowers the rate to this part
	learnFirst    = 0.5             // the first 429: this part of the last second's calls
	learnUpEvery  = time.Second     // no 429 for this long raises the rate
	learnUp       = 0.05            // by this part (at least learnUpMin)
	learnUpMin    = 0.5             // calls a second
	learnCalmDown = 2 * time.Second // after a 429, no raise for this long
)

// sentLocked counts a call sent, when the rate is being learned: per
// second, this one and the one before (O(1) on every call).
func (b *Budget) sentLocked(now time.Time) {
	if b.cfg.Rate > 0 {
		return
	}
	b.rollLocked(now)
	b.learn.sent++
}

// rollLocked moves the count's second forward to the one holding now.
func (b *Budget) rollLocked(now time.Time) {
	switch el := now.Sub(b.learn.second); {
	case el < time.Second:
	case el < 2*time.Second:
		b.learn.second, b.learn.sentPrev, b.learn.sent = b.learn.second.Add(time.Second), b.learn.sent, 0
	default:
		b.learn.second, b.learn.sentPrev, b.learn.sent = now, 0, 0
	}
}

// sentLastSecond is about how many calls went in the second before now:
// this second's, and the part of the previous one still within it.
func (b *Budget) sentLastSecond(now time.Time) float64 {
	b.rollLocked(now)
	part := 1 - float64(now.Sub(b.learn.second))/float64(time.Second)
	return float64(b.learn.sent) + part*float64(b.learn.sentPrev)
}

// lowerLocked lowers the learned rate at a 429: once for a burst of
// 429s (those within learnUpEvery of the last lowering).
func (b *Budget) lowerLocked(now time.Time) {
	if b.cfg.Rate > 0 || now.Sub(b.learn.lowered) < learnUpEvery {
		return
	}
	if b.learn.rate == 0 {
		b.learn.rate = max(1, learnFirst*b.sentLastSecond(now))
	} else {
		b.learn.rate = max(1, learnDown*b.learn.rate)
	}
	b.learn.lowered, b.learn.raised = now, now
	b.applyLocked()
}

// raiseLocked raises the learned rate after a calm second.
func (b *Budget) raiseLocked(now time.Time) {
	if b.cfg.Rate > 0 || b.learn.rate == 0 || now.Sub(b.learn.lowered) < learnCalmDown || now.Sub(b.learn.raised) < learnUpEvery {
		return
	}
	b.learn.rate += max(learnUpMin, learnUp*b.learn.rate)
	b.learn.raised = now
	b.applyLocked()
}

// applyLocked sets the instance's share of the rate and burst.
func (b *Budget) applyLocked() {
	if b.cfg.Rate <= 0 {
		lim := rate.Inf
		if b.learn.rate > 0 {
			lim = rate.Limit(b.learn.rate)
		}
		b.lim.SetLimitAt(b.cfg.Now(), lim)
		b.lim.SetBurstAt(b.cfg.Now(), max(1, int(b.learn.rate/4)))
		return
	}
	f := share(b.callers, b.cfg.Background, b.wasActive)
	b.lim.SetLimitAt(b.cfg.Now(), rate.Limit(b.cfg.Rate*f))
	b.lim.SetBurstAt(b.cfg.Now(), max(1, int(math.Ceil(float64(b.cfg.Burst)*f))))
}

// Wait returns when a call may be sent: after any pause, within the
// instance's share of the rate, and after every call ahead of it in the
// line (its priority from WithPriority). Retries wait too, so they are
// not a second source of load.
func (b *Budget) Wait(ctx context.Context) error {
	now := b.cfg.Now()
	p, ok := PriorityOf(ctx)
	if !ok {
		p.Since = now
	}
	b.mu.Lock()
	b.activeAt = now
	// Nobody waits and the bucket has a call: go (no goroutine, no heap).
	if len(b.line) == 0 && !now.Before(b.pausedUntil) && b.lim.AllowN(now, 1) {
		b.sentLocked(now)
		b.mu.Unlock()
		return nil
	}
	if MustNotWait(ctx) && !now.Before(b.pausedUntil) {
		// A pause is the platform's own word (a 429) to a launch already
		// under way: it waits it out with the others, rather than start
		// again in the line with one more call. A turn in the bucket or
		// behind others it does not wait for.
		b.mu.Unlock()
		return ErrWouldWait
	}
	b.seq++
	w := &waiter{p: p, seq: b.seq, turn: make(chan struct{})}
	if !p.Background {
		b.busyAt = now
	}
	if len(b.line) == 0 && b.pace.since.IsZero() {
		b.pace.since = now
	}
	heap.Push(&b.line, w)
	if !b.dispatching {
		b.dispatching = true
		go b.dispatch()
	}
	b.mu.Unlock()
	select {
	case <-w.turn:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		if w.index >= 0 {
			heap.Remove(&b.line, w.index)
		}
		b.mu.Unlock()
		return ctx.Err()
	}
}

// dispatch hands out turns to the line, first in line first, while anyone
// waits: it waits out pauses and the bucket, then lets the head go.
//
// A sleep is trusted to have waited out what it was asked to: the pause
// or the turn it slept for is not waited for again (a clock that did not
// move, as in tests with waiting switched off, does not make it spin).
func (b *Budget) dispatch() {
	var held *rate.Reservation // the next turn, reserved in the bucket
	heldDue := false           // slept until held's time
	var pauseDone time.Time    // the pause already slept through
	for {
		b.mu.Lock()
		now := b.cfg.Now()
		if len(b.line) == 0 {
			if held != nil {
				held.CancelAt(now)
			}
			b.pace.since = time.Time{} // the line is gone
			b.dispatching = false
			b.mu.Unlock()
			return
		}
		if until := b.pausedUntil; now.Before(until) && until.After(pauseDone) {
			b.mu.Unlock()
			_ = b.cfg.Sleep(context.Background(), until.Sub(now))
			pauseDone = until
			continue
		}
		if held == nil {
			held, heldDue = b.lim.ReserveN(now, 1), false
		}
		if d := held.DelayFrom(now); d > 0 && !heldDue {
			b.mu.Unlock()
			_ = b.cfg.Sleep(context.Background(), d)
			heldDue = true
			continue // a pause met meanwhile comes first
		}
		held = nil
		w := heap.Pop(&b.line).(*waiter)
		b.sentLocked(now)
		b.pace.turn(now)
		close(w.turn)
		b.mu.Unlock()
	}
}

// Pause holds every call, on this instance at once and on the others at
// their next heartbeat, for d: a 429's Retry-After (or the client's
// backoff when it gave none).
func (b *Budget) Pause(d time.Duration) {
	if b.cfg.OnPause != nil {
		b.cfg.OnPause(d)
	}
	now := b.cfg.Now()
	until := now.Add(d)
	b.mu.Lock()
	if until.After(b.pausedUntil) {
		b.pausedUntil = until
	}
	b.lowerLocked(now)
	b.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = b.shared.PausePlatform(ctx, until) // the next heartbeat's read will tell
	}()
}

// MarkSlow says the platform is slow for d (a launch waited on it past
// its patience): on this instance at once and on the others at their
// next heartbeat, their launches go in line meanwhile, where their users
// get the waiting page rather than a blank tab.
func (b *Budget) MarkSlow(d time.Duration) {
	until := b.cfg.Now().Add(d)
	b.mu.Lock()
	if until.After(b.slowUntil) {
		b.slowUntil = until
	}
	b.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = b.shared.MarkPlatformSlow(ctx, until) // the next heartbeat's read will tell
	}()
}

// Run heartbeats until ctx ends: it counts the instances that call (each
// takes its share of the rate) and takes up a pause another instance met.
func (b *Budget) Run(ctx context.Context) {
	t := time.NewTicker(Heartbeat)
	defer t.Stop()
	for {
		b.beat(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// beat is one heartbeat.
func (b *Budget) beat(ctx context.Context) {
	now := b.cfg.Now()
	b.mu.Lock()
	me := store.PlatformCaller{ID: b.instance, Background: b.cfg.Background,
		Busy: !b.cfg.Background && now.Sub(b.busyAt) < 2*Heartbeat, Active: now.Sub(b.activeAt) < 2*Heartbeat}
	b.mu.Unlock()
	hctx, cancel := context.WithTimeout(ctx, Heartbeat*4)
	callers, err := b.shared.PlatformHeartbeat(hctx, me, now, liveWindow)
	cancel()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.raiseLocked(now)
	if err != nil {
		return
	}
	if callers.PausedUntil.After(b.pausedUntil) {
		b.pausedUntil = callers.PausedUntil
	}
	if callers.SlowUntil.After(b.slowUntil) {
		b.slowUntil = callers.SlowUntil
	}
	callers.PausedUntil, callers.SlowUntil = time.Time{}, time.Time{}
	if me.Active {
		b.activeBeat = now
	}
	counted := now.Sub(b.activeBeat) < liveWindow // as the store counts it
	if callers != b.callers || counted != b.wasActive {
		b.callers, b.wasActive = callers, counted
		b.applyLocked()
	}
}

// Stats is the budget as it stands, for metrics.
type Stats struct {
	Rate      float64       // the rate for all instances together (0: not limited)
	Learned   float64       // without a configured rate: this instance's, learned from the 429s (0: none yet)
	Share     float64       // this instance's part of it
	Live      int           // processes calling (serving and background)
	Busy      int           // serving instances with users waiting
	Paused    bool          // every call is held
	PausedFor time.Duration // for how much longer
	Waiting   int           // calls in this instance's line
	// Pace: the turns a second this instance's line was given over the
	// last 5 s, once it has lasted that long (0 otherwise): what the share
	// really brought (instances come and go, idle ones take nothing).
	Pace float64
	// Slow: this instance or another saw the platform slow lately
	// (MarkSlow); launches go in line at once meanwhile.
	Slow bool
}

// Stats reports the budget.
func (b *Budget) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.cfg.Now()
	st := Stats{Rate: b.cfg.Rate, Live: b.callers.Serving + b.callers.Background, Busy: b.callers.Busy,
		Paused: now.Before(b.pausedUntil), Waiting: len(b.line), Slow: now.Before(b.slowUntil), Pace: b.pace.perSecond(now)}
	if st.Paused {
		st.PausedFor = b.pausedUntil.Sub(now)
	}
	if b.cfg.Rate > 0 {
		st.Share = b.cfg.Rate * share(b.callers, b.cfg.Background, b.wasActive)
	} else {
		st.Learned, st.Share = b.learn.rate, b.learn.rate
	}
	return st
}
