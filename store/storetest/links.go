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

func testLinks(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, newAccount("l@example.com", false))
	require.NoError(t, err)
	_, err = s.LinkFor(ctx, a.ID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, s.SaveLink(ctx, a.ID, "9007199254740993"))
	l, err := s.LinkFor(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, "9007199254740993", l.PlatformUserID)
	assert.True(t, l.LastLaunchAt.IsZero())
	require.NoError(t, s.RecordLaunch(ctx, store.Event{AccountID: a.ID, Outcome: "platform_unavailable"}))
	l, _ = s.LinkFor(ctx, a.ID)
	assert.True(t, l.LastLaunchAt.IsZero(), "a failed launch does not count as the last launch")
	at := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	require.NoError(t, s.RecordLaunch(ctx, store.Event{AccountID: a.ID, Outcome: "ok", At: at}))
	l, _ = s.LinkFor(ctx, a.ID)
	assert.Equal(t, at, l.LastLaunchAt, "a successful launch stamps the link")
	require.NoError(t, s.RecordLaunch(ctx, store.Event{AccountID: a.ID, Outcome: "ok", At: at.Add(store.LaunchStampEvery - time.Second)}))
	l, _ = s.LinkFor(ctx, a.ID)
	assert.Equal(t, at, l.LastLaunchAt, "stamped less than LaunchStampEvery ago: left as it is")
	later := at.Add(store.LaunchStampEvery)
	require.NoError(t, s.RecordLaunch(ctx, store.Event{AccountID: a.ID, Outcome: "ok", At: later}))
	l, _ = s.LinkFor(ctx, a.ID)
	assert.Equal(t, later, l.LastLaunchAt, "stamped LaunchStampEvery ago: moved")
	evs, _, err := s.ListEvents(ctx, store.AuditFilter{AccountID: a.ID, Kind: store.KindLaunch})
	require.NoError(t, err)
	assert.Len(t, evs, 4, "every launch is audited")

	m, err := s.ListLinks(ctx, []string{"9007199254740993", "other"})
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"9007199254740993": a.ID}, m)

	require.NoError(t, s.DeleteLink(ctx, a.ID, "someone-else"), "compare-and-delete: no match, no delete")
	_, err = s.LinkFor(ctx, a.ID)
	require.NoError(t, err)
	require.NoError(t, s.DeleteLink(ctx, a.ID, "9007199254740993"))
	_, err = s.LinkFor(ctx, a.ID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.ErrorIs(t, s.SaveLink(ctx, a.ID, ""), store.ErrInvalid)
}

// A platform user is linked to one account at most: linking it to a
// second account is refused and changes nothing, also when two accounts
// try at once; once its link is dropped, another account may take it.
func testOnePlatformUserOneAccount(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, newAccount("one@example.com", false))
	require.NoError(t, err)
	b, err := s.CreateAccount(ctx, newAccount("two@example.com", false))
	require.NoError(t, err)
	require.NoError(t, s.SaveLink(ctx, a.ID, "p-1"))
	require.NoError(t, s.SaveLink(ctx, a.ID, "p-1"), "the same link again is no change")
	err = s.SaveLink(ctx, b.ID, "p-1")
	require.ErrorIs(t, err, store.ErrLinkTaken)
	assert.Contains(t, err.Error(), "p-1")
	_, err = s.LinkFor(ctx, b.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "a refused link is not stored")
	require.NoError(t, s.SaveLink(ctx, b.ID, "p-2"))
	assert.ErrorIs(t, s.SaveLink(ctx, b.ID, "p-1"), store.ErrLinkTaken, "nor does it replace another link")
	l, err := s.LinkFor(ctx, b.ID)
	require.NoError(t, err)
	assert.Equal(t, "p-2", l.PlatformUserID)

	require.NoError(t, s.DeleteLink(ctx, a.ID, "p-1"))
	require.NoError(t, s.SaveLink(ctx, b.ID, "p-1"), "a platform user no one holds may be linked")
	m, err := s.ListLinks(ctx, []string{"p-1", "p-2"})
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"p-1": b.ID}, m)

	// Two accounts link one platform user at once: one wins.
	c, err := s.CreateAccount(ctx, newAccount("three@example.com", false))
	require.NoError(t, err)
	d, err := s.CreateAccount(ctx, newAccount("four@example.com", false))
	require.NoError(t, err)
	errs := make(chan error, 2)
	for _, id := range []int64{c.ID, d.ID} {
		go func() { errs <- s.SaveLink(ctx, id, "p-3") }()
	}
	first, second := <-errs, <-errs
	if first != nil {
		first, second = second, first
	}
	require.NoError(t, first)
	assert.ErrorIs(t, second, store.ErrLinkTaken)
	m, err = s.ListLinks(ctx, []string{"p-3"})
	require.NoError(t, err)
	assert.Len(t, m, 1)
}

// provisioningLock: one holder per email at a time, whichever store it
// takes the lock on; other emails are not held up; a waiter gives up when
// its context ends.
func provisioningLock(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	unlock, err := a.LockProvisioning(ctx, "Ada@Example.com")
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = b.LockProvisioning(short, "ada@example.COM")
	cancel()
	assert.ErrorIs(t, err, context.DeadlineExceeded, "held: the same email in another case waits")
	other, err := b.LockProvisioning(ctx, "grace@example.com")
	require.NoError(t, err, "another email is free")
	other()
	unlock()
	unlock() // twice is harmless

	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := []store.Store{a, b}[i%2]
			unlock, err := s.LockProvisioning(ctx, "race@example.com")
			if !assert.NoError(t, err) {
				return
			}
			n := inside.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(2 * time.Millisecond) // hold it a moment, as a platform call would
			inside.Add(-1)
			unlock()
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), most.Load(), "never two holders at once")
}
