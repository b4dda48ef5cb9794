package storetest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testPasswordLinks(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, newAccount("invite@example.com", false))
	require.NoError(t, err)
	now := Now()
	first := sessionID()
	second := sessionID()
	require.NoError(t, s.CreatePasswordLink(ctx, a.ID, first, now.Add(72*time.Hour)))
	got, err := s.PasswordLink(ctx, first, now)
	require.NoError(t, err)
	assert.Equal(t, a.ID, got)
	_, err = s.PasswordLink(ctx, first, now.Add(72*time.Hour))
	assert.ErrorIs(t, err, store.ErrNotFound, "expired")

	require.NoError(t, s.CreatePasswordLink(ctx, a.ID, second, now.Add(72*time.Hour)))
	_, err = s.PasswordLink(ctx, first, now)
	assert.ErrorIs(t, err, store.ErrNotFound, "a new link replaces the old")

	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if id, err := s.TakePasswordLink(ctx, second, now); err == nil && id == a.ID {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), wins.Load(), "taken once, even ten at once")
	_, err = s.PasswordLink(ctx, second, now)
	assert.ErrorIs(t, err, store.ErrNotFound, "gone once taken")

	third := sessionID()
	require.NoError(t, s.CreatePasswordLink(ctx, a.ID, third, now.Add(time.Hour)))
	_, err = s.TakePasswordLink(ctx, third, now.Add(time.Hour))
	assert.ErrorIs(t, err, store.ErrNotFound, "an expired link is not taken (and is gone)")
	_, err = s.TakePasswordLink(ctx, "unknown", now)
	assert.ErrorIs(t, err, store.ErrNotFound)
}
