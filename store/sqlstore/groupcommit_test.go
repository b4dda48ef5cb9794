package sqlstore

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Concurrent submitters each get their own value's result, every value is
// committed exactly once, one commit runs at a time, and values that queue
// behind a commit share the next one.
func TestGroupCommitBatchesAndResults(t *testing.T) {
	var (
		mu        sync.Mutex
		committed = map[int]int{}
		commits   int
		running   atomic.Int32
		overlap   atomic.Bool
	)
	release := make(chan struct{})
	g := newGroupCommit(8, func(batch []int) []error {
		if running.Add(1) > 1 {
			overlap.Store(true)
		}
		defer running.Add(-1)
		mu.Lock()
		commits++
		first := commits == 1
		for _, v := range batch {
			committed[v]++
		}
		mu.Unlock()
		if first {
			<-release // hold the first commit so the others queue behind it
		}
		errs := make([]error, len(batch))
		for i, v := range batch {
			if v%5 == 0 {
				errs[i] = fmt.Errorf("value %d refused", v)
			}
		}
		return errs
	})

	const n = 40
	results := make([]error, n)
	var wg sync.WaitGroup
	wg.Go(func() { results[0] = g.do(0) })
	require.Eventually(t, func() bool { return running.Load() == 1 }, 5*time.Second, time.Millisecond)
	for i := 1; i < n; i++ {
		wg.Go(func() { results[i] = g.do(i) })
	}
	require.Eventually(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.queue) == n-1
	}, 5*time.Second, time.Millisecond, "the others queue behind the first commit")
	close(release)
	wg.Wait()

	assert.False(t, overlap.Load(), "one commit at a time")
	for i := range n {
		assert.Equal(t, 1, committed[i], "value %d committed once", i)
		if i%5 == 0 {
			assert.EqualError(t, results[i], fmt.Sprintf("value %d refused", i))
		} else {
			assert.NoError(t, results[i], "value %d", i)
		}
	}
	// 1 alone, then the 39 queued in batches of at most 8.
	assert.Equal(t, 1+5, commits)
	g.mu.Lock()
	assert.False(t, g.leading)
	assert.Empty(t, g.queue)
	g.mu.Unlock()
}

// A lone submitter commits at once, in its own goroutine.
func TestGroupCommitAlone(t *testing.T) {
	var batches [][]string
	g := newGroupCommit(8, func(batch []string) []error {
		batches = append(batches, append([]string(nil), batch...))
		return make([]error, len(batch))
	})
	require.NoError(t, g.do("a"))
	require.NoError(t, g.do("b"))
	assert.Equal(t, [][]string{{"a"}, {"b"}}, batches)
}

// close waits for what is queued and refuses what comes after.
func TestGroupCommitClose(t *testing.T) {
	release := make(chan struct{})
	var committed atomic.Int32
	g := newGroupCommit(8, func(batch []int) []error {
		if batch[0] == 0 {
			<-release
		}
		committed.Add(int32(len(batch)))
		return make([]error, len(batch))
	})
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, g.do(0)) })
	require.Eventually(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.leading }, 5*time.Second, time.Millisecond)
	wg.Go(func() { assert.NoError(t, g.do(1)) })
	require.Eventually(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.queue) == 1 }, 5*time.Second, time.Millisecond)

	closed := make(chan struct{})
	go func() { g.close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("close returned while a commit was under way")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-closed
	wg.Wait()
	assert.EqualValues(t, 2, committed.Load(), "what was queued before close was committed")
	assert.ErrorIs(t, g.do(2), ErrClosed)
	assert.EqualValues(t, 2, committed.Load())
}

// A commit that panics fails its batch, passes the lead on (the next batch
// commits) and re-raises in the leader.
func TestGroupCommitPanic(t *testing.T) {
	release := make(chan struct{})
	g := newGroupCommit(8, func(batch []int) []error {
		switch batch[0] {
		case 0:
			<-release
			panic("boom")
		case 99:
			return nil // wrong count: a bug, reported like a panic
		}
		return make([]error, len(batch))
	})
	var wg sync.WaitGroup
	var leaderPanic any
	wg.Go(func() {
		defer func() { leaderPanic = recover() }()
		_ = g.do(0)
	})
	require.Eventually(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.leading }, 5*time.Second, time.Millisecond)
	var follower error
	wg.Go(func() { follower = g.do(1) })
	require.Eventually(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.queue) == 1 }, 5*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	assert.Equal(t, "boom", leaderPanic)
	assert.NoError(t, follower, "the lead passed on and the next batch committed")

	assert.Panics(t, func() { _ = g.do(99) })
	g.mu.Lock()
	assert.False(t, g.leading, "a failed leader stepped down")
	g.mu.Unlock()
	require.NoError(t, g.do(1))
}

// errLead never reaches a caller.
func TestGroupCommitLeadIsInternal(t *testing.T) {
	g := newGroupCommit(2, func(batch []int) []error { return make([]error, len(batch)) })
	var wg sync.WaitGroup
	var bad atomic.Int32
	for i := range 200 {
		wg.Go(func() {
			if err := g.do(i); err != nil { // errLead included: it must never reach a caller
				bad.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Zero(t, bad.Load())
}
