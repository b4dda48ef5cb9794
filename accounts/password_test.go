package accounts

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var cheap = HashParams{MemoryKiB: 64, Iterations: 1, Parallelism: 1}

func TestHashAndVerify(t *testing.T) {
	h, err := NewHasher(cheap, 2)
	require.NoError(t, err)
	ctx := context.Background()
	enc, err := h.Hash(ctx, "correct horse")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(enc, "$argon2id$v=19$m=64,t=1,p=1$"))
	assert.NotContains(t, enc, "correct horse")
	require.NoError(t, h.Verify(ctx, "correct horse", enc))
	assert.ErrorIs(t, h.Verify(ctx, "wrong horse", enc), ErrPasswordMismatch)

	enc2, _ := h.Hash(ctx, "correct horse")
	assert.NotEqual(t, enc, enc2, "salted")

	// a hash made with other parameters still verifies (params are in the hash)
	h2, _ := NewHasher(HashParams{MemoryKiB: 128, Iterations: 2, Parallelism: 1}, 1)
	require.NoError(t, h2.Verify(ctx, "correct horse", enc))

	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=64,t=1,p=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=x$c2FsdA$aGFzaA", "$argon2id$v=19$m=64,t=1,p=1$!!$aGFzaA"} {
		err := h.Verify(ctx, "x", bad)
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrPasswordMismatch, bad)
	}
	assert.ErrorIs(t, h.VerifyDummy(ctx, "anything"), ErrPasswordMismatch)
}

func TestCheckPassword(t *testing.T) {
	assert.ErrorIs(t, CheckPassword("short"), ErrInvalid)
	assert.ErrorIs(t, CheckPassword(strings.Repeat("x", 1025)), ErrInvalid)
	assert.NoError(t, CheckPassword("long enough"))
}

func TestHashingIsBoundedByConcurrency(t *testing.T) {
	h, err := NewHasher(cheap, 2)
	require.NoError(t, err)
	var inFlight, peak atomic.Int32
	// Occupy the slots by hand to observe the bound.
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			require.NoError(t, h.acquire(context.Background()))
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			inFlight.Add(-1)
			h.release()
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, peak.Load(), int32(2))

	// A waiting hash gives up when its context ends.
	require.NoError(t, h.acquire(context.Background()))
	require.NoError(t, h.acquire(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = h.Hash(ctx, "x")
	assert.ErrorIs(t, err, context.Canceled)
	h.release()
	h.release()
}
