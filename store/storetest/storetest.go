// Package storetest is the conformance suite of store.Store: every stack
// production runs (SQLite and PostgreSQL, each behind the guard, bare and
// with the cache in front) runs the same sub-tests, in a fixed order, so a
// stack cannot break a promise the others keep (the model is Dex's
// storage/conformance).
package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/fakeclock"
	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/store"
)

// Open returns a new, empty store for one sub-test, closed by the test's
// cleanup; now is the store's clock.
type Open func(t *testing.T, now func() time.Time) store.Store

// Now is the clock every sub-test gives its store.
func Now() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }

// Run runs every conformance sub-test against stores made by open.
func Run(t *testing.T, open Open) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"accounts", testAccounts},
		{"one address, one account", testOneAddressOneAccount},
		{"bulk all-or-none", testBulkCreate},
		{"delete", testDeleteAccount},
		{"admin rules", testAdminRules},
		{"sessions epoch", testSessionEpoch},
		{"links", testLinks},
		{"one platform user, one account", testOnePlatformUserOneAccount},
		{"audit", testAudit},
		{"retention in bounded batches", testPruneInBatches},
		{"list accounts", testListAccounts},
		{"concurrent writes", testConcurrentWrites},
		{"regulation bans an email", testRegulationPerEmail},
		{"regulation bans an IP", testRegulationPerIP},
		{"regulation admits no more than the limit in parallel", testRegulationParallel},
		{"regulation lists, lifts and prunes bans", testRegulationListLiftPrune},
		{"sessions", testSessions},
		{"provisioning lock", func(t *testing.T, s store.Store) { provisioningLock(t, s, s) }},
		{"single-use ids", func(t *testing.T, s store.Store) { singleUse(t, s, s, Now()) }},
		{"set-password links", testPasswordLinks},
		{"platform budget", func(t *testing.T, s store.Store) { platformBudget(t, s, s) }},
		{"launch tickets", func(t *testing.T, s store.Store) { tickets(t, s, s) }},
		{"launch tickets go with their sessions", testTicketsOfEndedSessions},
		{"provisioning job", func(t *testing.T, s store.Store) { provisionJob(t, s, s) }},
		{"unlinked accounts", testUnlinked},
		{"update account", testUpdateAccount},
		{"accounts by address and external id", testAccountFilters},
		{"groups", testGroups},
		{"the admin role follows the admin group", testFollowAdminGroup},
		{"outside identities", testIdentities},
		{"outside identities move with their source", testMoveIdentities},
		{"kept values", testKeptValues},
		{"LMSs registered by Dynamic Registration", testLTIPlatforms},
		{"LTI courses and their rosters", testLTICourses},
		{"text from outside is kept bounded", testOutsideTextBounded},
		{"keys of any text", testKeysOfAnyText},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t, Now)) })
	}
}

func newAccount(email string, admin bool) store.NewAccount {
	return store.NewAccount{Email: email, FirstName: "First", LastName: "Last", PasswordHash: "$argon2id$x", Admin: admin}
}

func testAccounts(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, store.NewAccount{Email: " Ada@Example.com ", FirstName: " Ada ", LastName: "Lovelace", PasswordHash: "h"})
	require.NoError(t, err)
	assert.Equal(t, "Ada@Example.com", a.Email, "trimmed, case kept")
	assert.Equal(t, "Ada Lovelace", a.Name())
	assert.False(t, a.Admin)

	got, err := s.AccountByEmail(ctx, "ada@EXAMPLE.com")
	require.NoError(t, err)
	assert.Equal(t, a.ID, got.ID, "found case-insensitively")

	_, err = s.CreateAccount(ctx, newAccount("ADA@example.com", false))
	assert.ErrorIs(t, err, store.ErrEmailTaken, "unique case-insensitively")

	for _, bad := range []store.NewAccount{
		{Email: "no-at", FirstName: "A", LastName: "B", PasswordHash: "h"},
		{Email: "A <a@b.example>", FirstName: "A", LastName: "B", PasswordHash: "h"},
		{Email: "a@b.example", FirstName: "", LastName: "B", PasswordHash: "h"},
		{Email: "a@b.example", FirstName: "A", LastName: "B"},
	} {
		_, err := s.CreateAccount(ctx, bad)
		assert.ErrorIs(t, err, store.ErrInvalid, "%+v", bad)
	}
	n, err := s.CountAccounts(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "bad input writes nothing")

	_, err = s.AccountByID(ctx, 999)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.AccountByEmail(ctx, "nobody@example.com")
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.ErrorIs(t, s.SetDisabled(ctx, 999, true), store.ErrNotFound)

	require.NoError(t, s.SetDisabled(ctx, a.ID, true))
	got, _ = s.AccountByID(ctx, a.ID)
	assert.True(t, got.Disabled)
	require.NoError(t, s.SetDisabled(ctx, a.ID, false))
	got, _ = s.AccountByID(ctx, a.ID)
	assert.False(t, got.Disabled)
	require.NoError(t, s.Ping(ctx))
}

