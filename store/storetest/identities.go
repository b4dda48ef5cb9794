package storetest

import (
	"context"
	"testing"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testIdentities(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, newAccount("pupil@school.example", false))
	require.NoError(t, err)
	b, err := s.CreateAccount(ctx, newAccount("teacher@school.example", false))
	require.NoError(t, err)
	const lms = "https://lms.school.example"

	_, err = s.AccountOfIdentity(ctx, lms, "sub-1")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, s.LinkIdentity(ctx, lms, "sub-1", a.ID))
	require.NoError(t, s.LinkIdentity(ctx, lms, "sub-1", a.ID), "linking again changes nothing")
	id, err := s.AccountOfIdentity(ctx, lms, "sub-1")
	require.NoError(t, err)
	assert.Equal(t, a.ID, id)
	_, err = s.AccountOfIdentity(ctx, "https://lms.other.example", "sub-1")
	assert.ErrorIs(t, err, store.ErrNotFound, "a sub is the issuer's own")
	_, err = s.AccountOfIdentity(ctx, lms, "SUB-1")
	assert.ErrorIs(t, err, store.ErrNotFound, "a sub is compared exactly")

	require.NoError(t, s.LinkIdentity(ctx, lms, "sub-1", b.ID), "the identity moves")
	id, err = s.AccountOfIdentity(ctx, lms, "sub-1")
	require.NoError(t, err)
	assert.Equal(t, b.ID, id)

	none, err := s.IdentitiesOf(ctx, a.ID)
	require.NoError(t, err)
	assert.Empty(t, none, "the identity moved away from a")
	require.NoError(t, s.LinkIdentity(ctx, "oidc:https://idp.example", "x-9", b.ID))
	ids, err := s.IdentitiesOf(ctx, b.ID)
	require.NoError(t, err)
	require.Len(t, ids, 2)
	assert.Equal(t, []string{lms, "oidc:https://idp.example"}, []string{ids[0].Source, ids[1].Source}, "by source")
	assert.Equal(t, "sub-1", ids[0].Subject)
	assert.False(t, ids[0].LinkedAt.IsZero())

	require.NoError(t, s.DeleteAccount(ctx, b.ID))
	ids, err = s.IdentitiesOf(ctx, b.ID)
	require.NoError(t, err)
	assert.Empty(t, ids)
	_, err = s.AccountOfIdentity(ctx, lms, "sub-1")
	assert.ErrorIs(t, err, store.ErrNotFound, "deleting the account deletes its identities")
}

// testMoveIdentities: a source renamed takes its links along in one
// step; a subject linked under both names keeps the new name's link; a
// second move finds nothing.
func testMoveIdentities(t *testing.T, s store.Store) {
	ctx := context.Background()
	var ids []int64
	for _, e := range []string{"a@school.example", "b@school.example", "c@school.example"} {
		a, err := s.CreateAccount(ctx, store.NewAccount{Email: e, FirstName: "A", LastName: "B", PasswordHash: "h"})
		require.NoError(t, err)
		ids = append(ids, a.ID)
	}
	const from, to, other = "lti:https://lms.example", "lti:https://lms.example|c1", "lti:https://other.example"
	require.NoError(t, s.LinkIdentity(ctx, from, "s1", ids[0]))
	require.NoError(t, s.LinkIdentity(ctx, from, "s2", ids[1]))
	require.NoError(t, s.LinkIdentity(ctx, to, "s2", ids[2]))
	require.NoError(t, s.LinkIdentity(ctx, other, "s1", ids[2]))
	n, err := s.MoveIdentities(ctx, from, to)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	got, err := s.AccountOfIdentity(ctx, to, "s1")
	require.NoError(t, err)
	assert.Equal(t, ids[0], got)
	got, err = s.AccountOfIdentity(ctx, to, "s2")
	require.NoError(t, err)
	assert.Equal(t, ids[2], got, "the new name's link wins")
	for _, sub := range []string{"s1", "s2"} {
		_, err = s.AccountOfIdentity(ctx, from, sub)
		assert.ErrorIs(t, err, store.ErrNotFound)
	}
	got, err = s.AccountOfIdentity(ctx, other, "s1")
	require.NoError(t, err)
	assert.Equal(t, ids[2], got, "another source is untouched")
	n, err = s.MoveIdentities(ctx, from, to)
	require.NoError(t, err)
	assert.Zero(t, n)
}
