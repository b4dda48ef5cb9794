package lti_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/pgtest"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

// newRecords is lti's records in a SQLite store of the test's own.
func newRecords(t *testing.T) *lti.Records {
	t.Helper()
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "lti.db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return &lti.Records{Store: st}
}

// lti's records on both databases: an LMS registered once per issuer and
// client id, listed oldest first, turned off and on, removed; a course
// seen again updated and listed by its last launch with its roster's last
// read, which a later launch keeps; what an LMS sent kept bounded.
func TestRecords(t *testing.T) {
	for _, db := range []struct {
		name string
		open func(t *testing.T) *lti.Records
	}{
		{"SQLite", newRecords},
		{"PostgreSQL", func(t *testing.T) *lti.Records {
			st, err := sqlstore.OpenPostgres(context.Background(), pgtest.DSN(t), nil)
			require.NoError(t, err)
			t.Cleanup(func() { st.Close() })
			return &lti.Records{Store: st}
		}},
	} {
		t.Run(db.name, func(t *testing.T) {
			t.Run("platforms", func(t *testing.T) { testPlatformRecords(t, db.open(t)) })
			t.Run("courses", func(t *testing.T) { testCourseRecords(t, db.open(t)) })
			t.Run("bounds", func(t *testing.T) { testRecordBounds(t, db.open(t)) })
		})
	}
}

func testPlatformRecords(t *testing.T, r *lti.Records) {
	ctx := context.Background()
	list, err := r.Platforms(ctx)
	require.NoError(t, err)
	assert.Empty(t, list)
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	moodle := lti.Registered{Name: "Springfield Moodle", Issuer: "https://moodle.example", ClientID: "c1", DeploymentID: "1",
		AuthURL: "https://moodle.example/auth", JWKSURL: "https://moodle.example/jwks", TokenURL: "https://moodle.example/token",
		EmailDomains: "school.example", CreateAccounts: true, RegisteredAt: at, RegisteredBy: "admin@partner.example"}
	second := moodle
	second.ClientID, second.RegisteredAt, second.CreateAccounts, second.EmailDomains = "c2", at.Add(-time.Minute), false, ""
	require.NoError(t, r.AddPlatform(ctx, moodle))
	assert.ErrorIs(t, r.AddPlatform(ctx, moodle), lti.ErrPlatformTaken, "the same issuer and client id twice")
	require.NoError(t, r.AddPlatform(ctx, second), "another client id of the same issuer")
	list, err = r.Platforms(ctx)
	require.NoError(t, err)
	assert.Equal(t, []lti.Registered{second, moodle}, list, "every field kept, the oldest first")

	require.NoError(t, r.SetPlatformDisabled(ctx, moodle.Issuer, "c1", true))
	assert.ErrorIs(t, r.SetPlatformDisabled(ctx, moodle.Issuer, "nobody", true), store.ErrNotFound)
	list, err = r.Platforms(ctx)
	require.NoError(t, err)
	assert.False(t, list[0].Disabled)
	assert.True(t, list[1].Disabled)
	assert.Equal(t, at, list[1].RegisteredAt, "turning it off keeps its time")
	launchable, err := r.Launchable(ctx)
	require.NoError(t, err)
	require.Len(t, launchable, 1, "a disabled LMS takes no launch")
	assert.Equal(t, lti.Platform{Name: "Springfield Moodle", Issuer: moodle.Issuer, ClientID: "c2", DeploymentIDs: []string{"1"}, AuthURL: moodle.AuthURL,
		JWKSURL: moodle.JWKSURL, TokenURL: moodle.TokenURL, Registered: true, EmailDomains: []string{}, Key: "the registered LMS Springfield Moodle (console, LTI page)"}, launchable[0])
	require.NoError(t, r.SetPlatformDisabled(ctx, moodle.Issuer, "c1", false))
	launchable, err = r.Launchable(ctx)
	require.NoError(t, err)
	assert.Len(t, launchable, 2, "on again")

	require.NoError(t, r.DeletePlatform(ctx, moodle.Issuer, "c1"))
	assert.ErrorIs(t, r.DeletePlatform(ctx, moodle.Issuer, "c1"), store.ErrNotFound)
	list, err = r.Platforms(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "c2", list[0].ClientID)
}