// Only ASCII letters fold: an address that Unicode case mapping would
// turn into another (U+0130 and the Kelvin sign lower to "i" and "k") is
// an account of its own, never a way into the other.
func testOneAddressOneAccount(t *testing.T, s store.Store) {
	ctx := context.Background()
	kim, err := s.CreateAccount(ctx, newAccount("kim@example.com", true))
	require.NoError(t, err)
	for _, other := range []string{"k\u0130m@example.com", "\u212Aim@example.com", "kim@exampl\u0130.com", "d\u0435mo@example.com"} {
		_, err := s.AccountByEmail(ctx, other)
		assert.ErrorIs(t, err, store.ErrNotFound, "%q is not kim@example.com", other)
		a, err := s.CreateAccount(ctx, newAccount(other, false))
		require.NoError(t, err, "%q is an address of its own", other)
		assert.NotEqual(t, kim.ID, a.ID)
		got, err := s.AccountByEmail(ctx, other)
		require.NoError(t, err)
		assert.Equal(t, a.ID, got.ID)
	}
	got, err := s.AccountByEmail(ctx, "KIM@Example.COM")
	require.NoError(t, err)
	assert.Equal(t, kim.ID, got.ID, "ASCII letters fold")
	_, err = s.CreateAccount(ctx, newAccount("Zo\u00eb@example.com", false))
	require.NoError(t, err)
	_, err = s.AccountByEmail(ctx, "ZO\u00cb@example.com")
	assert.ErrorIs(t, err, store.ErrNotFound, "non-ASCII letters keep their case")
}

