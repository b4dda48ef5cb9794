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

	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/demo/samplelms"
	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/internal/pgtest"
	"github.com/ssobridge/ssobridge/loadtest"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin/lti"
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

// A roster larger than its LMS's roster_max, on both databases (and with
// ids a PostgreSQL text column would refuse if the store kept them
// joined): the instructor's launch admits the first roster_max members
// and makes nothing for the others; the course's row and the audit say
// it waits for a confirmation of all of them; a confirmation of another
// number changes nothing; the admin's confirmation provisions everyone.
func TestLTIRosterPastItsCapWaitsForAnAdmin(t *testing.T) {
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			plat := startLMS(t)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			plat.SetTool("http://" + ln.Addr().String())
			const pupils, capAt = 40, 25
			var roster []samplelms.Member
			for i := 1; i <= pupils; i++ {
				roster = append(roster, samplelms.Member{UserID: fmt.Sprintf("pupil-%02d", i), Email: fmt.Sprintf("pupil%02d@school.example", i),
					GivenName: "Pupil", FamilyName: fmt.Sprintf("%02d", i), Roles: []string{ltiplatformtest.RoleLearner}})
			}
			plat.OfferRoster(roster, 15)
			o := testOptions{listener: ln, yaml: ltiYAML(plat, plat.JWKSURL()) + "      token_url: " + plat.TokenURL() +
				"\n      email_domains: [school.example]\n      roster_max: " + fmt.Sprint(capAt) + "\n"}
			if db == "postgres" {
				o.postgres, o.platform = pgtest.DSN(t), sharedPlatform(t, nil)
			}
			ta := startTestApp(t, o)
			course := func() lti.Course {
				list, err := (&lti.Records{Store: ta.store}).Courses(t.Context(), 10)
				require.NoError(t, err)
				require.Len(t, list, 1)
				return list[0]
			}

			r, _ := ta.browser(t).lmsLaunch(t, plat, "teacher")
			require.Equal(t, http.StatusSeeOther, r.status)
			require.Eventually(t, func() bool { return course().RosterWaiting > 0 }, 30*time.Second, 20*time.Millisecond, "the course waits")
			assert.Equal(t, pupils, course().RosterWaiting)
			assert.Contains(t, course().LastRoster, "40 people are more than the cap of 25")
			_, err = ta.store.AccountByEmail(t.Context(), "pupil25@school.example")
			assert.NoError(t, err, "the first 25 are admitted")
			_, err = ta.store.AccountByEmail(t.Context(), "pupil26@school.example")
			assert.ErrorIs(t, err, store.ErrNotFound, "nothing is made past the cap")
			events, _, err := ta.store.ListEvents(t.Context(), store.AuditFilter{Kind: store.KindProvision, Outcome: "waiting", Limit: 10})
			require.NoError(t, err)
			require.NotEmpty(t, events, "the audit says the course waits")

			ta.addAccount(t, "root@partner.example", true)
			admin := ta.browser(t)
			require.Equal(t, http.StatusSeeOther, admin.login("root@partner.example", testPassword).status)
			console := admin.get("/admin/lti")
			assert.Contains(t, console.body, "Provision 40 people?")
			assert.Contains(t, console.body, "Waiting for your confirmation: 40 people, more than the cap of 25")
			form := url.Values{"_csrf": {admin.csrf("/admin/lti")}, "issuer": {plat.Issuer}, "client_id": {plat.ClientID}, "context_id": {"course-7"}}
			for bad, status := range map[string]int{"41": http.StatusConflict, "many": http.StatusBadRequest} {
				form.Set("confirm", bad)
				assert.Equal(t, status, admin.post("/admin/lti/courses/provision", form).status, bad)
			}
			_, err = ta.store.AccountByEmail(t.Context(), "pupil26@school.example")
			assert.ErrorIs(t, err, store.ErrNotFound, "a refused confirmation makes nothing")

			form.Set("confirm", "40")
			require.Equal(t, http.StatusOK, admin.post("/admin/lti/courses/provision", form).status)
			require.Eventually(t, func() bool {
				return course().RosterWaiting == 0 && strings.Contains(course().LastRoster, "40 accounts provisioned")
			},
				30*time.Second, 20*time.Millisecond, "confirmed: everyone")
			_, err = ta.store.AccountByEmail(t.Context(), "pupil40@school.example")
			assert.NoError(t, err)
			audit, _, err := ta.store.ListEvents(t.Context(), store.AuditFilter{Kind: store.KindAdmin, Limit: 10})
			require.NoError(t, err)
			require.NotEmpty(t, audit)
			assert.Contains(t, audit[0].Detail, "confirmed provisioning 40 people")
		})
	}
}

