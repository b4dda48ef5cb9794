package fakeclock

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestClock(t *testing.T) {
	c := New(time.Time{})
	assert.Equal(t, Start, c.Now(), "zero start: the fixed date")
	c.Advance(90 * time.Second)
	assert.Equal(t, Start.Add(90*time.Second), c.Now())
	c.Advance(-30 * time.Second)
	assert.Equal(t, Start.Add(time.Minute), c.Now())
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	c.Set(at)
	assert.Equal(t, at, c.Now())
	assert.Equal(t, at, New(at).Now())
}

// Many goroutines may read and move one clock (run with -race).
func TestClockConcurrentUse(t *testing.T) {
	c := New(time.Time{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				c.Advance(time.Millisecond)
				_ = c.Now()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, Start.Add(800*time.Millisecond), c.Now())
}
