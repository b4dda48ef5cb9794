package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
