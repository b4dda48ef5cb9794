package storetest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
