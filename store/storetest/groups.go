package storetest

import (
	"context"
	"testing"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testGroups(t *testing.T, s store.Store) {
	ctx := context.Background()
	var ids []int64
	for _, e := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		a, err := s.CreateAccount(ctx, newAccount(e, false))
		require.NoError(t, err)
		ids = append(ids, a.ID)
	}
	g, err := s.CreateGroup(ctx, store.Group{ID: "g1", DisplayName: "Partner Admins", ExternalID: "x1", Members: []int64{ids[1], ids[0]}})
	require.NoError(t, err)
	assert.Equal(t, []int64{ids[0], ids[1]}, g.Members)
	_, err = s.CreateGroup(ctx, store.Group{ID: "g2", DisplayName: "partner admins"})
	assert.ErrorIs(t, err, store.ErrGroupNameTaken, "names are unique case-insensitively")
	_, err = s.CreateGroup(ctx, store.Group{ID: "g3", DisplayName: "Teachers", Members: []int64{999999}})
	assert.ErrorIs(t, err, store.ErrNotFound, "a member must be an account")
	_, err = s.GroupByID(ctx, "g3")
	assert.ErrorIs(t, err, store.ErrNotFound, "a refused group is not kept")
	_, err = s.CreateGroup(ctx, store.Group{ID: "g4", DisplayName: "  "})
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = s.CreateGroup(ctx, store.Group{ID: "g5", DisplayName: "Teachers"})
	require.NoError(t, err)

	got, total, err := s.ListGroups(ctx, store.GroupFilter{DisplayName: "PARTNER admins"})
	require.NoError(t, err)
	require.Equal(t, 1, total)
	assert.Equal(t, "g1", got[0].ID)
	got, total, err = s.ListGroups(ctx, store.GroupFilter{Limit: 1, Offset: 1})
	require.NoError(t, err)
	assert.Equal(t, 2, total)
	require.Len(t, got, 1)
	assert.Equal(t, "Teachers", got[0].DisplayName, "by name")

	ch, err := s.UpdateGroup(ctx, "g1", store.GroupUpdate{Add: []int64{ids[2]}, Remove: []int64{ids[0], ids[0]}})
	require.NoError(t, err)
	assert.Equal(t, []int64{ids[0], ids[1]}, ch.Before.Members, "as it was")
	assert.Equal(t, []int64{ids[1], ids[2]}, ch.After.Members)
	ch, err = s.UpdateGroup(ctx, "g1", store.GroupUpdate{DisplayName: new("Admins"), Members: &[]int64{ids[0]}})
	require.NoError(t, err)
	assert.Equal(t, "Partner Admins", ch.Before.DisplayName)
	assert.Equal(t, []int64{ids[1], ids[2]}, ch.Before.Members)
	assert.Equal(t, "Admins", ch.After.DisplayName)
	assert.Equal(t, []int64{ids[0]}, ch.After.Members, "Members replaces them")
	_, err = s.UpdateGroup(ctx, "nope", store.GroupUpdate{DisplayName: new("Other")})
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.UpdateGroup(ctx, "g1", store.GroupUpdate{DisplayName: new("teachers")})
	assert.ErrorIs(t, err, store.ErrGroupNameTaken)
	_, err = s.UpdateGroup(ctx, "g1", store.GroupUpdate{Add: []int64{999999}})
	assert.ErrorIs(t, err, store.ErrNotFound)
	g, err = s.GroupByID(ctx, "g1")
	require.NoError(t, err)
	assert.Equal(t, []int64{ids[0]}, g.Members, "a refused change changes nothing")

	require.NoError(t, s.DeleteAccount(ctx, ids[0]))
	g, err = s.GroupByID(ctx, "g1")
	require.NoError(t, err)
	assert.Empty(t, g.Members, "a removed account leaves its groups")
	_, err = s.UpdateGroup(ctx, "g1", store.GroupUpdate{Add: []int64{ids[1]}})
	require.NoError(t, err)
	gone, err := s.DeleteGroup(ctx, "g1")
	require.NoError(t, err)
	assert.Equal(t, "Admins", gone.DisplayName, "the group as it was")
	assert.Equal(t, []int64{ids[1]}, gone.Members)
	_, err = s.DeleteGroup(ctx, "g1")
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.AccountByID(ctx, ids[1])
	require.NoError(t, err, "a group's accounts stay")
}

// testFollowAdminGroup: the admin role follows the membership of the
// group by that name as it stands when followed, the last admin keeps it.
func testFollowAdminGroup(t *testing.T, s store.Store) {
	followAdminGroup(t, s, s)
}

// followAdminGroup changes the group on a and follows on b (the same
// store, or two instances of one database: b's cached account must not
// hide the role a's follow changed).
func followAdminGroup(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	boss, err := a.CreateAccount(ctx, newAccount("boss@example.com", true))
	require.NoError(t, err)
	ada, err := a.CreateAccount(ctx, newAccount("ada@example.com", false))
	require.NoError(t, err)
	isAdmin := func(s store.Store, id int64) bool {
		t.Helper()
		acct, err := s.AccountByID(ctx, id)
		require.NoError(t, err)
		return acct.Admin
	}
	assert.False(t, isAdmin(b, ada.ID)) // cached on b, if b caches

	changed, err := b.FollowAdminGroup(ctx, ada.ID, "Bridge Admins")
	require.NoError(t, err)
	assert.False(t, changed, "no such group: nobody is a member, and she was no admin")

	_, err = a.CreateGroup(ctx, store.Group{ID: "ga", DisplayName: "Bridge Admins", Members: []int64{ada.ID}})
	require.NoError(t, err)
	changed, err = b.FollowAdminGroup(ctx, ada.ID, "  bridge ADMINS ")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.True(t, isAdmin(a, ada.ID), "a member is admin")
	assert.True(t, isAdmin(b, ada.ID), "on the instance that followed too")
	changed, err = b.FollowAdminGroup(ctx, ada.ID, "Bridge Admins")
	require.NoError(t, err)
	assert.False(t, changed, "followed again: nothing to change")

	// Two changes, the follows in the wrong order: the group as it stands decides.
	_, err = a.UpdateGroup(ctx, "ga", store.GroupUpdate{Remove: []int64{ada.ID}})
	require.NoError(t, err)
	for range 2 {
		_, err = b.FollowAdminGroup(ctx, ada.ID, "Bridge Admins")
		require.NoError(t, err)
		assert.False(t, isAdmin(b, ada.ID), "no longer a member: no admin, however often followed")
	}

	_, err = a.UpdateGroup(ctx, "ga", store.GroupUpdate{Add: []int64{boss.ID}, DisplayName: new("Former Admins")})
	require.NoError(t, err)
	changed, err = b.FollowAdminGroup(ctx, boss.ID, "Bridge Admins")
	assert.ErrorIs(t, err, store.ErrLastAdmin, "renamed away: no member, but the last admin stays admin")
	assert.False(t, changed)
	assert.True(t, isAdmin(a, boss.ID))

	_, err = b.FollowAdminGroup(ctx, 999999, "Bridge Admins")
	assert.ErrorIs(t, err, store.ErrNotFound)
}
