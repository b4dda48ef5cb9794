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

// tickets: a ticket made on one instance is read, claimed when its owner
// went quiet (not before), finished only by its owner, and taken once, by
// its account only, on the other.
func tickets(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	acct, err := a.CreateAccount(ctx, newAccount("line@example.com", false))
	require.NoError(t, err)
	now := Now().Truncate(time.Millisecond)
	tk := store.Ticket{ID: "t1", AccountID: acct.ID, SessionID: "session-1", ReturnTo: "/editor", ArrivedAt: now, ETA: now.Add(30 * time.Second),
		Owner: "instance-a", SeenAt: now, ExpiresAt: now.Add(10 * time.Minute)}
	require.NoError(t, a.CreateTicket(ctx, tk))
	got, err := b.TicketByID(ctx, "t1")
	require.NoError(t, err)
	tk.State = store.TicketWaiting
	assert.Equal(t, tk, got)
	_, err = b.TicketByID(ctx, "t2")
	assert.ErrorIs(t, err, store.ErrNotFound)

	_, err = b.TakeTicket(ctx, "t1", acct.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "a waiting ticket is not taken")
	assert.ErrorIs(t, b.ClaimTicket(ctx, "t1", "instance-b", now, now.Add(time.Second)), store.ErrNotFound, "its owner is not quiet")
	require.NoError(t, a.KeepTickets(ctx, "instance-a", now.Add(5*time.Second)))
	assert.ErrorIs(t, b.ClaimTicket(ctx, "t1", "instance-b", now.Add(time.Second), now.Add(6*time.Second)), store.ErrNotFound, "kept alive")
	require.NoError(t, b.ClaimTicket(ctx, "t1", "instance-b", now.Add(10*time.Second), now.Add(20*time.Second)), "quiet since 5 s")
	assert.ErrorIs(t, a.FinishTicket(ctx, "t1", "instance-a", store.TicketDone, "sealed", ""), store.ErrNotFound, "a no longer owns it")
	assert.ErrorIs(t, b.FinishTicket(ctx, "t1", "instance-b", "bogus", "", ""), store.ErrInvalid)
	require.NoError(t, b.FinishTicket(ctx, "t1", "instance-b", store.TicketDone, "sealed-url", ""))
	assert.ErrorIs(t, b.FinishTicket(ctx, "t1", "instance-b", store.TicketFailed, "", "x"), store.ErrNotFound, "finished once")

	_, err = a.TakeTicket(ctx, "t1", acct.ID+1)
	assert.ErrorIs(t, err, store.ErrNotFound, "another account's")
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := []store.Store{a, b}[i%2]
			if got, err := s.TakeTicket(ctx, "t1", acct.ID); err == nil && got.Sealed == "sealed-url" {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), wins.Load(), "taken once, even six times at once")

	require.NoError(t, a.CreateTicket(ctx, store.Ticket{ID: "old", AccountID: acct.ID, ArrivedAt: now, ETA: now, Owner: "x", SeenAt: now, ExpiresAt: now}))
	require.NoError(t, a.CreateTicket(ctx, store.Ticket{ID: "new", AccountID: acct.ID, ArrivedAt: now, ETA: now, Owner: "x", SeenAt: now, ExpiresAt: now.Add(time.Hour)}))
	n, err := b.PruneTickets(ctx, now.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	_, err = a.TicketByID(ctx, "new")
	assert.NoError(t, err)
}

// testTicketsOfEndedSessions: a waiting launch's ticket goes with its
// session: one session's end takes its tickets only; ending every
// session, a new password and disabling take all the account's.
func testTicketsOfEndedSessions(t *testing.T, s store.Store) {
	ctx := context.Background()
	now := Now()
	a, err := s.CreateAccount(ctx, newAccount("tix@example.com", false))
	require.NoError(t, err)
	other, err := s.CreateAccount(ctx, newAccount("other-tix@example.com", false))
	require.NoError(t, err)
	ticket := func(id string, account int64, session string) {
		require.NoError(t, s.CreateTicket(ctx, store.Ticket{ID: id, AccountID: account, SessionID: session, ArrivedAt: now, ETA: now,
			Owner: "x", SeenAt: now, ExpiresAt: now.Add(time.Hour)}))
	}
	gone := func(id string) bool {
		_, err := s.TicketByID(ctx, id)
		return errors.Is(err, store.ErrNotFound)
	}
	s1, s2 := newSession(t, s, a.ID, now, "one"), newSession(t, s, a.ID, now, "two")
	so := newSession(t, s, other.ID, now, "other")
	ticket("a1", a.ID, s1.ID)
	ticket("a2", a.ID, s2.ID)
	ticket("o1", other.ID, so.ID)
	require.NoError(t, s.EndSession(ctx, a.ID, s1.ID))
	assert.True(t, gone("a1"), "signed out: its session's ticket is gone")
	assert.False(t, gone("a2"), "the account's other session keeps its own")

	for name, end := range map[string]func() error{
		"every session ended": func() error { return s.EndSessions(ctx, a.ID) },
		"a new password":      func() error { return s.SetPasswordHash(ctx, a.ID, "new-hash") },
		"disabled":            func() error { return s.SetDisabled(ctx, a.ID, true) },
	} {
		ticket("a3", a.ID, s2.ID)
		require.NoError(t, end(), name)
		assert.True(t, gone("a3"), name)
		require.NoError(t, s.SetDisabled(ctx, a.ID, false))
	}
	assert.False(t, gone("o1"), "another account's ticket stays")
}
