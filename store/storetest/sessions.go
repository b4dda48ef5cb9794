package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

// sessionID is a new id of the form the bridge stores for a session or a
// password link: the SHA-256 of a random token, in hex.
func sessionID() string {
	sum := sha256.Sum256([]byte(randid.Token(32)))
	return hex.EncodeToString(sum[:])
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
