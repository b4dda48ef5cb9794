package pacing_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/fakeclock"
	"github.com/ssobridge/ssobridge/launch/pacing"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// sleeper moves the fake clock instead of waiting, and records the waits.
type sleeper struct {
	clock *fakeclock.Clock
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	s.clock.Advance(d)
	return nil
}

func openStore(t *testing.T, now func() time.Time) *sqlstore.SQLite {
	s, err := sqlstore.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "test.db"), now)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// callsIn counts the calls the budget lets through in d of fake time.
func callsIn(t *testing.T, b *pacing.Budget, clock *fakeclock.Clock, d time.Duration) int {
	end := clock.Now().Add(d)
	n := 0
	for {
		require.NoError(t, b.Wait(t.Context()))
		if clock.Now().After(end) {
			return n
		}
		n++
	}
}

// A configured rate is kept, a burst aside.
func TestBudgetKeepsTheRate(t *testing.T) {
	clock := fakeclock.New(time.Time{})
	sl := &sleeper{clock: clock}
	b := pacing.New(pacing.Config{Rate: 20, Now: clock.Now, Sleep: sl.sleep}, openStore(t, clock.Now))
	n := callsIn(t, b, clock, 10*time.Second)
	assert.InDelta(t, 20*10+1, n, 1, "20/s for 10 s (the bucket starts with one call)")
}

// Two instances on one store count each other and take half the rate
// each; when one stops calling, the other takes it all again.
func TestBudgetIsSharedByTheInstances(t *testing.T) {
	clock := fakeclock.New(time.Time{})
	sl := &sleeper{clock: clock}
	s := openStore(t, clock.Now)
	a := pacing.New(pacing.Config{Rate: 20, Now: clock.Now, Sleep: sl.sleep}, s)
	b := pacing.New(pacing.Config{Rate: 20, Now: clock.Now, Sleep: sl.sleep}, s)
	pacing.Beat(t.Context(), a)
	pacing.Beat(t.Context(), b)
	pacing.Beat(t.Context(), a)
	assert.Equal(t, 2, a.Stats().Live)
	assert.Equal(t, 20.0, a.Stats().Share, "b does not call: a may take it all")
	require.NoError(t, b.Wait(t.Context()))
	require.NoError(t, a.Wait(t.Context()))
	pacing.Beat(t.Context(), b)
	pacing.Beat(t.Context(), a)
	assert.Equal(t, 10.0, a.Stats().Share, "both call: half each")
	assert.InDelta(t, 10*10+1, callsIn(t, a, clock, 10*time.Second), 1, "half the rate")

	clock.Advance(5 * time.Second) // b's heartbeat is old now
	require.NoError(t, a.Wait(t.Context()))
	pacing.Beat(t.Context(), a)
	assert.Equal(t, 1, a.Stats().Live)
	assert.Equal(t, 20.0, a.Stats().Share)
}

// A 429 holds every caller of every instance until its Retry-After.
func TestBudgetPauseHoldsEveryInstance(t *testing.T) {
	clock := fakeclock.New(time.Time{})
	sl := &sleeper{clock: clock}
	s := openStore(t, clock.Now)
	a := pacing.New(pacing.Config{Rate: 100, Now: clock.Now, Sleep: sl.sleep}, s)
	b := pacing.New(pacing.Config{Rate: 100, Now: clock.Now, Sleep: sl.sleep}, s)
	a.Pause(3 * time.Second)
	assert.True(t, a.Stats().Paused)
	require.Eventually(t, func() bool {
		pacing.Beat(t.Context(), b)
		return b.Stats().Paused
	}, 5*time.Second, 5*time.Millisecond, "b hears of a's pause at its heartbeat")
	start := clock.Now()
	require.NoError(t, b.Wait(t.Context()))
	assert.Equal(t, 3*time.Second, clock.Now().Sub(start), "b's next call waits out the pause")
}

