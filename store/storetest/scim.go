package storetest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/store"
)

// The records SCIM keeps: an account's details changed in one write, the
// exact filters, and the groups with their members.

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

func testKeptValues(t *testing.T, s store.Store) {
	ctx := context.Background()
	_, err := s.KeptValue(ctx, "lti-tool-key")
	require.ErrorIs(t, err, store.ErrNotFound)
	v, err := s.KeepValue(ctx, "lti-tool-key", "first")
	require.NoError(t, err)
	assert.Equal(t, "first", v)
	v, err = s.KeepValue(ctx, "lti-tool-key", "second")
	require.NoError(t, err)
	assert.Equal(t, "first", v, "the first value kept stays")
	v, err = s.KeptValue(ctx, "lti-tool-key")
	require.NoError(t, err)
	assert.Equal(t, "first", v)
	v, err = s.KeepValue(ctx, "another", "x")
	require.NoError(t, err)
	assert.Equal(t, "x", v)
}

func testLTIPlatforms(t *testing.T, s store.Store) {
	ctx := context.Background()
	list, err := s.LTIPlatforms(ctx)
	require.NoError(t, err)
	assert.Empty(t, list)
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	moodle := store.LTIPlatform{Name: "Springfield Moodle", Issuer: "https://moodle.example", ClientID: "c1", DeploymentID: "1",
		AuthURL: "https://moodle.example/auth", JWKSURL: "https://moodle.example/jwks", TokenURL: "https://moodle.example/token",
		EmailDomains: "school.example", CreateAccounts: true, RegisteredAt: at, RegisteredBy: "admin@partner.example"}
	require.NoError(t, s.AddLTIPlatform(ctx, moodle))
	assert.ErrorIs(t, s.AddLTIPlatform(ctx, moodle), store.ErrLTIPlatformTaken, "the same issuer and client id twice")
	second := moodle
	second.ClientID, second.RegisteredAt, second.CreateAccounts = "c2", at.Add(time.Minute), false
	require.NoError(t, s.AddLTIPlatform(ctx, second), "another client id of the same issuer")
	list, err = s.LTIPlatforms(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, moodle, list[0])
	assert.False(t, list[1].CreateAccounts)

	require.NoError(t, s.SetLTIPlatformDisabled(ctx, moodle.Issuer, "c1", true))
	list, err = s.LTIPlatforms(ctx)
	require.NoError(t, err)
	assert.True(t, list[0].Disabled)
	assert.False(t, list[1].Disabled)
	assert.ErrorIs(t, s.SetLTIPlatformDisabled(ctx, moodle.Issuer, "nobody", true), store.ErrNotFound)

	require.NoError(t, s.DeleteLTIPlatform(ctx, moodle.Issuer, "c1"))
	assert.ErrorIs(t, s.DeleteLTIPlatform(ctx, moodle.Issuer, "c1"), store.ErrNotFound)
	list, err = s.LTIPlatforms(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "c2", list[0].ClientID)
}

func testLTICourses(t *testing.T, s store.Store) {
	ctx := context.Background()
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	c := store.LTICourse{Issuer: "https://lms.example", ClientID: "c1", ContextID: "course-7", Title: "Media studies",
		MembershipsURL: "https://lms.example/nrps/7", LaunchedBy: "teacher@school.example", LastLaunchAt: at}
	require.NoError(t, s.SeeLTICourse(ctx, c))
	other := c
	other.ContextID, other.Title, other.LastLaunchAt = "course-8", "Art", at.Add(time.Hour)
	require.NoError(t, s.SeeLTICourse(ctx, other))
	c.Title, c.LastLaunchAt = "Media studies 2", at.Add(2*time.Hour)
	require.NoError(t, s.SeeLTICourse(ctx, c), "seen again: updated")
	list, err := s.LTICourses(ctx, 10)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, "Media studies 2", list[0].Title, "the latest launched first")
	assert.Equal(t, "Art", list[1].Title)
	assert.True(t, list[0].LastRosterAt.IsZero())
	require.NoError(t, s.RecordLTIRoster(ctx, c.Issuer, c.ClientID, c.ContextID, store.RosterRead{Result: "30 members", Waiting: 1240, At: at.Add(3 * time.Hour)}))
	assert.ErrorIs(t, s.RecordLTIRoster(ctx, c.Issuer, c.ClientID, "nope", store.RosterRead{Result: "x", At: at}), store.ErrNotFound)
	list, err = s.LTICourses(ctx, 1)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "30 members", list[0].LastRoster)
	assert.Equal(t, at.Add(3*time.Hour), list[0].LastRosterAt)
	assert.Equal(t, 1240, list[0].RosterWaiting, "the people waiting for a confirmation")
}

