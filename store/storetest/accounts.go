package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

func testUpdateAccount(t *testing.T, s store.Store) {
	ctx := context.Background()
	n := newAccount("ada@example.com", false)
	n.ExternalID, n.ManagedBy = "ext-1", store.ManagedBySCIM
	a, err := s.CreateAccount(ctx, n)
	require.NoError(t, err)
	assert.Equal(t, "ext-1", a.ExternalID)
	assert.Equal(t, store.ManagedBySCIM, a.ManagedBy)
	_, err = s.CreateAccount(ctx, newAccount("grace@example.com", true))
	require.NoError(t, err)
	sess := newSession(t, s, a.ID, Now(), "ua")

	got, err := s.UpdateAccount(ctx, a.ID, store.AccountUpdate{Email: new(" Ada.L@Example.com "), FirstName: new("Augusta"), ExternalID: new("ext-2")})
	require.NoError(t, err)
	assert.Equal(t, "Ada.L@Example.com", got.Email)
	assert.Equal(t, "Augusta", got.FirstName)
	assert.Equal(t, "Last", got.LastName, "a field not named stays")
	assert.Equal(t, "ext-2", got.ExternalID)
	assert.Equal(t, store.ManagedBySCIM, got.ManagedBy)
	byMail, err := s.AccountByEmail(ctx, "ada.l@example.com")
	require.NoError(t, err)
	assert.Equal(t, a.ID, byMail.ID, "the new address finds it, case-insensitively")
	_, err = s.SessionByID(ctx, sess.ID)
	require.NoError(t, err, "a change of details keeps the sessions")

	_, err = s.UpdateAccount(ctx, a.ID, store.AccountUpdate{Email: new("GRACE@example.com")})
	assert.ErrorIs(t, err, store.ErrEmailTaken, "one address, one account")
	_, err = s.UpdateAccount(ctx, a.ID, store.AccountUpdate{Email: new("not an address")})
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = s.UpdateAccount(ctx, a.ID, store.AccountUpdate{LastName: new("  ")})
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = s.UpdateAccount(ctx, a.ID, store.AccountUpdate{ExternalID: new(strings.Repeat("x", 257))})
	assert.ErrorIs(t, err, store.ErrInvalid)
	same, err := s.AccountByID(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, "Ada.L@Example.com", same.Email, "a refused change changes nothing")

	got, err = s.UpdateAccount(ctx, a.ID, store.AccountUpdate{Disabled: new(true)})
	require.NoError(t, err)
	assert.True(t, got.Disabled)
	assert.Greater(t, got.SessionEpoch, a.SessionEpoch, "disabling voids the sessions issued so far")
	_, err = s.SessionByID(ctx, sess.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "disabling ends the sessions")
	got, err = s.UpdateAccount(ctx, a.ID, store.AccountUpdate{Disabled: new(false)})
	require.NoError(t, err)
	assert.False(t, got.Disabled)

	_, err = s.UpdateAccount(ctx, 999999, store.AccountUpdate{FirstName: new("X")})
	assert.ErrorIs(t, err, store.ErrNotFound)

	off := newAccount("off@example.com", false)
	off.Disabled = true
	made, err := s.CreateAccount(ctx, off)
	require.NoError(t, err)
	assert.True(t, made.Disabled, "an account may be made disabled, in its one write")

	admins, _, err := s.ListAccounts(ctx, store.AccountFilter{Email: "grace@example.com"})
	require.NoError(t, err)
	require.Len(t, admins, 1)
	_, err = s.UpdateAccount(ctx, admins[0].ID, store.AccountUpdate{Disabled: new(true)})
	assert.ErrorIs(t, err, store.ErrLastAdmin, "the last admin stays")
}

func testAccountFilters(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i, e := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		n := newAccount(e, false)
		if i < 2 {
			n.ManagedBy = store.ManagedBySCIM
			n.ExternalID = "ext-" + e[:1]
		}
		_, err := s.CreateAccount(ctx, n)
		require.NoError(t, err)
	}
	for _, tc := range []struct {
		name string
		f    store.AccountFilter
		want []string
	}{
		{"address, any case", store.AccountFilter{Email: "B@EXAMPLE.COM"}, []string{"b@example.com"}},
		{"external id", store.AccountFilter{ExternalID: "ext-a"}, []string{"a@example.com"}},
		{"external id is exact", store.AccountFilter{ExternalID: "EXT-A"}, nil},
		{"managed", store.AccountFilter{ManagedBy: store.ManagedBySCIM}, []string{"a@example.com", "b@example.com"}},
		{"managed, second page", store.AccountFilter{ManagedBy: store.ManagedBySCIM, Offset: 1, Limit: 1}, []string{"b@example.com"}},
		{"both", store.AccountFilter{ManagedBy: store.ManagedBySCIM, Email: "c@example.com"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, total, err := s.ListAccounts(ctx, tc.f)
			require.NoError(t, err)
			var emails []string
			for _, a := range got {
				emails = append(emails, a.Email)
			}
			assert.Equal(t, tc.want, emails)
			if tc.f.Offset == 0 {
				assert.Equal(t, len(tc.want), total)
			} else {
				assert.Equal(t, 2, total, "the total counts every page")
			}
		})
	}
}
