package poll

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reads is a document's answers, one a read, and what the poller did.
type reads struct {
	mu       sync.Mutex
	answers  []error // the next reads' outcomes; the last one repeats
	start    time.Time
	at       []time.Duration // each read's time from the start
	deadline []time.Duration
	changes  [][2]error
	// done is closed at the read after the one numbered stop: Run has
	// reported every change of the first stop reads by then (it reports
	// a read's change before it waits for the next).
	done chan struct{}
	stop int
}

func (r *reads) read(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at = append(r.at, time.Since(r.start))
	dl, _ := ctx.Deadline()
	r.deadline = append(r.deadline, time.Until(dl))
	err := r.answers[min(len(r.at)-1, len(r.answers)-1)]
	if len(r.at) == r.stop+1 {
		close(r.done)
	}
	return err
}

func (r *reads) changed(prev, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, [2]error{prev, err})
}

func run(t *testing.T, s Schedule, last error, stop int, answers ...error) *reads {
	t.Helper()
	r := &reads{answers: answers, done: make(chan struct{}), stop: stop, start: time.Now()}
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() { Run(ctx, s, last, r.read, r.changed); close(ended) }()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the reads did not come")
	}
	cancel()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end with its context")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r
}

func offset(r *reads, i int) time.Duration { return r.at[i] }

var (
	errDown  = errors.New("connection refused")
	errOther = errors.New("no keys")
)

func TestFirstReadAtOnceOrAfterAWait(t *testing.T) {
	r := run(t, Schedule{Every: 300 * time.Millisecond, Timeout: time.Second, AtOnce: true}, nil, 1, nil)
	assert.Less(t, offset(r, 0), 250*time.Millisecond, "at once")
	r = run(t, Schedule{Every: 300 * time.Millisecond, Timeout: time.Second}, nil, 1, nil)
	assert.GreaterOrEqual(t, offset(r, 0), 300*time.Millisecond, "after one wait: the caller has just read it")
}

func TestRetrySoonerWhileFailing(t *testing.T) {
	s := Schedule{Every: time.Hour, Retry: 50 * time.Millisecond, Timeout: time.Second, AtOnce: true}
	r := run(t, s, nil, 2, errDown, errDown, nil)
	require.Len(t, r.at, 3)
	assert.Less(t, offset(r, 2), 2*time.Second, "retried every Retry while the reads failed, not every hour")
	// Retrying decides instead of the last error (SAML: while nothing was ever read).
	never := true
	s.Retrying = func(error) bool { return never }
	s.AtOnce = false
	r = run(t, s, nil, 2, nil)
	assert.Less(t, offset(r, 1), 2*time.Second, "Retrying said so, though the reads worked")
}

func TestChangesReportedOnce(t *testing.T) {
	s := Schedule{Every: 10 * time.Millisecond, Timeout: time.Second, AtOnce: true}
	r := run(t, s, nil, 7, nil, errDown, errDown, errOther, errOther, nil, nil)
	assert.Equal(t, [][2]error{{nil, errDown}, {errDown, errOther}, {errOther, nil}}, r.changes,
		"going down, failing otherwise, back: each once; no report while nothing changes")
	// The caller's last outcome is where the comparison starts.
	r = run(t, s, errDown, 2, errDown, nil)
	assert.Equal(t, [][2]error{{errDown, nil}}, r.changes)
}

func TestEachReadBoundedByTimeout(t *testing.T) {
	r := run(t, Schedule{Every: 10 * time.Millisecond, Timeout: 400 * time.Millisecond, AtOnce: true}, nil, 2, nil)
	for _, d := range r.deadline {
		assert.InDelta(t, 400*time.Millisecond, d, float64(200*time.Millisecond))
	}
}

// A read that the end of the context cuts short is not a change.
func TestReadCutByTheEndIsNotReported(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var reported []error
	Run(ctx, Schedule{Every: time.Hour, Timeout: time.Second, AtOnce: true}, nil, func(context.Context) error {
		cancel()
		return context.Canceled
	}, func(_, err error) { reported = append(reported, err) })
	assert.Empty(t, reported)
}