func testCourseRecords(t *testing.T, r *lti.Records) {
	ctx := context.Background()
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	c := lti.Course{Issuer: "https://lms.example", ClientID: "c1", ContextID: "course-7", Title: "Media studies",
		MembershipsURL: "https://lms.example/nrps/7", LaunchedBy: "teacher@school.example", LastLaunchAt: at}
	require.NoError(t, r.SeeCourse(ctx, c))
	other := c
	other.ContextID, other.Title, other.LastLaunchAt = "course-8\nwith a line break", "Art", at.Add(time.Hour)
	require.NoError(t, r.SeeCourse(ctx, other), "a course id may hold anything")
	require.NoError(t, r.RecordRoster(ctx, c.Issuer, c.ClientID, c.ContextID, lti.RosterRead{Result: "30 members", Waiting: 1240, At: at.Add(3 * time.Hour)}))
	c.Title, c.LastLaunchAt = "Media studies 2", at.Add(2*time.Hour)
	require.NoError(t, r.SeeCourse(ctx, c), "seen again: updated")
	list, err := r.Courses(ctx, 10)
	require.NoError(t, err)
	require.Len(t, list, 2)
	c.LastRoster, c.LastRosterAt, c.RosterWaiting = "30 members", at.Add(3*time.Hour), 1240
	assert.Equal(t, c, list[0], "the latest launched first, its roster's read kept through the later launch")
	assert.Equal(t, other, list[1], "never read: no roster")
	list, err = r.Courses(ctx, 1)
	require.NoError(t, err)
	assert.Len(t, list, 1, "at most the limit")
}

func testRecordBounds(t *testing.T, r *lti.Records) {
	ctx := context.Background()
	huge := strings.Repeat("é", 300_000) // 600,000 bytes
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	p := lti.Registered{Name: huge, Issuer: "https://lms.example", ClientID: "c1", AuthURL: "https://lms.example/auth", JWKSURL: "https://lms.example/jwks", RegisteredAt: at}
	require.NoError(t, r.AddPlatform(ctx, p))
	for name, bad := range map[string]func(*lti.Registered){
		"a client id too long":          func(p *lti.Registered) { p.ClientID = strings.Repeat("c", store.MaxKey+1) },
		"a URL too long":                func(p *lti.Registered) { p.ClientID, p.JWKSURL = "c2", strings.Repeat("u", store.MaxKey+1) },
		"a line break in the issuer":    func(p *lti.Registered) { p.Issuer = "https://lms.example\nc1" },
		"a line break in the client id": func(p *lti.Registered) { p.ClientID = "c\n3" },
	} {
		q := p
		bad(&q)
		assert.ErrorIs(t, r.AddPlatform(ctx, q), store.ErrInvalid, name)
	}
	list, err := r.Platforms(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1, "nothing else kept")
	assert.LessOrEqual(t, len(list[0].Name), store.MaxName)
	assert.True(t, strings.HasSuffix(list[0].Name, "…"), "cut at a character, marked")

	c := lti.Course{Issuer: p.Issuer, ClientID: "c1", ContextID: "k", Title: huge, MembershipsURL: "https://lms.example/nrps", LaunchedBy: "t@school.example", LastLaunchAt: at}
	require.NoError(t, r.SeeCourse(ctx, c))
	require.NoError(t, r.RecordRoster(ctx, c.Issuer, c.ClientID, c.ContextID, lti.RosterRead{Result: huge, At: at}))
	bad := c
	bad.ContextID = strings.Repeat("x", store.MaxKey+1)
	assert.ErrorIs(t, r.SeeCourse(ctx, bad), store.ErrInvalid)
	courses, err := r.Courses(ctx, 10)
	require.NoError(t, err)
	require.Len(t, courses, 1)
	assert.LessOrEqual(t, len(courses[0].Title), store.MaxName)
	assert.LessOrEqual(t, len(courses[0].LastRoster), store.MaxDetail)
}
