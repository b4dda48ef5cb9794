package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/platformsim"
	"github.com/ssobridge/ssobridge/samplelms"
	"github.com/ssobridge/ssobridge/store"
)

// rosterRate is the platform's limit in the roster test (requests/s).
const rosterRate = 20

// An instructor's launch provisions the course's 30 pupils ahead, within
// the platform's pace (real pacing, a platform that answers 429 past
// 20 calls/s): one token for the roster's 4 pages, the members outside
// the platform's email_domains, without an email or inactive skipped and
// counted; each pupil's first launch then makes one platform call. A
// second launch within 10 minutes reads nothing again. A token endpoint
// that is down leaves the launch working and says so in the audit.
func TestLTIRosterProvisionsTheClass(t *testing.T) {
	plat := startLMS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	plat.SetTool("http://" + ln.Addr().String())
	var roster []samplelms.Member
	for i := 1; i <= 30; i++ {
		roster = append(roster, samplelms.Member{UserID: fmt.Sprintf("pupil-%02d", i), Email: fmt.Sprintf("pupil%02d@school.example", i),
			GivenName: "Pupil", FamilyName: fmt.Sprintf("%02d", i), Roles: []string{ltiplatformtest.RoleLearner}})
	}
	roster = append(roster,
		samplelms.Member{UserID: ltiTeacher.Sub, Email: ltiTeacher.Email, GivenName: "Tom", FamilyName: "Teacher", Roles: []string{ltiplatformtest.RoleInstructor}},
		samplelms.Member{UserID: "guest-1", Email: "guest@elsewhere.example", Roles: []string{ltiplatformtest.RoleLearner}},
		samplelms.Member{UserID: "no-mail", Roles: []string{ltiplatformtest.RoleLearner}},
		samplelms.Member{UserID: "left", Email: "left@school.example", Status: "Inactive", Roles: []string{ltiplatformtest.RoleLearner}})
	plat.OfferRoster(roster, 10)
	sim := sharedPlatform(t, func(c *platformsim.Config) { c.RateLimit, c.RateBurst = rosterRate, rosterRate })
	ta := startTestApp(t, testOptions{listener: ln, platform: sim, realPacing: true, platformYAML: fmt.Sprintf("  rate_limit: %d\n", rosterRate),
		yaml: ltiYAML(plat, plat.JWKSURL()) + "      token_url: " + plat.TokenURL() + "\n      email_domains: [school.example]\n"})

	teacher := ta.browser(t)
	r, _ := teacher.lmsLaunch(t, plat, "teacher")
	path, _ := teacher.follow(t, ta, r)
	assert.Equal(t, "/editor", path, "the instructor lands in the editor at once")

	var job store.ProvisionJob
	require.Eventually(t, func() bool {
		job, err = ta.store.LatestProvisionJob(t.Context())
		return err == nil && job.State == store.JobDone
	}, time.Minute, 20*time.Millisecond, "the roster's job ends")
	assert.Equal(t, 31, job.Total, "30 pupils and the teacher")
	assert.Equal(t, 30, job.Created, "30 platform users made ahead")
	assert.Zero(t, job.Failed)
	assert.Contains(t, job.StartedBy, "LTI roster")
	grants, reads, refusal := plat.RosterStats()
	assert.Equal(t, 1, grants, "one token for the whole roster")
	assert.Equal(t, 4, reads, "34 members, 10 a page")
	assert.Empty(t, refusal)
	assert.Zero(t, sim.Server.RateLimited(), "no 429: the job keeps to the platform's pace")
	require.Eventually(t, func() bool { return strings.Contains(ta.logs.String(), "LTI roster provisioned") }, 10*time.Second, 10*time.Millisecond)
	events, _, err := ta.store.ListEvents(t.Context(), store.AuditFilter{Kind: store.KindProvision, Limit: 100})
	require.NoError(t, err)
	var audited string
	for _, ev := range events {
		if strings.HasPrefix(ev.Detail, "LTI roster") {
			audited = ev.Detail
		}
	}
	assert.Contains(t, audited, "34 members: 31 accounts provisioned, 1 skipped by the admission rules, 1 without an email, 1 inactive")
	_, err = ta.store.AccountByEmail(t.Context(), "guest@elsewhere.example")
	assert.ErrorIs(t, err, store.ErrNotFound, "a member outside email_domains gets no account")

	ta.calls()
	for _, i := range []int{1, 17, 30} {
		hint := fmt.Sprintf("p%02d", i)
		plat.AddUser(hint, ltiplatformtest.User{Sub: fmt.Sprintf("pupil-%02d", i), Email: fmt.Sprintf("pupil%02d@school.example", i),
			GivenName: "Pupil", FamilyName: fmt.Sprintf("%02d", i), Roles: []string{ltiplatformtest.RoleLearner}})
		b := ta.browser(t)
		r, _ := b.lmsLaunch(t, plat, hint)
		path, _ := b.follow(t, ta, r)
		assert.Equal(t, "/editor", path)
		assert.Equal(t, map[string]int{"issue_token": 1, "exchange": 1}, ta.calls(), "pupil %d: one platform call (and the browser's exchange)", i)
	}

	r, _ = ta.browser(t).lmsLaunch(t, plat, "teacher")
	assert.Equal(t, http.StatusSeeOther, r.status)
	_, reads2, _ := plat.RosterStats()
	assert.Equal(t, reads, reads2, "read once in 10 minutes")

	// The console lists the course with its last roster, and reads it
	// again on an admin's action.
	ta.addAccount(t, "root@partner.example", true)
	admin := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, admin.login("root@partner.example", testPassword).status)
	console := admin.get("/admin/lti")
	assert.Contains(t, console.body, "Media studies")
	assert.Contains(t, console.body, "34 members: 31 accounts provisioned")
	form := url.Values{"_csrf": {admin.csrf("/admin/lti")}, "issuer": {plat.Issuer}, "client_id": {plat.ClientID}, "context_id": {"course-7"}}
	again := admin.post("/admin/lti/courses/provision", form)
	require.Equal(t, http.StatusOK, again.status, again.body)
	assert.Contains(t, again.body, "Reading the roster of Media studies")
	require.Eventually(t, func() bool { _, n, _ := plat.RosterStats(); return n == 2*reads }, 30*time.Second, 20*time.Millisecond, "read again")
	form.Set("context_id", "no-such-course")
	assert.Equal(t, http.StatusNotFound, admin.post("/admin/lti/courses/provision", form).status)
}

