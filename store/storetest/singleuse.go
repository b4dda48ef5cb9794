package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// singleUse: an id is used once until its time, whichever store records
// it; ids of another kind are apart; past its time it may be used again.
// now is the stores' clock.
func singleUse(t *testing.T, a, b store.Store, now time.Time) {
	ctx := context.Background()
	until := now.Add(5 * time.Minute)
	require.NoError(t, a.UseOnce(ctx, "jwt", "issuer/jti-1", until))
	assert.ErrorIs(t, b.UseOnce(ctx, "jwt", "issuer/jti-1", until), store.ErrUsed, "replayed")
	assert.NoError(t, b.UseOnce(ctx, "other", "issuer/jti-1", until), "another kind")
	assert.NoError(t, b.UseOnce(ctx, "jwt", "issuer/jti-2", until))

	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := []store.Store{a, b}[i%2].UseOnce(ctx, "jwt", "race", until); err == nil {
				wins.Add(1)
			} else if !errors.Is(err, store.ErrUsed) {
				t.Errorf("use once: %v", err)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), wins.Load(), "ten at once: one use")

	// Past its time it is forgotten and usable.
	require.NoError(t, a.UseOnce(ctx, "jwt", "old", now.Add(-time.Second)))
	assert.NoError(t, b.UseOnce(ctx, "jwt", "old", until), "expired: usable again")
	n, err := a.PruneUsedIDs(ctx, now.Add(6*time.Minute))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, n, int64(4))
	assert.NoError(t, a.UseOnce(ctx, "jwt", "issuer/jti-1", until), "pruned")
}
