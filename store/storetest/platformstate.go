package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// platformBudget: instances count each other by their heartbeats (one
// unheard of for the window no longer counts), serving instances apart
// from background-only ones and those with users waiting apart; a pause
// set through one is read through the other; an earlier pause changes
// nothing.
func platformBudget(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	now, window := Now(), 3*time.Second
	instA, instB := store.PlatformCaller{ID: "instance-a"}, store.PlatformCaller{ID: "instance-b"}
	got, err := a.PlatformHeartbeat(ctx, instA, now, window)
	require.NoError(t, err)
	assert.Equal(t, store.PlatformCallers{Serving: 1}, got, "no pause yet, nobody busy")
	got, err = b.PlatformHeartbeat(ctx, instB, now, window)
	require.NoError(t, err)
	assert.Equal(t, 2, got.Serving)
	got, err = a.PlatformHeartbeat(ctx, instA, now.Add(time.Second), window)
	require.NoError(t, err)
	assert.Equal(t, 2, got.Serving, "a heartbeat replaces the instance's last one")
	got, err = a.PlatformHeartbeat(ctx, instA, now.Add(5*time.Second), window)
	require.NoError(t, err)
	assert.Equal(t, 1, got.Serving, "b is gone after the window")

	until := now.Add(2 * time.Second)
	require.NoError(t, a.PausePlatform(ctx, until))
	require.NoError(t, a.PausePlatform(ctx, now.Add(time.Second)))
	got, err = b.PlatformHeartbeat(ctx, instB, now.Add(6*time.Second), window)
	require.NoError(t, err)
	assert.True(t, until.Equal(got.PausedUntil), "the later pause holds: %s", got.PausedUntil)
	assert.True(t, got.SlowUntil.IsZero(), "not slow yet")
	slow := now.Add(30 * time.Second)
	require.NoError(t, a.MarkPlatformSlow(ctx, slow))
	require.NoError(t, a.MarkPlatformSlow(ctx, now.Add(10*time.Second)))
	got, err = b.PlatformHeartbeat(ctx, instB, now.Add(6*time.Second), window)
	require.NoError(t, err)
	assert.True(t, slow.Equal(got.SlowUntil), "the later slowness holds, for every instance: %s", got.SlowUntil)

	// A provisioning run counts apart; a busy instance stays busy for the
	// window after its last busy heartbeat.
	at := now.Add(7 * time.Second)
	busyA := store.PlatformCaller{ID: "instance-a", Busy: true}
	_, err = a.PlatformHeartbeat(ctx, busyA, at, window)
	require.NoError(t, err)
	got, err = b.PlatformHeartbeat(ctx, store.PlatformCaller{ID: "provision", Background: true}, at, window)
	require.NoError(t, err)
	assert.Equal(t, store.PlatformCallers{Serving: 2, Background: 1, Busy: 1, PausedUntil: got.PausedUntil, SlowUntil: got.SlowUntil}, got)
	got, err = a.PlatformHeartbeat(ctx, instA, at.Add(time.Second), window)
	require.NoError(t, err)
	assert.Equal(t, 1, got.Busy, "a was busy a second ago")
	got, err = a.PlatformHeartbeat(ctx, instA, at.Add(2*window), window)
	require.NoError(t, err)
	assert.Equal(t, store.PlatformCallers{Serving: 1, PausedUntil: got.PausedUntil, SlowUntil: got.SlowUntil}, got, "no longer busy; the others gone")

	// Only the callers that call share the rate; one stays counted for the
	// window after its last active heartbeat.
	at = at.Add(3 * window)
	_, err = a.PlatformHeartbeat(ctx, store.PlatformCaller{ID: "instance-a", Active: true}, at, window)
	require.NoError(t, err)
	_, err = b.PlatformHeartbeat(ctx, instB, at, window)
	require.NoError(t, err)
	got, err = b.PlatformHeartbeat(ctx, store.PlatformCaller{ID: "provision", Background: true, Active: true}, at.Add(time.Second), window)
	require.NoError(t, err)
	assert.Equal(t, store.PlatformCallers{Serving: 2, Background: 1, ActiveServing: 1, ActiveBackground: 1, PausedUntil: got.PausedUntil, SlowUntil: got.SlowUntil}, got)
}
