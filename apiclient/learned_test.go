package apiclient

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var alice = NewUser{FirstName: "Alice", LastName: "A", Email: "alice@example.com"}

// errWouldWait stands for pacing.ErrWouldWait: a call of a launch run in
// its request, told not to wait for the platform's pace.
var errWouldWait = errors.New("the call would wait for its turn")

type mustNotWaitKey struct{}

// pausingPacer pauses on a 429 and then refuses a first attempt that must
// not wait (as package pacing does); it never refuses a retry.
type pausingPacer struct {
	mu     sync.Mutex
	paused bool
}

func (p *pausingPacer) Wait(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused && ctx.Value(mustNotWaitKey{}) != nil {
		return errWouldWait
	}
	return nil
}
func (p *pausingPacer) WaitRetry(context.Context) error { return nil }
func (p *pausingPacer) Pause(time.Duration)             { p.mu.Lock(); p.paused = true; p.mu.Unlock() }

// A launch run in its request whose lookups back off on 429s and whose
// create would then wait hands over to the line; the line's run goes on
// from what the first learned (no such user) and looks up no more: a
// hand-over costs no platform call. Without what was learned, it looked
// up a fourth time.
func TestAHandOverAsksNothingTwice(t *testing.T) {
	for _, withLearned := range []bool{true, false} {
		pacer := &pausingPacer{}
		h := setup(t, func(o *Options) { o.Pacer = pacer })
		es := newEnsureServer(t, h)
		es.listFault = func(n int) int {
			if n <= 2 {
				return http.StatusTooManyRequests
			}
			return 0
		}
		var learned Learned
		ctx := context.Background()
		if withLearned {
			ctx = WithLearned(ctx, &learned)
		}
		_, err := h.client.EnsureUser(context.WithValue(ctx, mustNotWaitKey{}, true), alice)
		require.ErrorIs(t, err, errWouldWait, "in the request: the create would wait")
		require.Equal(t, 3, es.calls.get("list"), "two 429s, then the lookup that found no one")
		res, err := h.client.EnsureUser(ctx, alice) // the line's run
		require.NoError(t, err)
		assert.True(t, res.Created)
		if withLearned {
			assert.Equal(t, 3, es.calls.get("list"), "the line did not look up again")
		} else {
			assert.Equal(t, 4, es.calls.get("list"), "without it, a fourth lookup")
		}
		assert.Equal(t, 1, es.calls.get("create"))
		assert.Equal(t, 1, es.count(alice.Email))
	}
}

// What was learned is kept a short while only: a later run looks again.
func TestLearnedAbsenceExpires(t *testing.T) {
	now := fixedNow
	h := setup(t, func(o *Options) { o.Now = func() time.Time { return now } })
	es := newEnsureServer(t, h)
	es.createFault = func(n int) (int, bool) {
		if n == 1 {
			return http.StatusBadRequest, false
		}
		return 0, false
	}
	var learned Learned
	ctx := WithLearned(context.Background(), &learned)
	_, err := h.client.EnsureUser(ctx, alice)
	require.Error(t, err)
	now = now.Add(learnedFor + time.Second)
	_, err = h.client.EnsureUser(ctx, alice)
	require.NoError(t, err)
	assert.Equal(t, 2, es.calls.get("list"), "looked up again after learnedFor")
}
