// Package pacing keeps the bridge's calls to the platform under the
// platform's rate limit, which every instance shares (one credential): a
// token bucket per instance holding the instance's share of the configured
// rate (the rate divided by the instances calling, counted through the
// store), and a pause that a 429 puts on every caller of every instance.
// Without a configured rate it learns one from the 429s: it halves the
// rate it sent at, then raises it slowly while the platform accepts.
package pacing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Shared is where the instances calling the platform meet: the store.
type Shared interface {
	// PlatformHeartbeat records that instance calls the platform at now
	// and returns how many instances did within window (itself included)
	// and until when every caller is to hold its calls.
	PlatformHeartbeat(ctx context.Context, instance string, now time.Time, window time.Duration) (live int, pausedUntil time.Time, err error)
	// PausePlatform holds every instance's calls until then (a later
	// pause wins).
	PausePlatform(ctx context.Context, until time.Time) error
}

// Config is how the budget paces.
type Config struct {
	// Rate is the platform's limit for the credential, in requests a
	// second, for all instances together; 0: learn it from 429s.
	Rate float64
	// Burst is how many calls may go at once (default: Rate rounded up).
	Burst int
	// Now and Sleep are the clock (tests switch waiting off).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger tells when the budget starts and stops holding calls.
	Logger *slog.Logger
	// OnPause, when set, is told of each pause (its length).
	OnPause func(time.Duration)
}

// Heartbeat is how often an instance tells the others it calls, and reads
// their pause; an instance unheard of for liveWindow no longer counts.
const (
	Heartbeat  = 250 * time.Millisecond
	liveWindow = 3 * time.Second
)

// Learning bounds: a learned rate starts from half what was sent when the
// first 429 came, halves at each later 429 (never below minLearned), and
// grows by a tenth every rampEvery without one (doubling in about 7 s),
// until it passes maxLearned, where it stops limiting: a 429 met while
// traffic was low does not hold back a later rush for long.
const (
	minLearned = 2.0
	maxLearned = 10000.0
	rampEvery  = time.Second
)

// Budget paces one instance's calls. It is safe for concurrent use.
type Budget struct {
	cfg      Config
	shared   Shared
	instance string

	mu          sync.Mutex
	lim         *rate.Limiter
	live        int       // instances calling, as last counted
	pausedUntil time.Time // no call before then
	learned     float64   // learning: the rate in force for all instances (0: none yet)
	lastCut     time.Time // learning: the last cut (a 429)
	lastRamp    time.Time // learning: the last raise
	sent        []time.Time
}

// New makes a budget; Run keeps its share and pause current.
func New(cfg Config, shared Shared) *Budget {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Burst <= 0 {
		cfg.Burst = max(1, int(math.Ceil(cfg.Rate)))
	}
	b := &Budget{cfg: cfg, shared: shared, instance: randomID(), live: 1, lim: rate.NewLimiter(rate.Inf, 1)}
	b.applyLocked()
	return b
}

func randomID() string {
	p := make([]byte, 8)
	_, _ = rand.Read(p) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(p)
}

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

// total is the rate in force for all instances together (0: none).
func (b *Budget) totalLocked() float64 {
	if b.cfg.Rate > 0 {
		return b.cfg.Rate
	}
	return b.learned
}

// applyLocked sets the instance's share of the rate and burst.
func (b *Budget) applyLocked() {
	total := b.totalLocked()
	if total <= 0 {
		b.lim.SetLimitAt(b.cfg.Now(), rate.Inf)
		return
	}
	n := float64(max(1, b.live))
	burst := b.cfg.Burst
	if b.cfg.Rate <= 0 {
		burst = int(math.Ceil(total))
	}
	b.lim.SetLimitAt(b.cfg.Now(), rate.Limit(total/n))
	b.lim.SetBurstAt(b.cfg.Now(), max(1, int(math.Ceil(float64(burst)/n))))
}