// Deleting an account takes its link, sessions and set-password links
// with it; the address can be used again; the last active admin stays.
func testDeleteAccount(t *testing.T, s store.Store) {
	ctx := context.Background()
	admin, err := s.CreateAccount(ctx, newAccount("admin@example.com", true))
	require.NoError(t, err)
	a, err := s.CreateAccount(ctx, newAccount("gone@example.com", false))
	require.NoError(t, err)
	require.NoError(t, s.SaveLink(ctx, a.ID, "77"))
	sess := newSession(t, s, a.ID, Now(), "ua")
	require.NoError(t, s.CreatePasswordLink(ctx, a.ID, sessionID(), Now().Add(time.Hour)))

	require.NoError(t, s.DeleteAccount(ctx, a.ID))
	_, err = s.AccountByID(ctx, a.ID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.FreshAccountByID(ctx, a.ID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.LinkFor(ctx, a.ID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.SessionByID(ctx, sess.ID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.ErrorIs(t, s.DeleteAccount(ctx, a.ID), store.ErrNotFound)
	again, err := s.CreateAccount(ctx, newAccount("gone@example.com", false))
	require.NoError(t, err, "the address can be used again")
	assert.Greater(t, again.ID, a.ID, "a deleted account's id is never given again (caches elsewhere may still hold it)")

	assert.ErrorIs(t, s.DeleteAccount(ctx, admin.ID), store.ErrLastAdmin)
	_, err = s.AccountByID(ctx, admin.ID)
	assert.NoError(t, err)
}

func testBulkCreate(t *testing.T, s store.Store) {
	ctx := context.Background()
	err := s.CreateAccounts(ctx, []store.NewAccount{newAccount("one@example.com", false), newAccount("bad", false), newAccount("three@example.com", false)})
	require.ErrorIs(t, err, store.ErrInvalid)
	assert.ErrorContains(t, err, "row 2")
	err = s.CreateAccounts(ctx, []store.NewAccount{newAccount("one@example.com", false), newAccount("ONE@example.com", false)})
	require.ErrorIs(t, err, store.ErrEmailTaken)
	n, _ := s.CountAccounts(ctx)
	assert.Equal(t, 0, n, "nothing written unless all rows pass")
	require.NoError(t, s.CreateAccounts(ctx, []store.NewAccount{newAccount("one@example.com", false), newAccount("two@example.com", false)}))
	n, _ = s.CountAccounts(ctx)
	assert.Equal(t, 2, n)
}

func testAdminRules(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, newAccount("admin@example.com", true))
	require.NoError(t, err)
	b, err := s.CreateAccount(ctx, newAccount("user@example.com", false))
	require.NoError(t, err)
	assert.ErrorIs(t, s.SetAdmin(ctx, a.ID, false), store.ErrLastAdmin)
	assert.ErrorIs(t, s.SetDisabled(ctx, a.ID, true), store.ErrLastAdmin, "disabling the last admin is removing it")
	require.NoError(t, s.SetAdmin(ctx, b.ID, true))
	require.NoError(t, s.SetAdmin(ctx, a.ID, false), "another admin exists now")
	got, _ := s.AccountByID(ctx, a.ID)
	assert.False(t, got.Admin)
	assert.ErrorIs(t, s.SetAdmin(ctx, b.ID, false), store.ErrLastAdmin)
}

func testSessionEpoch(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, newAccount("e@example.com", false))
	require.NoError(t, err)
	require.NoError(t, s.EndSessions(ctx, a.ID))
	require.NoError(t, s.SetPasswordHash(ctx, a.ID, "new-hash"))
	require.NoError(t, s.SetDisabled(ctx, a.ID, true))
	got, _ := s.AccountByID(ctx, a.ID)
	assert.Equal(t, a.SessionEpoch+3, got.SessionEpoch, "sign-out, password reset and disabling each end sessions")
	assert.Equal(t, "new-hash", got.PasswordHash)
	assert.ErrorIs(t, s.SetPasswordHash(ctx, a.ID, ""), store.ErrInvalid)
}

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

// pruneSessions walks every session once, deleting those last seen
// before before, and returns how many it deleted.
func pruneSessions(t *testing.T, s store.Store, before time.Time) int64 {
	t.Helper()
	var total int64
	for after := ""; ; {
		n, next, err := s.PruneSessions(context.Background(), before, after, 1000)
		require.NoError(t, err)
		total += n
		if next == "" {
			return total
		}
		after = next
	}
}

func testListAccounts(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i := range 12 {
		_, err := s.CreateAccount(ctx, store.NewAccount{Email: fmt.Sprintf("user%02d@example.com", i), FirstName: "U", LastName: fmt.Sprintf("N%d", i), PasswordHash: "h"})
		require.NoError(t, err)
	}
	_, err := s.CreateAccount(ctx, store.NewAccount{Email: "percent%x@example.com", FirstName: "Per", LastName: "Cent", PasswordHash: "h"})
	require.NoError(t, err)
	page, total, err := s.ListAccounts(ctx, store.AccountFilter{Limit: 5, Offset: 10})
	require.NoError(t, err)
	assert.Equal(t, 13, total)
	assert.Len(t, page, 3)
	_, total, _ = s.ListAccounts(ctx, store.AccountFilter{Search: "USER1"})
	assert.Equal(t, 2, total)
	_, total, _ = s.ListAccounts(ctx, store.AccountFilter{Search: "%"})
	assert.Equal(t, 1, total, "LIKE wildcards are literal")
	_, total, _ = s.ListAccounts(ctx, store.AccountFilter{Search: "u n3"})
	assert.Equal(t, 1, total, "names match")
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

// testConcurrentWrites: writes from many goroutines all land, each event
// with its own values (the group commit writes many events in one
// statement); errors are collected and asserted in the test goroutine.
func testConcurrentWrites(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, newAccount("c@example.com", false))
	require.NoError(t, err)
	const n = 150
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	event := func(i int) store.Event {
		e := store.Event{Kind: store.KindLaunch, Outcome: "ok", Email: fmt.Sprintf("e%d@example.com", i), PlatformCalls: i % 4,
			Latency: time.Duration(i) * time.Millisecond, Detail: fmt.Sprintf("detail %d", i), RequestID: fmt.Sprintf("req-%03d", i), At: at.Add(time.Duration(i) * time.Second)}
		if i%3 != 0 {
			e.AccountID = a.ID
		}
		return e
	}
	var wg sync.WaitGroup
	errs := make(chan error, n+n/10)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				errs <- s.RecordLaunch(ctx, event(i))
			} else {
				errs <- s.Record(ctx, event(i))
			}
			if i%10 == 0 {
				errs <- s.SaveLink(ctx, a.ID, fmt.Sprint(i))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	evs, total, err := s.ListEvents(ctx, store.AuditFilter{Limit: 500})
	require.NoError(t, err)
	assert.Equal(t, n, total)
	got := map[string]store.Event{}
	for _, e := range evs {
		got[e.RequestID] = e
	}
	for i := range n {
		want, e := event(i), got[fmt.Sprintf("req-%03d", i)]
		assert.Equal(t, []any{want.Kind, want.Outcome, want.Email, want.PlatformCalls, want.Latency, want.Detail, want.AccountID, want.At.Unix()},
			[]any{e.Kind, e.Outcome, e.Email, e.PlatformCalls, e.Latency, e.Detail, e.AccountID, e.At.Unix()}, "event %d", i)
	}
	l, err := s.LinkFor(ctx, a.ID)
	require.NoError(t, err)
	var saved []string
	for i := 0; i < n; i += 10 {
		saved = append(saved, fmt.Sprint(i))
	}
	assert.Contains(t, saved, l.PlatformUserID, "one of the writes won")
}

// regulator drives the store's sign-in counting as the bridge's
// regulation does (one attempt counted before its password is checked,
// then failed or succeeded), with the suite's clock: the store's rules,
// tested without the package above it.
type regulator struct {
	s   store.Store
	cfg store.RegulationConfig
	now func() time.Time
}

// attempt is an admitted sign-in attempt, by the store's id.
type attempt struct{ id int64 }

func newRegulator(s store.Store, cfg store.RegulationConfig, now func() time.Time) *regulator {
	if now == nil {
		now = time.Now
	}
	return &regulator{s: s, cfg: cfg, now: now}
}

func (r *regulator) Admit(ctx context.Context, email, ip string) (attempt, time.Time, error) {
	id, until, err := r.s.AdmitSignIn(ctx, store.SignIn{Email: email, IP: ip, At: r.now()}, r.cfg)
	return attempt{id}, until, err
}

func (r *regulator) BannedUntil(ctx context.Context, email, ip string) (time.Time, error) {
	return r.s.BannedUntil(ctx, email, ip, r.now())
}

func (r *regulator) Fail(ctx context.Context, a attempt) (bool, error) {
	return r.s.FailSignIn(ctx, a.id, r.cfg, r.now())
}

func (r *regulator) Succeed(ctx context.Context, a attempt) error {
	return r.s.SucceedSignIn(ctx, a.id)
}

// sessionID is a new id of the form the bridge stores for a session or a
// password link: the SHA-256 of a random token, in hex.
func sessionID() string {
	sum := sha256.Sum256([]byte(randid.Token(32)))
	return hex.EncodeToString(sum[:])
}

var rules = store.RegulationConfig{MaxRetries: 3, MaxRetriesPerIP: 100, FindTime: 2 * time.Minute, BanTime: 5 * time.Minute}

// attemptAndFail admits and fails one sign-in; it reports whether the
// attempt was refused (banned) and whether its failure started a ban.
func attemptAndFail(t *testing.T, r *regulator, email, ip string) (refused, started bool) {
	t.Helper()
	a, until, err := r.Admit(context.Background(), email, ip)
	require.NoError(t, err)
	if !until.IsZero() {
		return true, false
	}
	started, err = r.Fail(context.Background(), a)
	require.NoError(t, err)
	return false, started
}

func testRegulationPerEmail(t *testing.T, s store.Store) {
	ctx := context.Background()
	clk := fakeclock.New(time.Time{})
	r := newRegulator(s, rules, clk.Now)
	_, started := attemptAndFail(t, r, "Ada@example.com", "10.0.0.1")
	assert.False(t, started)
	clk.Advance(30 * time.Second)
	_, started = attemptAndFail(t, r, "ada@example.com", "10.0.0.2")
	assert.False(t, started)
	_, started = attemptAndFail(t, r, "ADA@example.com", "10.0.0.3")
	assert.True(t, started, "the third failure in the window bans, whatever the case of the email")
	_, until, err := r.Admit(ctx, "ada@example.com", "192.0.2.9")
	require.NoError(t, err)
	assert.Equal(t, clk.Now().Add(5*time.Minute), until, "the email is banned from any IP")
	a, until, err := r.Admit(ctx, "bob@example.com", "10.0.0.1")
	require.NoError(t, err)
	assert.True(t, until.IsZero(), "others are not")
	require.NoError(t, r.Succeed(ctx, a))

	clk.Advance(5*time.Minute + time.Second)
	a, until, err = r.Admit(ctx, "ada@example.com", "10.0.0.1")
	require.NoError(t, err)
	assert.True(t, until.IsZero(), "the ban ends")
	require.NoError(t, r.Succeed(ctx, a))

	// A success clears the count; old failures fall out of the window.
	attemptAndFail(t, r, "ada@example.com", "ip")
	attemptAndFail(t, r, "ada@example.com", "ip")
	clk.Advance(2*time.Minute + time.Second)
	_, started = attemptAndFail(t, r, "ada@example.com", "ip")
	assert.False(t, started, "the first two fell out of the window")
	a, _, err = r.Admit(ctx, "ada@example.com", "ip")
	require.NoError(t, err)
	require.NoError(t, r.Succeed(ctx, a))
	attemptAndFail(t, r, "ada@example.com", "ip")
	_, started = attemptAndFail(t, r, "ada@example.com", "ip")
	assert.False(t, started, "a success cleared the count")

	// Regulation off: nothing is counted, nothing banned.
	off := newRegulator(s, store.RegulationConfig{FindTime: time.Minute, BanTime: time.Minute}, clk.Now)
	for range 10 {
		refused, started := attemptAndFail(t, off, "carl@example.com", "ip2")
		assert.False(t, refused || started)
	}
}

func testRegulationPerIP(t *testing.T, s store.Store) {
	ctx := context.Background()
	clk := fakeclock.New(time.Time{})
	r := newRegulator(s, store.RegulationConfig{MaxRetries: 100, MaxRetriesPerIP: 5, FindTime: time.Minute, BanTime: time.Minute}, clk.Now)
	for i := range 4 {
		_, started := attemptAndFail(t, r, fmt.Sprintf("u%d@example.com", i), "198.51.100.7")
		assert.False(t, started)
	}
	_, started := attemptAndFail(t, r, "u4@example.com", "198.51.100.7")
	assert.True(t, started, "spraying many emails from one IP bans the IP")
	_, until, err := r.Admit(ctx, "new@example.com", "198.51.100.7")
	require.NoError(t, err)
	assert.False(t, until.IsZero())
	_, until, err = r.Admit(ctx, "new@example.com", "198.51.100.8")
	require.NoError(t, err)
	assert.True(t, until.IsZero(), "another IP is not")
}

// Fifty attempts at once for one email with a limit of five: five are
// admitted to have their password verified, the rest turned away (busy,
// not banned: nothing has failed yet); once the five fail, a ban holds.
func testRegulationParallel(t *testing.T, s store.Store) { regulationParallel(t, s) }

// regulationParallel sends 50 attempts at once, spread over the stores
// (instances sharing one database when more than one).
func regulationParallel(t *testing.T, stores ...store.Store) {
	ctx := context.Background()
	cfg := store.RegulationConfig{MaxRetries: 5, MaxRetriesPerIP: 1000, FindTime: time.Minute, BanTime: time.Minute}
	var regs []*regulator
	for _, s := range stores {
		regs = append(regs, newRegulator(s, cfg, nil))
	}
	r := regs[0]
	type result struct {
		a     attempt
		until time.Time
		err   error
	}
	results := make(chan result, 50)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, until, err := regs[i%len(regs)].Admit(ctx, "target@example.com", "203.0.113.1")
			results <- result{a, until, err}
		}()
	}
	wg.Wait()
	close(results)
	var admitted []attempt // attempts of regs[0]'s store are resolved on it; ids are the database's
	busy := 0
	for res := range results {
		switch {
		case errors.Is(res.err, store.ErrBusy):
			busy++
		case res.err != nil:
			require.NoError(t, res.err)
		case res.until.IsZero():
			admitted = append(admitted, res.a)
		default:
			t.Errorf("banned before any failure: %v", res.until)
		}
	}
	assert.Len(t, admitted, 5, "no more passwords verified than the limit")
	assert.Equal(t, 45, busy)
	for _, a := range admitted {
		_, err := r.Fail(ctx, a)
		require.NoError(t, err)
	}
	_, until, err := r.Admit(ctx, "target@example.com", "203.0.113.1")
	require.NoError(t, err)
	assert.False(t, until.IsZero(), "five failures: banned")
}