// A token endpoint that is down: the instructor's launch lands, the
// roster is not read, and the log and the audit say why.
func TestLTIRosterTokenEndpointDown(t *testing.T) {
	plat := startLMS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	plat.SetTool("http://" + ln.Addr().String())
	plat.OfferRoster([]samplelms.Member{{UserID: "p1", Email: "p1@school.example", Roles: []string{ltiplatformtest.RoleLearner}}}, 10)
	plat.SetTokenDown(true)
	ta := startTestApp(t, testOptions{listener: ln, yaml: ltiYAML(plat, plat.JWKSURL()) + "      token_url: " + plat.TokenURL() + "\n      email_domains: [school.example]\n"})
	b := ta.browser(t)
	r, _ := b.lmsLaunch(t, plat, "teacher")
	path, _ := b.follow(t, ta, r)
	assert.Equal(t, "/editor", path)
	require.Eventually(t, func() bool { return strings.Contains(ta.logs.String(), "LTI roster: not provisioned") }, 10*time.Second, 10*time.Millisecond)
	events, _, err := ta.store.ListEvents(t.Context(), store.AuditFilter{Kind: store.KindProvision, Outcome: "failed", Limit: 10})
	require.NoError(t, err)
	require.NotEmpty(t, events)
	assert.Contains(t, events[0].Detail, "token endpoint")
	_, reads, _ := plat.RosterStats()
	assert.Zero(t, reads)
}
