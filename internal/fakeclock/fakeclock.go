// Package fakeclock is the one settable clock of the test suite. Code
// under test takes a func() time.Time; tests pass a Clock's Now and move
// time with Advance, so nothing waits for real time to pass.
package fakeclock

import (
	"sync"
	"time"
)

// Start is the instant a Clock made by New(time.Time{}) starts at: a fixed
// date, so failures repeat exactly.
var Start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// Clock is safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock standing at start (Start when zero).
func New(start time.Time) *Clock {
	if start.IsZero() {
		start = Start
	}
	return &Clock{t: start}
}

// Now is the clock's time; pass c.Now where a func() time.Time is wanted.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d (back when d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