// BenchmarkRosterOfAMillion reads a course's roster of a million members
// in pages of about 8 MB (the largest a page may be) at an instructor's
// launch, and reports the process's peak RSS before and after: the
// roster is read member by member, and past the cap (500) members are
// counted, not admitted, so the peak does not grow with the roster. Run
// alone for a clean peak:
//
//	go test -run '^$' -bench RosterOfAMillion -benchtime 1x ./e2e
func BenchmarkRosterOfAMillion(b *testing.B) {
	const members, pageSize = 1_000_000, 36_000 // about 7.6 MB a page
	member := func(i int) samplelms.Member {
		return samplelms.Member{UserID: fmt.Sprintf("pupil-%07d", i), Email: fmt.Sprintf("pupil%07d@school.example", i),
			GivenName: "Pupil", FamilyName: fmt.Sprintf("%07d", i), Roles: []string{ltiplatformtest.RoleLearner}}
	}
	before := loadtest.PeakRSS()
	for i := 0; b.Loop(); i++ {
		plat := ltiplatformtest.Start(b, "http://bridge.invalid")
		plat.AddUser("teacher", ltiTeacher)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(b, err)
		plat.SetTool("http://" + ln.Addr().String())
		plat.OfferGeneratedRoster(members, pageSize, member)
		ta := startTestApp(b, testOptions{listener: ln, yaml: ltiYAML(plat, plat.JWKSURL()) + "      token_url: " + plat.TokenURL() +
			"\n      email_domains: [school.example]\n"})
		before = max(before, loadtest.PeakRSS())
		r, _ := ta.browser(b).lmsLaunch(b, plat, "teacher")
		require.Equal(b, http.StatusSeeOther, r.status)
		var course lti.Course
		require.Eventually(b, func() bool {
			list, err := (&lti.Records{Store: ta.store}).Courses(b.Context(), 1)
			if err == nil && len(list) == 1 {
				course = list[0]
			}
			return !course.LastRosterAt.IsZero()
		}, 5*time.Minute, 50*time.Millisecond, "the roster is read to its end")
		require.Equal(b, members, course.RosterWaiting, course.LastRoster)
		if i == 0 {
			_, reads, _ := plat.RosterStats()
			b.ReportMetric(float64(reads), "pages")
		}
	}
	b.ReportMetric(before, "peak_rss_before_MiB")
	b.ReportMetric(loadtest.PeakRSS(), "peak_rss_MiB")
	b.ReportMetric(members*float64(b.N)/b.Elapsed().Seconds(), "members/s")
}

// On two instances sharing PostgreSQL: an instructor's launch on A reads
// the course's roster; a launch of the course on B within 10 minutes
// reads nothing again; B's console lists the course with A's read (the
// course and its roster's read are records every instance reads), and
// B's "provision now" reads it again, which A's console then shows.
func TestLTIRosterOnceAcrossInstances(t *testing.T) {
	plat := startLMS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	public := "http://" + ln.Addr().String()
	plat.SetTool(public)
	member := func(i int) samplelms.Member {
		return samplelms.Member{UserID: fmt.Sprintf("pupil-%02d", i), Email: fmt.Sprintf("pupil%02d@school.example", i), GivenName: "Pupil",
			FamilyName: fmt.Sprintf("%02d", i), Roles: []string{ltiplatformtest.RoleLearner}}
	}
	teacher := samplelms.Member{UserID: ltiTeacher.Sub, Email: ltiTeacher.Email, GivenName: "Tom", FamilyName: "Teacher", Roles: []string{ltiplatformtest.RoleInstructor}}
	plat.OfferRoster([]samplelms.Member{teacher, member(1), member(2), member(3)}, 10)
	a, b := instancePair(t, testOptions{listener: ln, yaml: "server:\n  public_url: " + public + "\n" + ltiYAML(plat, plat.JWKSURL()) +
		"      token_url: " + plat.TokenURL() + "\n      email_domains: [school.example]\n"})

	r, _ := a.browser(t).lmsLaunch(t, plat, "teacher")
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Eventually(t, func() bool {
		job, err := b.store.LatestProvisionJob(t.Context())
		return err == nil && job.State == store.JobDone && job.Total == 4
	}, time.Minute, 20*time.Millisecond, "A's read provisions the class, seen from B")
	_, reads, _ := plat.RosterStats()
	require.Positive(t, reads)

	r, _ = b.browser(t).lmsLaunch(t, plat, "teacher")
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	_, again, _ := plat.RosterStats()
	assert.Equal(t, reads, again, "read once in 10 minutes, whichever instance the launch reaches")

	b.addAccount(t, "root@partner.example", true)
	onB := b.browser(t)
	require.Equal(t, http.StatusSeeOther, onB.login("root@partner.example", testPassword).status)
	require.Eventually(t, func() bool { return strings.Contains(onB.get("/admin/lti").body, "4 members: 4 accounts provisioned") },
		10*time.Second, 20*time.Millisecond, "B's console shows the course and A's read")

	plat.OfferRoster([]samplelms.Member{teacher, member(1), member(2), member(3), member(4)}, 10)
	form := url.Values{"_csrf": {onB.csrf("/admin/lti")}, "issuer": {plat.Issuer}, "client_id": {plat.ClientID}, "context_id": {"course-7"}}
	require.Equal(t, http.StatusOK, onB.post("/admin/lti/courses/provision", form).status)
	onA := onB.on(a)
	require.Eventually(t, func() bool { return strings.Contains(onA.get("/admin/lti").body, "5 members: 5 accounts provisioned") },
		30*time.Second, 20*time.Millisecond, "B's new read shows on A's console")
}
