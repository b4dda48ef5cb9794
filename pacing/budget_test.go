package pacing_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/internal/fakeclock"
	"github.com/ssobridge/ssobridge/pacing"
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

func store(t *testing.T, now func() time.Time) *accounts.SQLite {
	s, err := accounts.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "test.db"), now)
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
	b := pacing.New(pacing.Config{Rate: 20, Now: clock.Now, Sleep: sl.sleep}, store(t, clock.Now))
	n := callsIn(t, b, clock, 10*time.Second)
	assert.InDelta(t, 20*10+1, n, 1, "20/s for 10 s (the bucket starts with one call)")
}

// Two instances on one store count each other and take half the rate
// each; when one stops calling, the other takes it all again.
func TestBudgetIsSharedByTheInstances(t *testing.T) {
	clock := fakeclock.New(time.Time{})
	sl := &sleeper{clock: clock}
	s := store(t, clock.Now)
	a := pacing.New(pacing.Config{Rate: 20, Now: clock.Now, Sleep: sl.sleep}, s)
	b := pacing.New(pacing.Config{Rate: 20, Now: clock.Now, Sleep: sl.sleep}, s)
	pacing.Beat(t.Context(), a)
	pacing.Beat(t.Context(), b)
	pacing.Beat(t.Context(), a)
	assert.Equal(t, 2, a.Stats().Live)
	assert.Equal(t, 10.0, a.Stats().Share)
	assert.InDelta(t, 10*10+1, callsIn(t, a, clock, 10*time.Second), 1, "half the rate")

	clock.Advance(5 * time.Second) // b's heartbeat is old now
	pacing.Beat(t.Context(), a)
	assert.Equal(t, 1, a.Stats().Live)
	assert.Equal(t, 20.0, a.Stats().Share)
}

// A 429 holds every caller of every instance until its Retry-After.
func TestBudgetPauseHoldsEveryInstance(t *testing.T) {
	clock := fakeclock.New(time.Time{})
	sl := &sleeper{clock: clock}
	s := store(t, clock.Now)
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
	s, err := accounts.OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "bench.db"), nil)
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