// testOutsideTextBounded: what an LMS, a roster or a refused request sent
// is kept bounded, on every store path that keeps it: a name or title is
// cut to store.MaxName, an outcome or audit detail to store.MaxDetail, and
// a key too long to keep whole is refused, changing nothing.
func testOutsideTextBounded(t *testing.T, s store.Store) {
	ctx := context.Background()
	huge := strings.Repeat("é", 300_000) // 600,000 bytes
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	p := store.LTIPlatform{Name: huge, Issuer: "https://lms.example", ClientID: "c1", AuthURL: "https://lms.example/auth",
		JWKSURL: "https://lms.example/jwks", RegisteredAt: at}
	require.NoError(t, s.AddLTIPlatform(ctx, p))
	list, err := s.LTIPlatforms(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.LessOrEqual(t, len(list[0].Name), store.MaxName)
	assert.True(t, strings.HasSuffix(list[0].Name, "…") && utf8.ValidString(list[0].Name), "cut at a character, marked")

	long := p
	long.ClientID = strings.Repeat("c", store.MaxKey+1)
	assert.ErrorIs(t, s.AddLTIPlatform(ctx, long), store.ErrInvalid)
	list, err = s.LTIPlatforms(ctx)
	require.NoError(t, err)
	assert.Len(t, list, 1, "nothing kept")

	c := store.LTICourse{Issuer: p.Issuer, ClientID: "c1", ContextID: "k", Title: huge, MembershipsURL: "https://lms.example/nrps",
		LaunchedBy: "t@school.example", LastLaunchAt: at}
	require.NoError(t, s.SeeLTICourse(ctx, c))
	require.NoError(t, s.RecordLTIRoster(ctx, c.Issuer, c.ClientID, c.ContextID, store.RosterRead{Result: huge, At: at}))
	bad := c
	bad.ContextID = strings.Repeat("x", store.MaxKey+1)
	assert.ErrorIs(t, s.SeeLTICourse(ctx, bad), store.ErrInvalid)
	courses, err := s.LTICourses(ctx, 10)
	require.NoError(t, err)
	require.Len(t, courses, 1)
	assert.LessOrEqual(t, len(courses[0].Title), store.MaxName)
	assert.LessOrEqual(t, len(courses[0].LastRoster), store.MaxDetail)

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

// testKeysOfAnyText: every key the store takes from outside (an identity's
// source and subject, a single-use id, an LMS's issuer, client id and
// deployment, a course's ids, a kept value's name) is kept and found
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

		p := store.LTIPlatform{Name: "LMS " + k, Issuer: "https://lms.example/" + k, ClientID: k, DeploymentID: k, AuthURL: "https://lms.example/a",
			JWKSURL: "https://lms.example/j", RegisteredAt: at.Add(time.Duration(i) * time.Minute)}
		require.NoError(t, s.AddLTIPlatform(ctx, p), "LMS %d", i)
		require.NoError(t, s.SeeLTICourse(ctx, store.LTICourse{Issuer: p.Issuer, ClientID: k, ContextID: k, Title: "Course " + k,
			MembershipsURL: "https://lms.example/m", LaunchedBy: "t@school.example", LastLaunchAt: at.Add(time.Duration(i) * time.Minute)}), "course %d", i)
		require.NoError(t, s.RecordLTIRoster(ctx, p.Issuer, k, k, store.RosterRead{Result: "read " + k, At: at}), "roster %d", i)
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
	platforms, err := s.LTIPlatforms(ctx)
	require.NoError(t, err)
	require.Len(t, platforms, len(keys))
	var clients []string
	for _, p := range platforms {
		clients = append(clients, p.ClientID)
		assert.Equal(t, p.ClientID, p.DeploymentID)
	}
	assert.ElementsMatch(t, keys, clients)
	courses, err := s.LTICourses(ctx, 100)
	require.NoError(t, err)
	require.Len(t, courses, len(keys))
	for _, c := range courses {
		assert.Equal(t, c.ClientID, c.ContextID)
		assert.True(t, strings.HasPrefix(c.LastRoster, "read "))
	}
	require.NoError(t, s.SetLTIPlatformDisabled(ctx, "https://lms.example/"+keys[0], keys[0], true))
	require.NoError(t, s.DeleteLTIPlatform(ctx, "https://lms.example/"+keys[1], keys[1]))
	n, err := s.MoveIdentities(ctx, "lti:"+keys[0], "lti:"+keys[0]+"|c")
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
}