func testRegulationListLiftPrune(t *testing.T, s store.Store) {
	ctx := context.Background()
	clk := fakeclock.New(time.Time{})
	r := newRegulator(s, store.RegulationConfig{MaxRetries: 1, MaxRetriesPerIP: 2, FindTime: time.Minute, BanTime: 10 * time.Minute}, clk.Now)
	attemptAndFail(t, r, "Ada@example.com", "10.1.1.1")
	attemptAndFail(t, r, "bob@example.com", "10.1.1.1")
	bans, err := s.ListBans(ctx, clk.Now())
	require.NoError(t, err)
	until := clk.Now().Add(10 * time.Minute)
	assert.ElementsMatch(t, []store.Ban{{Kind: store.BanEmail, Value: "ada@example.com", Until: until},
		{Kind: store.BanEmail, Value: "bob@example.com", Until: until}, {Kind: store.BanIP, Value: "10.1.1.1", Until: until}}, bans)
	for _, tc := range []struct {
		email, ip string
		banned    bool
	}{
		{"BOB@example.com", "", true}, {"", "10.1.1.1", true}, {"carol@example.com", "10.1.1.1", true},
		{"carol@example.com", "10.9.9.9", false}, {"", "", false},
	} {
		got, err := r.BannedUntil(ctx, tc.email, tc.ip)
		require.NoError(t, err)
		if tc.banned {
			assert.Equal(t, until, got, "%s %s", tc.email, tc.ip)
		} else {
			assert.True(t, got.IsZero(), "%s %s", tc.email, tc.ip)
		}
	}

	n, err := s.LiftBans(ctx, "ADA@example.com", "")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	n, err = s.LiftBans(ctx, "", "10.1.1.1")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	n, err = s.LiftBans(ctx, "nobody@example.com", "")
	require.NoError(t, err)
	assert.Zero(t, n, "lifting what is not banned lifts nothing")
	a, until2, err := r.Admit(ctx, "ada@example.com", "10.1.1.1")
	require.NoError(t, err)
	assert.True(t, until2.IsZero(), "lifted, and the counted failures cleared with it")
	require.NoError(t, r.Succeed(ctx, a))
	bans, err = s.ListBans(ctx, clk.Now())
	require.NoError(t, err)
	assert.Len(t, bans, 1, "bob's ban stays")

	clk.Advance(11 * time.Minute)
	bans, err = s.ListBans(ctx, clk.Now())
	require.NoError(t, err)
	assert.Empty(t, bans, "ended bans are not listed")
	ended, err := r.BannedUntil(ctx, "bob@example.com", "")
	require.NoError(t, err)
	assert.True(t, ended.IsZero(), "an ended ban bans no more")
	pruned, err := s.PruneSignIns(ctx, clk.Now())
	require.NoError(t, err)
	assert.Positive(t, pruned)
}

