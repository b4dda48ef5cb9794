package storetest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testOutsideTextBounded: what a refused request, a roster or an IdP
// sent is kept bounded: an audit detail is cut to store.MaxDetail, an
// address to store.MaxKey, and a name past its bound is refused, changing
// nothing. (A module's records are bounded by testModuleRecordsBounded.)
func testOutsideTextBounded(t *testing.T, s store.Store) {
	ctx := context.Background()
	huge := strings.Repeat("é", 300_000) // 600,000 bytes
	require.NoError(t, s.Record(ctx, store.Event{Kind: store.KindLogin, Email: huge, Outcome: "refused", Detail: huge}))
	events, _, err := s.ListEvents(ctx, store.AuditFilter{Limit: 1})
	require.NoError(t, err)
	require.Len(t, events, 1)
	assert.LessOrEqual(t, len(events[0].Detail), store.MaxDetail)
	assert.LessOrEqual(t, len(events[0].Email), store.MaxKey)

	_, err = s.CreateAccount(ctx, store.NewAccount{Email: "kim@school.example", FirstName: huge, LastName: "K", PasswordHash: "h"})
	assert.ErrorIs(t, err, store.ErrInvalid, "an account's names are refused past their bound (SCIM, a roster, an IdP alike)")
	_, err = s.CreateGroup(ctx, store.Group{ID: "g1", DisplayName: huge})
	assert.Error(t, err, "a group's name past its bound is refused")
}

// testKeysOfAnyText: every key the store takes from outside (an identity's
// source and subject, a single-use id, a module record's key and value,
// a kept value's name) is kept and found
// again whatever it holds, on every database: NUL (JSON's \u0000), bytes
// that are no UTF-8, characters of four bytes, a kilobyte; and two keys
// never collide.
func testKeysOfAnyText(t *testing.T, s store.Store) {
	ctx := context.Background()
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	keys := []string{"a\x00b", "\xff\xfe\x00", "🎬𝄞 Ünïcödé", strings.Repeat("k", 1000), "\x01b64:YQ", "a"}
	acct, err := s.CreateAccount(ctx, store.NewAccount{Email: "keys@school.example", FirstName: "K", LastName: "Y", PasswordHash: "h"})
	require.NoError(t, err)
	for i, k := range keys {
		src := "lti:" + k
		require.NoError(t, s.LinkIdentity(ctx, src, k, acct.ID), "identity %d", i)
		got, err := s.AccountOfIdentity(ctx, src, k)
		require.NoError(t, err, "identity %d", i)
		assert.Equal(t, acct.ID, got)

		require.NoError(t, s.UseOnce(ctx, "kind", k, at.Add(time.Hour)), "single-use id %d", i)
		assert.ErrorIs(t, s.UseOnce(ctx, "kind", k, at.Add(time.Hour)), store.ErrUsed, "single-use id %d, again", i)

		require.NoError(t, s.PutRecord(ctx, store.Record{Module: "lms", Kind: "course", Key: k, Value: []byte(k), At: at.Add(time.Duration(i) * time.Minute)},
			store.Create), "record %d", i)
		kept, err := s.KeepValue(ctx, "value "+k, "v"+strconv.Itoa(i))
		require.NoError(t, err, "kept value %d", i)
		assert.Equal(t, "v"+strconv.Itoa(i), kept, "kept value %d: its own, no other key's", i)
	}
	ids, err := s.IdentitiesOf(ctx, acct.ID)
	require.NoError(t, err)
	var subjects []string
	for _, id := range ids {
		subjects = append(subjects, id.Subject)
	}
	assert.ElementsMatch(t, keys, subjects, "every subject read back as written")
	list, err := s.Records(ctx, store.RecordQuery{Module: "lms", Kind: "course"})
	require.NoError(t, err)
	require.Len(t, list, len(keys))
	for i, r := range list {
		assert.Equal(t, keys[i], r.Key, "record %d: its key read back as written, in order of time", i)
		assert.Equal(t, []byte(keys[i]), r.Value, "record %d: its value byte for byte", i)
	}
	list, err = s.Records(ctx, store.RecordQuery{Module: "lms", Kind: "course", Keys: keys[:2]})
	require.NoError(t, err)
	assert.Len(t, list, 2, "found by such keys")
	require.NoError(t, s.DeleteRecord(ctx, "lms", "course", keys[0]))
	assert.ErrorIs(t, s.DeleteRecord(ctx, "lms", "course", keys[0]), store.ErrNotFound)
	n, err := s.MoveIdentities(ctx, "lti:"+keys[0], "lti:"+keys[0]+"|c")
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
}
