package passhash

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

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
	for _, tt := range []struct {
		pw, why string // why: "" when accepted
	}{
		{"long enough", ""},
		{"zebra-kettle-violin", ""},
		{"ünïcödé", "at least 8 characters"}, // 7 characters, 11 bytes
		{"ünïcödé!", ""},
		{"short", "at least 8 characters"},
		{strings.Repeat("x", 1025), "1024 bytes"},
		{"        ", "only spaces"},
		{" 	    	  ", "only spaces"},
		{"password", "most common"},
		{"PassWord", "most common"}, // in any case
		{"12345678", "most common"},
		{"qwertyuiop", "most common"},
		{"1qaz2wsx", "most common"},
		{"iloveyou", "most common"},
	} {
		err := CheckPassword(tt.pw)
		if tt.why == "" {
			assert.NoError(t, err, "%q", tt.pw)
			continue
		}
		assert.ErrorIs(t, err, ErrWeakPassword, "%q", tt.pw)
		assert.ErrorContains(t, err, tt.why, "%q", tt.pw)
	}
}

// The bundled list holds at least 10,000 passwords (NIST SP 800-63B), all
// of a length the length rule would accept, each once, lower-cased.
func TestCommonPasswordList(t *testing.T) {
	l := strings.Split(strings.TrimSuffix(commonPasswordList, "\n"), "\n")
	assert.GreaterOrEqual(t, len(l), 10000)
	seen := map[string]bool{}
	for _, pw := range l {
		assert.GreaterOrEqual(t, len(pw), MinPasswordLength, "%q", pw)
		assert.Equal(t, strings.ToLower(pw), pw)
		assert.False(t, seen[pw], "%q twice", pw)
		seen[pw] = true
		assert.True(t, isCommonPassword(pw), "%q", pw)
	}
	assert.Len(t, commonPasswords(), len(l), "no word splits in two")
}

// TestHashingIsBoundedByConcurrency drives the real Hash and Verify from
// 20 goroutines with a key derivation that holds until released: inside a
// synctest bubble, once every goroutine is blocked, exactly Concurrency of
// them are deriving and the rest wait for a slot. Then all finish.
func TestHashingIsBoundedByConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, err := NewHasher(cheap, 2)
		require.NoError(t, err)
		ctx := context.Background()
		enc, err := h.Hash(ctx, "correct horse")
		require.NoError(t, err)

		derive := h.kdf
		release := make(chan struct{})
		var inFlight, peak atomic.Int32
		h.kdf = func(pw, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte {
			n := inFlight.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			<-release
			inFlight.Add(-1)
			return derive(pw, salt, time, memory, threads, keyLen)
		}
		errs := make(chan error, 20)
		for i := range 20 {
			go func() {
				if i%2 == 0 {
					_, err := h.Hash(ctx, "correct horse")
					errs <- err
				} else {
					errs <- h.Verify(ctx, "correct horse", enc)
				}
			}()
		}
		synctest.Wait() // every goroutine is deriving or waiting for a slot
		assert.Equal(t, int32(2), inFlight.Load(), "two derive, eighteen wait")

		// A hash that is still waiting gives up when its context ends.
		cctx, cancel := context.WithCancel(ctx)
		late := make(chan error, 1)
		go func() {
			_, err := h.Hash(cctx, "x")
			late <- err
		}()
		synctest.Wait()
		cancel()
		assert.ErrorIs(t, <-late, context.Canceled)

		close(release)
		for range 20 {
			assert.NoError(t, <-errs)
		}
		assert.Equal(t, int32(2), peak.Load(), "never more than hash_concurrency at once")
		assert.Equal(t, int64(10), h.Verifications())
	})
}

// A hash that waits MaxHashWait for a slot gives up with ErrBusy (virtual
// time: synctest advances the clock once every goroutine is blocked).
func TestHashingGivesUpWhenNoSlotComesFree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, err := NewHasher(cheap, 1)
		require.NoError(t, err)
		release := make(chan struct{})
		derive := h.kdf
		h.kdf = func(pw, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte {
			<-release
			return derive(pw, salt, time, memory, threads, keyLen)
		}
		done := make(chan error, 1)
		go func() {
			_, err := h.Hash(context.Background(), "holds the slot")
			done <- err
		}()
		synctest.Wait()
		start := time.Now()
		_, err = h.Hash(context.Background(), "waits")
		assert.ErrorIs(t, err, ErrBusy)
		assert.Equal(t, MaxHashWait, time.Since(start), "it waited exactly the bound")
		assert.ErrorIs(t, h.Verify(context.Background(), "x", "$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA"), ErrBusy)
		close(release)
		assert.NoError(t, <-done)
	})
}