// OpenPair returns two stores on one new, empty database (as two instances
// would open it), closed by the test's cleanup.
type OpenPair func(t *testing.T, now func() time.Time) (store.Store, store.Store)

// RunShared runs the sub-tests of what instances sharing a database must
// agree on: what one writes, the other reads at once; regulation and the
// provisioning lock hold across them.
func RunShared(t *testing.T, pair OpenPair) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, a, b store.Store)
	}{
		{"regulation admits no more than the limit across instances", func(t *testing.T, a, b store.Store) { regulationParallel(t, a, b) }},
		{"provisioning lock across instances", provisioningLock},
		{"a session made on one is valid on the other at once", testSessionAcross},
		{"a ban on one holds on the other", testBanAcross},
		{"a single-use id used on one is used on the other", func(t *testing.T, a, b store.Store) { singleUse(t, a, b, time.Now()) }},
		{"the platform budget is shared", platformBudget},
		{"a ticket made on one is answered on the other", tickets},
		{"one provisioning job across instances", provisionJob},
		{"the admin role followed on one is seen on the other", followAdminGroup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := pair(t, time.Now)
			tc.fn(t, a, b)
		})
	}
}

func newSession(t *testing.T, s store.Store, accountID int64, at time.Time, ua string) store.Session {
	t.Helper()
	id := sessionID()
	sess := store.Session{ID: id, AccountID: accountID, CreatedAt: at, LastSeenAt: at, UserAgent: ua}
	require.NoError(t, s.CreateSession(context.Background(), sess))
	return sess
}