// BenchmarkWait is what the budget adds to each platform call, from many
// goroutines: without a rate, and with one far above the calls.
func BenchmarkWait(b *testing.B) {
	s, err := sqlstore.OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "bench.db"), nil)
	require.NoError(b, err)
	defer s.Close()
	for _, bb := range []struct {
		name string
		rate float64
	}{{"unlimited", 0}, {"limited", 1e9}} {
		b.Run(bb.name, func(b *testing.B) {
			budget := pacing.New(pacing.Config{Rate: bb.rate}, s)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := budget.Wait(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// gatedSleeper moves the fake clock only when the test lets a sleep end.
type gatedSleeper struct {
	clock *fakeclock.Clock
	gate  chan struct{}
}

func (s *gatedSleeper) sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-s.gate:
		s.clock.Advance(d)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The line: a user's calls go before background work, and among each the
// earliest arrival first, whatever order the calls asked in; a call that
// gives up leaves the line.
func TestBudgetLineOrder(t *testing.T) {
	clock := fakeclock.New(time.Unix(1000, 0))
	sl := &gatedSleeper{clock: clock, gate: make(chan struct{})}
	b := pacing.New(pacing.Config{Rate: 1, Burst: 1, Now: clock.Now, Sleep: sl.sleep}, openStore(t, clock.Now))
	require.NoError(t, b.Wait(t.Context()), "the bucket's one call goes at once")

	t0 := clock.Now()
	done := make(chan string, 8)
	ask := func(name string, p pacing.Priority) {
		go func() {
			if err := b.Wait(pacing.WithPriority(t.Context(), p)); err == nil {
				done <- name
			}
		}()
	}
	gone, leave := context.WithCancel(t.Context())
	go func() { _ = b.Wait(pacing.WithPriority(gone, pacing.Priority{Since: t0.Add(-time.Hour)})) }()
	require.Eventually(t, func() bool { return b.Stats().Waiting == 1 }, 5*time.Second, time.Millisecond)
	ask("provisioning", pacing.Priority{Background: true, Since: t0.Add(-time.Minute)})
	ask("second user", pacing.Priority{Since: t0.Add(2 * time.Second)})
	ask("first user", pacing.Priority{Since: t0.Add(time.Second)})
	require.Eventually(t, func() bool { return b.Stats().Waiting == 4 }, 5*time.Second, time.Millisecond)
	leave()
	require.Eventually(t, func() bool { return b.Stats().Waiting == 3 }, 5*time.Second, time.Millisecond, "a call that gives up leaves the line")

	for _, want := range []string{"first user", "second user", "provisioning"} {
		sl.gate <- struct{}{} // the bucket's next call
		assert.Equal(t, want, <-done)
	}
	assert.Equal(t, 0, b.Stats().Waiting)
}

// A background-only process (provisioning) takes an equal share while no
// user waits, and BackgroundWeight of one while users wait on a serving
// instance; the serving instance gets the rest.
func TestBudgetBackgroundYieldsToUsers(t *testing.T) {
	clock := fakeclock.New(time.Unix(1000, 0))
	sl := &gatedSleeper{clock: clock, gate: make(chan struct{})}
	s := openStore(t, clock.Now)
	srv := pacing.New(pacing.Config{Rate: 20, Now: clock.Now, Sleep: sl.sleep}, s)
	bg := pacing.New(pacing.Config{Rate: 20, Now: clock.Now, Sleep: sl.sleep, Background: true}, s)
	beat := func() {
		pacing.Beat(t.Context(), srv)
		pacing.Beat(t.Context(), bg)
		pacing.Beat(t.Context(), srv)
	}
	require.NoError(t, srv.Wait(t.Context()))
	require.NoError(t, bg.Wait(t.Context()))
	beat()
	assert.Equal(t, 10.0, srv.Stats().Share, "nobody waits: equal shares")
	assert.Equal(t, 10.0, bg.Stats().Share)

	// Ten users at once: the bucket's ten go, the eleventh waits.
	clock.Advance(time.Second) // the bucket fills
	for range 10 {
		require.NoError(t, srv.Wait(t.Context()))
	}
	waiting, stop := context.WithCancel(t.Context())
	defer stop()
	go func() { _ = srv.Wait(waiting) }()
	require.Eventually(t, func() bool { return srv.Stats().Waiting == 1 }, 5*time.Second, time.Millisecond)
	beat()
	assert.Equal(t, 1, bg.Stats().Busy)
	assert.InDelta(t, 20*pacing.BackgroundWeight/(1+pacing.BackgroundWeight), bg.Stats().Share, 1e-9, "users wait: a trickle")
	assert.InDelta(t, 20/(1+pacing.BackgroundWeight), srv.Stats().Share, 1e-9, "and the users the rest")

	stop()
	require.Eventually(t, func() bool { return srv.Stats().Waiting == 0 }, 5*time.Second, time.Millisecond)
	clock.Advance(4 * time.Second) // longer than a busy heartbeat counts
	clock.Advance(time.Second)     // the bucket refills
	require.NoError(t, srv.Wait(t.Context()))
	require.NoError(t, bg.Wait(t.Context()))
	beat()
	assert.Equal(t, 10.0, bg.Stats().Share, "nobody waits any more")
}

// Without a configured rate: not paced until a 429; then a rate of half
// the last second's calls, lowered (x0.7) at a later 429 but once for a
// burst of them, and raised a little each calm second.
func TestBudgetLearnsTheRate(t *testing.T) {
	clock := fakeclock.New(time.Unix(1000, 0))
	sl := &sleeper{clock: clock}
	b := pacing.New(pacing.Config{Now: clock.Now, Sleep: sl.sleep}, openStore(t, clock.Now))
	for range 40 {
		require.NoError(t, b.Wait(t.Context()))
	}
	assert.Empty(t, sl.waits, "not paced before a 429")
	assert.Zero(t, b.Stats().Learned)

	b.Pause(time.Second)
	assert.Equal(t, 20.0, b.Stats().Learned, "half the 40 calls of the last second")
	b.Pause(time.Second)
	assert.Equal(t, 20.0, b.Stats().Learned, "one lowering for a burst of 429s")
	assert.InDelta(t, 20+5, callsIn(t, b, clock, time.Second+time.Second), 1, "paced: the pause, then 20/s after a burst of a quarter of it")

	clock.Advance(2 * time.Second)
	b.Pause(time.Second)
	assert.InDelta(t, 14.0, b.Stats().Learned, 1e-9, "a later 429: x0.7")

	clock.Advance(3 * time.Second)
	pacing.Beat(t.Context(), b)
	assert.InDelta(t, 14.7, b.Stats().Learned, 1e-9, "a calm second: +5%")
	clock.Advance(time.Second)
	pacing.Beat(t.Context(), b)
	assert.InDelta(t, 14.7+0.735, b.Stats().Learned, 1e-9)
}

// A sleep is trusted: with waiting switched off (a clock that does not
// move), a paused call waits out the pause once and goes, it does not spin.
func TestBudgetTrustsItsSleep(t *testing.T) {
	var sleeps atomic.Int32
	noWait := func(ctx context.Context, _ time.Duration) error { sleeps.Add(1); return ctx.Err() }
	frozen := time.Unix(1000, 0)
	b := pacing.New(pacing.Config{Now: func() time.Time { return frozen }, Sleep: noWait}, openStore(t, nil))
	b.Pause(7 * time.Second)
	require.NoError(t, b.Wait(t.Context()))
	assert.Equal(t, int32(1), sleeps.Load(), "one sleep for the pause")
}

// The first 429's rate counts the calls of the last second only: this
// second's, and the part of the previous one still within it.
func TestBudgetLearnsFromTheLastSecond(t *testing.T) {
	clock := fakeclock.New(time.Unix(1000, 0))
	sl := &sleeper{clock: clock}
	b := pacing.New(pacing.Config{Now: clock.Now, Sleep: sl.sleep}, openStore(t, clock.Now))
	for range 30 {
		require.NoError(t, b.Wait(t.Context()))
	}
	clock.Advance(3 * time.Second) // those are long gone
	for range 10 {
		require.NoError(t, b.Wait(t.Context()))
	}
	clock.Advance(1500 * time.Millisecond)
	for range 10 {
		require.NoError(t, b.Wait(t.Context()))
	}
	b.Pause(time.Second)
	assert.InDelta(t, 0.5*(10+0.5*10), b.Stats().Learned, 1e-9, "half of 10 now and half of the 10 a second and a half ago")
}

// A call made WithoutWaiting goes when it can go at once, and is told
// ErrWouldWait, at once and without taking a place, when it would wait
// (the bucket empty, or someone in line before it).
func TestBudgetWithoutWaiting(t *testing.T) {
	clock := fakeclock.New(time.Time{})
	sl := &sleeper{clock: clock}
	b := pacing.New(pacing.Config{Rate: 1, Burst: 1, Now: clock.Now, Sleep: sl.sleep}, openStore(t, clock.Now))
	ctx := pacing.WithoutWaiting(t.Context())
	assert.True(t, pacing.MustNotWait(ctx))
	assert.False(t, pacing.MustNotWait(t.Context()))
	require.NoError(t, b.Wait(ctx), "the bucket has a call")
	assert.ErrorIs(t, b.Wait(ctx), pacing.ErrWouldWait, "the bucket is empty")
	assert.Zero(t, b.Stats().Waiting, "no place taken")
	clock.Advance(time.Second)
	assert.NoError(t, b.Wait(ctx), "refilled")
}

// A retry waits its turn even for a call made WithoutWaiting: a call
// under way is never cut between its attempts.
func TestBudgetRetryWaitsItsTurn(t *testing.T) {
	clock := fakeclock.New(time.Time{})
	sl := &sleeper{clock: clock}
	b := pacing.New(pacing.Config{Rate: 1, Burst: 1, Now: clock.Now, Sleep: sl.sleep}, openStore(t, clock.Now))
	go b.Run(t.Context())
	ctx := pacing.WithoutWaiting(t.Context())
	require.NoError(t, b.Wait(ctx))
	assert.ErrorIs(t, b.Wait(ctx), pacing.ErrWouldWait)
	assert.NoError(t, b.WaitRetry(ctx), "waited for its turn (the sleeper moves the clock)")

	// A pause (a 429's Retry-After) is waited out, WithoutWaiting too.
	b.Pause(2 * time.Second)
	assert.NoError(t, b.Wait(ctx), "a launch under way waits out the platform's pause")
}

// The pace the line really got is measured once the line has lasted 5 s:
// turns a second over the last 5 whole seconds; none before, none once
// the line is gone.
func TestBudgetMeasuresTheLinesPace(t *testing.T) {
	clock := fakeclock.New(time.Unix(1000, 0))
	sl := &gatedSleeper{clock: clock, gate: make(chan struct{})}
	b := pacing.New(pacing.Config{Rate: 2, Burst: 1, Now: clock.Now, Sleep: sl.sleep}, openStore(t, clock.Now))
	require.NoError(t, b.Wait(t.Context()), "the bucket's one call goes at once")
	const n = 20
	var granted atomic.Int32
	for range n {
		go func() {
			if b.Wait(t.Context()) == nil {
				granted.Add(1)
			}
		}()
	}
	require.Eventually(t, func() bool { return b.Stats().Waiting == n }, 5*time.Second, time.Millisecond)
	assert.Zero(t, b.Stats().Pace, "not measured before the line has lasted")
	for i := range 14 { // 7 s of turns at 2 a second
		sl.gate <- struct{}{}
		require.Eventually(t, func() bool { return granted.Load() == int32(i+1) }, 5*time.Second, time.Millisecond)
	}
	assert.InDelta(t, 2.0, b.Stats().Pace, 0.01)
	for range n - 14 {
		sl.gate <- struct{}{}
	}
	require.Eventually(t, func() bool { return granted.Load() == n }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return b.Stats().Pace == 0 }, 5*time.Second, time.Millisecond, "the line is gone")
}
