package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testAudit(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i := range 5 {
		outcome := "ok"
		if i%2 == 1 {
			outcome = "failed"
		}
		require.NoError(t, s.Record(ctx, store.Event{Kind: store.KindLogin, AccountID: int64(i%2 + 1), Outcome: outcome, Email: fmt.Sprint(i)}))
	}
	require.NoError(t, s.Record(ctx, store.Event{Kind: store.KindLaunch, Outcome: "ok", PlatformCalls: 3, Latency: 25 * time.Millisecond, At: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}))
	evs, total, err := s.ListEvents(ctx, store.AuditFilter{})
	require.NoError(t, err)
	assert.Equal(t, 6, total)
	assert.Equal(t, store.KindLaunch, evs[0].Kind, "newest first")
	assert.Equal(t, 3, evs[0].PlatformCalls)
	assert.Equal(t, 25*time.Millisecond, evs[0].Latency)

	_, total, _ = s.ListEvents(ctx, store.AuditFilter{Kind: store.KindLogin, Outcome: "failed"})
	assert.Equal(t, 2, total)
	evs, total, _ = s.ListEvents(ctx, store.AuditFilter{AccountID: 1, Limit: 2})
	assert.Equal(t, 3, total)
	assert.Len(t, evs, 2)

	// Bounded to the newest events: the last two sign-ins and the launch.
	evs, total, err = s.ListEvents(ctx, store.AuditFilter{Newest: 3})
	require.NoError(t, err)
	assert.Equal(t, 3, total)
	require.Len(t, evs, 3)
	assert.Equal(t, []string{store.KindLaunch, "4", "3"}, []string{evs[0].Kind, evs[1].Email, evs[2].Email})
	_, total, _ = s.ListEvents(ctx, store.AuditFilter{Kind: store.KindLogin, Outcome: "failed", Newest: 3})
	assert.Equal(t, 1, total, "of the failed sign-ins 1 and 3, only 3 is among the newest three")
	_, total, _ = s.ListEvents(ctx, store.AuditFilter{Newest: 1000})
	assert.Equal(t, 6, total, "a bound above the log's size bounds nothing")

	n, next, err := s.PruneEvents(ctx, time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC), 0, 1000)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	assert.Zero(t, next, "fewer than 1,000 events: the walk reached the last")
}

// Retention runs in bounded batches: each call deletes at most its limit,
// the oldest first, and nothing younger than the bound.
func testPruneInBatches(t *testing.T, s store.Store) {
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 7 {
		require.NoError(t, s.Record(ctx, store.Event{Kind: store.KindLogin, Outcome: "ok", Detail: fmt.Sprint(i), At: base.Add(time.Duration(i) * time.Hour)}))
	}
	cut := base.Add(5 * time.Hour) // events 0..4 are older
	// Walked two at a time by id: two whole chunks, then one that holds a
	// younger event, where the pass stops.
	var got []int64
	for after := int64(0); ; {
		n, next, err := s.PruneEvents(ctx, cut, after, 2)
		require.NoError(t, err)
		got = append(got, n)
		if n < 2 || next == 0 {
			break
		}
		assert.Greater(t, next, after, "the walk moves on")
		after = next
	}
	assert.Equal(t, []int64{2, 2, 1}, got)
	evs, total, err := s.ListEvents(ctx, store.AuditFilter{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 2, total, "the younger two stay")
	for _, e := range evs {
		assert.False(t, e.At.Before(cut))
	}
	// Rows stamped after a time, in a range of ids: the two left, stamped
	// 5 and 6 hours after base.
	n, first, err := s.EventsStampedAfter(ctx, 0, 0, base.Add(5*time.Hour+30*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	assert.Equal(t, evs[0].ID, first, "the newest, 6 hours after base")
	n, _, err = s.EventsStampedAfter(ctx, 0, evs[1].ID, base)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "up to the older of the two")

	a, err := s.CreateAccount(ctx, newAccount("prune@example.com", false))
	require.NoError(t, err)
	for i := range 3 {
		newSession(t, s, a.ID, base.Add(time.Duration(i)*time.Minute), "ua")
	}
	kept := newSession(t, s, a.ID, base.Add(time.Hour), "ua")
	// The sessions are walked two at a time by id: each chunk deletes
	// at most its two, and the walk ends after the fourth session.
	var deleted int64
	calls := 0
	for after := ""; ; calls++ {
		n, next, err := s.PruneSessions(ctx, base.Add(30*time.Minute), after, 2)
		require.NoError(t, err)
		assert.LessOrEqual(t, n, int64(2), "a chunk deletes only among its own sessions")
		deleted += n
		if next == "" {
			break
		}
		assert.Greater(t, next, after, "the walk moves on")
		after = next
		require.Less(t, calls, 10, "the walk ends")
	}
	assert.Equal(t, int64(3), deleted)
	assert.Equal(t, 2, calls, "four sessions, two a chunk: the walk ends on the third call")
	_, err = s.SessionByID(ctx, kept.ID)
	assert.NoError(t, err, "a session seen since stays")
}