func testSessions(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, newAccount("s@example.com", false))
	require.NoError(t, err)
	b, err := s.CreateAccount(ctx, newAccount("other@example.com", false))
	require.NoError(t, err)
	now := Now().Truncate(time.Millisecond)

	for _, bad := range []store.Session{
		{ID: "not-a-session-id", AccountID: a.ID},
		{ID: sessionID()}, // no account
	} {
		assert.ErrorIs(t, s.CreateSession(ctx, bad), store.ErrInvalid, "%+v", bad)
	}
	phone := newSession(t, s, a.ID, now, "Phone\xff"+strings.Repeat("x", 300))
	laptop := newSession(t, s, a.ID, now.Add(time.Minute), "Laptop")
	other := newSession(t, s, b.ID, now, "Other")

	got, err := s.SessionByID(ctx, phone.ID)
	require.NoError(t, err)
	assert.Equal(t, a.ID, got.AccountID)
	assert.Equal(t, now, got.CreatedAt)
	assert.LessOrEqual(t, len(got.UserAgent), store.MaxUserAgent, "user agent bounded")
	assert.True(t, utf8.ValidString(got.UserAgent))

	list, err := s.ListSessions(ctx, a.ID)
	require.NoError(t, err)
	require.Len(t, list, 2, "only the account's own")
	assert.Equal(t, []string{laptop.ID, phone.ID}, []string{list[0].ID, list[1].ID}, "most recently seen first")
	later := now.Add(2 * time.Minute)
	wrote, err := s.TouchSession(ctx, phone.ID, later, later.Add(-time.Minute))
	require.NoError(t, err)
	assert.True(t, wrote, "due: written")
	list, _ = s.ListSessions(ctx, a.ID)
	assert.Equal(t, phone.ID, list[0].ID, "touched: seen last")
	assert.Equal(t, later, list[0].LastSeenAt)
	// A second request that found it due with the first writes nothing,
	// nor does one for a session seen since the time it asks about.
	wrote, err = s.TouchSession(ctx, phone.ID, later.Add(time.Second), later.Add(-time.Minute))
	require.NoError(t, err)
	assert.False(t, wrote, "written once")
	wrote, err = s.TouchSession(ctx, laptop.ID, later, now.Add(-time.Second))
	require.NoError(t, err)
	assert.False(t, wrote, "seen since")
	list, _ = s.ListSessions(ctx, a.ID)
	assert.Equal(t, later, list[0].LastSeenAt)

	// Ending one device leaves the others.
	assert.ErrorIs(t, s.EndSession(ctx, b.ID, phone.ID), store.ErrNotFound, "not b's session: nothing ended")
	_, err = s.SessionByID(ctx, phone.ID)
	require.NoError(t, err)
	require.NoError(t, s.EndSession(ctx, a.ID, phone.ID))
	_, err = s.SessionByID(ctx, phone.ID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.SessionByID(ctx, laptop.ID)
	assert.NoError(t, err, "the other device stays signed in")
	assert.ErrorIs(t, s.EndSession(ctx, a.ID, phone.ID), store.ErrNotFound, "ended once")

	// Everywhere: sign-out everywhere, a new password and disabling end all.
	for name, end := range map[string]func() error{
		"end sessions": func() error { return s.EndSessions(ctx, a.ID) },
		"new password": func() error { return s.SetPasswordHash(ctx, a.ID, "h2") },
		"disable":      func() error { return s.SetDisabled(ctx, a.ID, true) },
	} {
		require.NoError(t, s.SetDisabled(ctx, a.ID, false))
		x, y := newSession(t, s, a.ID, now, "x"), newSession(t, s, a.ID, now, "y")
		for _, id := range []string{x.ID, y.ID} {
			_, err := s.SessionByID(ctx, id) // cached, where there is a cache
			require.NoError(t, err)
		}
		require.NoError(t, end(), name)
		for _, id := range []string{x.ID, y.ID} {
			_, err := s.SessionByID(ctx, id)
			assert.ErrorIs(t, err, store.ErrNotFound, name)
		}
	}
	_, err = s.SessionByID(ctx, other.ID)
	assert.NoError(t, err, "another account's session is untouched")

	assert.Equal(t, int64(1), pruneSessions(t, s, now.Add(time.Second)), "the other account's idle session")
	_, err = s.SessionByID(ctx, other.ID)
	assert.ErrorIs(t, err, store.ErrNotFound)
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

func testSessionAcross(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	acct, err := a.CreateAccount(ctx, newAccount("across@example.com", false))
	require.NoError(t, err)
	sess := newSession(t, a, acct.ID, time.Now(), "ua")
	got, err := b.SessionByID(ctx, sess.ID)
	require.NoError(t, err, "made on a, read on b at once")
	assert.Equal(t, acct.ID, got.AccountID)
	require.NoError(t, b.EndSession(ctx, acct.ID, sess.ID))
	_, err = a.SessionByID(ctx, sess.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "ended on b: gone on a (no cache here)")
}

func testBanAcross(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	cfg := store.RegulationConfig{MaxRetries: 2, MaxRetriesPerIP: 100, FindTime: time.Minute, BanTime: time.Minute}
	ra, rb := newRegulator(a, cfg, nil), newRegulator(b, cfg, nil)
	for range 2 {
		at, until, err := ra.Admit(ctx, "banned@example.com", "198.51.100.7")
		require.NoError(t, err)
		require.True(t, until.IsZero())
		_, err = ra.Fail(ctx, at)
		require.NoError(t, err)
	}
	_, until, err := rb.Admit(ctx, "BANNED@example.com", "198.51.100.8")
	require.NoError(t, err)
	assert.False(t, until.IsZero(), "banned on b after failing on a")
	n, err := b.LiftBans(ctx, "banned@example.com", "")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	_, until, err = ra.Admit(ctx, "banned@example.com", "198.51.100.7")
	require.NoError(t, err)
	assert.True(t, until.IsZero(), "lifted on b: admitted on a")
}

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

// testUnlinked: the accounts to provision are the enabled ones without a
// link, listed page by page by id.
func testUnlinked(t *testing.T, s store.Store) {
	ctx := context.Background()
	var ids []int64
	for i := range 5 {
		a, err := s.CreateAccount(ctx, newAccount(fmt.Sprintf("u%d@example.com", i), false))
		require.NoError(t, err)
		ids = append(ids, a.ID)
	}
	require.NoError(t, s.SaveLink(ctx, ids[1], "p1"))
	require.NoError(t, s.SetDisabled(ctx, ids[3], true))
	linked, unlinked, err := s.CountLinks(ctx)
	require.NoError(t, err)
	assert.Equal(t, [2]int{1, 3}, [2]int{linked, unlinked})

	first, err := s.UnlinkedAccounts(ctx, 0, 2)
	require.NoError(t, err)
	require.Len(t, first, 2)
	assert.Equal(t, []int64{ids[0], ids[2]}, []int64{first[0].ID, first[1].ID})
	rest, err := s.UnlinkedAccounts(ctx, first[1].ID, 2)
	require.NoError(t, err)
	require.Len(t, rest, 1)
	assert.Equal(t, ids[4], rest[0].ID)
	assert.Equal(t, "u4@example.com", rest[0].Email)
}

// provisionJob: one job runs at a time across instances; a job whose
// owner went quiet may be replaced; only its owner records progress.
func provisionJob(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	_, err := a.LatestProvisionJob(ctx)
	assert.ErrorIs(t, err, store.ErrNotFound, "no job yet")
	now := Now().Truncate(time.Millisecond)
	j := store.ProvisionJob{StartedBy: "admin@example.com", Owner: "instance-a", SeenAt: now, StartedAt: now, Total: 10}
	require.NoError(t, a.StartProvisionJob(ctx, j, now.Add(-time.Minute)))
	got, err := b.LatestProvisionJob(ctx)
	require.NoError(t, err)
	j.State = store.JobRunning
	assert.Equal(t, j, got)
	assert.ErrorIs(t, b.StartProvisionJob(ctx, store.ProvisionJob{Owner: "instance-b", SeenAt: now, StartedAt: now}, now.Add(-time.Minute)),
		store.ErrJobRunning, "one at a time")

	j.Done, j.Created, j.Existed, j.Failed, j.RateLimited, j.SeenAt = 4, 2, 1, 1, 3, now.Add(time.Second)
	require.NoError(t, a.UpdateProvisionJob(ctx, j))
	wrong := j
	wrong.Owner = "instance-b"
	assert.ErrorIs(t, b.UpdateProvisionJob(ctx, wrong), store.ErrNotFound, "not b's job")
	got, err = b.LatestProvisionJob(ctx)
	require.NoError(t, err)
	assert.Equal(t, j, got)

	// a went quiet: b may start anew, and a's late progress is refused.
	k := store.ProvisionJob{StartedBy: "other@example.com", Owner: "instance-b", SeenAt: now.Add(time.Minute), StartedAt: now.Add(time.Minute), Total: 6}
	require.NoError(t, b.StartProvisionJob(ctx, k, now.Add(30*time.Second)))
	assert.ErrorIs(t, a.UpdateProvisionJob(ctx, j), store.ErrNotFound)
	k.State, k.Done, k.Created, k.FinishedAt, k.SeenAt = store.JobDone, 6, 6, now.Add(2*time.Minute), now.Add(2*time.Minute)
	require.NoError(t, b.UpdateProvisionJob(ctx, k))
	got, err = a.LatestProvisionJob(ctx)
	require.NoError(t, err)
	assert.Equal(t, k, got)
	assert.ErrorIs(t, b.UpdateProvisionJob(ctx, k), store.ErrNotFound, "a finished job takes no more progress")
	require.NoError(t, a.StartProvisionJob(ctx, j, now.Add(-time.Hour)), "after a finished job, a new one starts")
}