// Wait returns when a call may be sent: after any pause, within the
// instance's share of the rate. Retries wait too, so they are not a
// second source of load.
func (b *Budget) Wait(ctx context.Context) error {
	var waited time.Time // the pause already waited out
	for {
		now := b.cfg.Now()
		b.mu.Lock()
		paused := b.pausedUntil
		b.mu.Unlock()
		if paused.After(waited) && now.Before(paused) {
			if err := b.cfg.Sleep(ctx, paused.Sub(now)); err != nil {
				return err
			}
			waited = paused // a later pause, set meanwhile, is waited for too
			continue
		}
		b.mu.Lock()
		r := b.lim.ReserveN(now, 1)
		b.mu.Unlock()
		if !r.OK() {
			return fmt.Errorf("pacing: no budget for a call")
		}
		if d := r.DelayFrom(now); d > 0 {
			if err := b.cfg.Sleep(ctx, d); err != nil {
				r.CancelAt(b.cfg.Now())
				return err
			}
		}
		if b.cfg.Rate <= 0 {
			b.mu.Lock()
			now := b.cfg.Now()
			b.sent = append(b.sent, now)
			b.trimSentLocked(now)
			b.mu.Unlock()
		}
		return nil
	}
}

// Pause holds every call, on this instance at once and on the others at
// their next heartbeat, for d: a 429's Retry-After (or the client's
// backoff when it gave none). Without a configured rate it also halves the
// learned one.
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
	if b.cfg.Rate <= 0 && now.Sub(b.lastCut) >= d {
		// One cut per pause: the 429s of one burst arrive together.
		first := b.learned == 0
		b.learned = max(minLearned, b.sentRateLocked(now)/2)
		if first {
			b.cfg.Logger.Info("platform rate limit met: pacing calls at a learned rate", "rate_per_s", math.Round(b.learned*10)/10)
		}
		b.lastCut = now
		b.applyLocked()
	}
	b.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = b.shared.PausePlatform(ctx, until) // the next heartbeat's read will tell
	}()
}

// sentRateLocked is the calls a second sent by all instances lately: this
// one's over the last second, times the instances calling.
func (b *Budget) sentRateLocked(now time.Time) float64 {
	b.trimSentLocked(now)
	own := float64(len(b.sent))
	if cur := b.totalLocked(); cur > 0 && own > cur/float64(max(1, b.live)) {
		own = cur / float64(max(1, b.live))
	}
	return max(minLearned, own*float64(max(1, b.live)))
}

// trimSentLocked forgets the calls sent more than a second ago.
func (b *Budget) trimSentLocked(now time.Time) {
	i := 0
	for i < len(b.sent) && now.Sub(b.sent[i]) > time.Second {
		i++
	}
	b.sent = b.sent[i:] // append moves what is left to a new array when it fills
}

// Run heartbeats until ctx ends: it counts the instances that call (each
// takes its share of the rate), takes up a pause another instance met, and
// raises a learned rate while the platform accepts.
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
	hctx, cancel := context.WithTimeout(ctx, Heartbeat*4)
	live, paused, err := b.shared.PlatformHeartbeat(hctx, b.instance, now, liveWindow)
	cancel()
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		if paused.After(b.pausedUntil) {
			b.pausedUntil = paused
		}
		if live != b.live {
			b.live = live
			b.applyLocked()
		}
	}
	if b.cfg.Rate <= 0 && b.learned > 0 && now.Sub(b.lastCut) >= rampEvery && now.Sub(b.lastRamp) >= rampEvery {
		b.learned *= 1.1
		b.lastRamp = now
		if b.learned > maxLearned {
			b.learned = 0
			b.cfg.Logger.Info("platform rate limit no longer met: calls are not paced")
		}
		b.applyLocked()
	}
}

// Stats is the budget as it stands, for metrics.
type Stats struct {
	Rate    float64 // the rate for all instances together (0: not limited)
	Share   float64 // this instance's part of it
	Live    int     // instances calling
	Paused  bool    // every call is held
	Learned bool    // the rate was learned from 429s
}

// Stats reports the budget.
func (b *Budget) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	total := b.totalLocked()
	st := Stats{Rate: total, Live: b.live, Paused: b.cfg.Now().Before(b.pausedUntil), Learned: b.cfg.Rate <= 0 && total > 0}
	if total > 0 {
		st.Share = total / float64(max(1, b.live))
	}
	return st
}
