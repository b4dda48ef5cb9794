// Package pacing keeps the bridge's calls to the platform under the
// platform's rate limit, which every instance shares (one credential): a
// token bucket per instance holding the instance's share of the configured
// rate (the rate divided by the instances calling, counted through the
// store), and a pause that a 429 puts on every caller of every instance.
// Without a configured rate only the pauses apply: every 429 holds every
// caller for its Retry-After.
package pacing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
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
	// second, for all instances together; 0: not paced, only paused.
	Rate float64
	// Burst is how many calls may go at once (default: Rate rounded up).
	Burst int
	// Now and Sleep are the clock (tests switch waiting off).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// OnPause, when set, is told of each pause (its length).
	OnPause func(time.Duration)
}

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
	live        int       // instances calling, as last counted
	pausedUntil time.Time // no call before then
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

// applyLocked sets the instance's share of the rate and burst.
func (b *Budget) applyLocked() {
	if b.cfg.Rate <= 0 {
		b.lim.SetLimitAt(b.cfg.Now(), rate.Inf)
		return
	}
	n := float64(max(1, b.live))
	b.lim.SetLimitAt(b.cfg.Now(), rate.Limit(b.cfg.Rate/n))
	b.lim.SetBurstAt(b.cfg.Now(), max(1, int(math.Ceil(float64(b.cfg.Burst)/n))))
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
		r := b.lim.ReserveN(now, 1) // rate.Limiter is safe for concurrent use
		if !r.OK() {
			return fmt.Errorf("pacing: no budget for a call")
		}
		if d := r.DelayFrom(now); d > 0 {
			if err := b.cfg.Sleep(ctx, d); err != nil {
				r.CancelAt(b.cfg.Now())
				return err
			}
		}
		return nil
	}
}

// Pause holds every call, on this instance at once and on the others at
// their next heartbeat, for d: a 429's Retry-After (or the client's
// backoff when it gave none).
func (b *Budget) Pause(d time.Duration) {
	if b.cfg.OnPause != nil {
		b.cfg.OnPause(d)
	}
	until := b.cfg.Now().Add(d)
	b.mu.Lock()
	if until.After(b.pausedUntil) {
		b.pausedUntil = until
	}
	b.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = b.shared.PausePlatform(ctx, until) // the next heartbeat's read will tell
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
}

// Stats is the budget as it stands, for metrics.
type Stats struct {
	Rate   float64 // the rate for all instances together (0: not limited)
	Share  float64 // this instance's part of it
	Live   int     // instances calling
	Paused bool    // every call is held
}

// Stats reports the budget.
func (b *Budget) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := Stats{Rate: b.cfg.Rate, Live: b.live, Paused: b.cfg.Now().Before(b.pausedUntil)}
	if b.cfg.Rate > 0 {
		st.Share = b.cfg.Rate / float64(max(1, b.live))
	}
	return st
}
