package handlers

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/launch/pacing"
	"github.com/ssobridge/ssobridge/launch/waitline"
	"github.com/ssobridge/ssobridge/store"
)

// fixedBudget reports fixed budget stats to the line.
type fixedBudget pacing.Stats

func (b fixedBudget) Stats() pacing.Stats { return pacing.Stats(b) }

// MarkSlow: fixed stats stay as they are (the line's own slowness is its
// own to keep).
func (fixedBudget) MarkSlow(time.Duration) {}

// withLine serves launches through a real line (the fixture's store and
// launcher) that waits for them 50 ms before the waiting page.
func withLine(f *fixture, b waitline.Budget, maxWait time.Duration) *waitline.Line {
	ln := waitline.New(waitline.Config{Patience: 50 * time.Millisecond, MaxWait: maxWait, Now: time.Now},
		f.launcher, f.accts.SQLite, b, NewSealer(f.deps.Sessions, time.Hour, nil))
	f.t.Cleanup(ln.Close)
	f.reconfigure(func(d *Deps) { d.Line = ln })
	return ln
}

// A launch that takes longer than a moment gives the waiting page at
// once (200, no-store, Refresh without JavaScript), which lands in the
// editor once the launch is done, once.
func TestLaunchWaitsInLine(t *testing.T) {
	f := setup(t)
	f.account("ada@example.com", false)
	release := make(chan struct{})
	f.launcher.do = func(acct store.Account, returnTo string) (launch.Result, error) {
		<-release
		return launch.Result{ExchangeURL: "https://platform.example/exchange?token=TOKEN", Path: launch.PathCreated}, nil
	}
	withLine(f, fixedBudget{Waiting: 1}, time.Minute)
	c := f.client()
	c.signIn("ada@example.com")

	first := c.submit("/", "/launch", nil)
	require.Equal(t, http.StatusSeeOther, first.status, "the waiting page's own address, which a reload shows again")
	assert.Regexp(t, `^/launch/wait/[0-9a-f]{32}$`, first.header.Get("Location"))
	assert.Equal(t, "no-store", first.header.Get("Cache-Control"))
	r := c.get(first.header.Get("Location"))
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
	refresh := waitRefresh(r)
	require.Regexp(t, `^[1-5];url=/launch/wait/[0-9a-f]{32}$`, refresh, "a refresh for browsers without JavaScript")
	assert.Empty(t, r.header.Get("Refresh"), "no Refresh header: with JavaScript the page is checked in place, not reloaded")
	assert.Equal(t, "/static/wait.js", r.doc.Find("script").AttrOr("src", ""))
	assert.Contains(t, r.header.Get("Content-Security-Policy"), "script-src 'self'; connect-src 'self'", "this page's own script only")
	assert.Equal(t, "polite", r.doc.Find("#wait-status").AttrOr("aria-live", ""))
	assert.Equal(t, 1, r.doc.Find("[aria-live]").Length(), "one live region: the estimate")
	assert.Contains(t, r.text("#launch-waiting h1"), "Opening the video editor")
	assert.Contains(t, r.text("#launch-waiting .lead"), "Many people are starting at the same time")
	assert.NotContains(t, r.body, "TOKEN")
	next := strings.SplitN(refresh, ";url=", 2)[1]

	r = c.get(next)
	assert.Equal(t, http.StatusOK, r.status, "still waiting")
	// The script's check: still waiting, never using the ticket up.
	r = c.get(next + "/status")
	assert.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, r.body, `"ready":false`)
	assert.Contains(t, r.body, `"say":"`)
	// Stopping the reloads (no JavaScript, WCAG 2.2.1): no refresh, a
	// "check now" link instead.
	r = c.get(next + "?still=1")
	assert.Equal(t, http.StatusOK, r.status)
	assert.Empty(t, waitRefresh(r))
	assert.Equal(t, next+"?still=1", r.doc.Find("#wait-continue").AttrOr("href", ""))
	assert.Equal(t, next, r.doc.Find("#wait-resume").AttrOr("href", ""))
	close(release)
	require.Eventually(t, func() bool {
		return strings.Contains(c.get(next+"/status").body, `"ready":true`)
	}, 5*time.Second, 10*time.Millisecond, "the status says ready once the launch is done")
	require.Eventually(t, func() bool {
		r = c.get(next)
		return r.status == http.StatusSeeOther
	}, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, "https://platform.example/exchange?token=TOKEN", r.header.Get("Location"))
	assert.Equal(t, "no-referrer", r.header.Get("Referrer-Policy"))
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"))

	r = c.get(next)
	assert.Equal(t, http.StatusSeeOther, r.status, "used once: back to the start page")
	assert.Equal(t, "/", r.header.Get("Location"))
}

// Another user cannot use a waiting page's ticket, and a signed-out one is
// sent to sign in.
func TestLaunchWaitIsTheUsersOnly(t *testing.T) {
	f := setup(t)
	f.account("ada@example.com", false)
	f.account("eve@example.com", false)
	release := make(chan struct{})
	defer close(release)
	f.launcher.do = func(store.Account, string) (launch.Result, error) {
		<-release
		return launch.Result{ExchangeURL: "https://platform.example/exchange?token=TOKEN"}, nil
	}
	withLine(f, fixedBudget{Waiting: 1}, time.Minute)
	ada := f.client()
	ada.signIn("ada@example.com")
	next := ada.submit("/", "/launch", nil).header.Get("Location")
	require.True(t, strings.HasPrefix(next, "/launch/wait/"), next)
	second := ada.get(next)
	assert.Equal(t, http.StatusOK, second.status, "the same browser: its place in line, reload after reload")
	assert.Equal(t, http.StatusOK, ada.get(next).status)

	eve := f.client()
	eve.signIn("eve@example.com")
	r := eve.get(next)
	assert.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, "/", r.header.Get("Location"), "not eve's")
	r = f.client().get(next)
	assert.Equal(t, "session-expired", r.class())
	r = eve.get("/launch/wait/not-a-ticket")
	assert.Equal(t, "/", r.header.Get("Location"))
}

// A waiting launch ends with its session: after a sign-out its launch is
// stopped (it gets no token) and its ticket is gone, so a later sign-in
// of the same account cannot redeem it.
func TestLaunchEndsWithItsSession(t *testing.T) {
	for _, end := range []string{"/logout", "/logout/everywhere"} {
		t.Run(end, func(t *testing.T) {
			f := setup(t)
			f.account("ada@example.com", false)
			f.launcher.untilCancelled = true
			ln := withLine(f, fixedBudget{Waiting: 1}, time.Minute)
			c := f.client()
			c.signIn("ada@example.com")
			next := c.submit("/", "/launch", nil).header.Get("Location")
			require.Equal(t, 1, ln.Waiting())

			c.submit("/", end, nil)
			require.Eventually(t, func() bool { return ln.Waiting() == 0 }, 5*time.Second, time.Millisecond, "the launch is stopped")
			c.signIn("ada@example.com")
			r := c.get(next)
			assert.Equal(t, http.StatusSeeOther, r.status)
			assert.Equal(t, "/", r.header.Get("Location"), "a later session does not redeem the ticket")
			assert.NotContains(t, r.header.Get("Location"), "TOKEN")
		})
	}
}

// A line longer than max_wait turns the user away at once with the busy
// page: 503, Retry-After, when to try again; nothing is launched.
func TestLaunchTooBusy(t *testing.T) {
	f := setup(t)
	f.account("ada@example.com", false)
	withLine(f, fixedBudget{Rate: 1, Share: 0.01, Waiting: 3}, time.Minute) // calls wait; 2 calls at 0.01/s: 200 s
	c := f.client()
	c.signIn("ada@example.com")
	r := c.submit("/", "/launch", nil)
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.Equal(t, "platform-busy", r.class())
	assert.NotEmpty(t, r.header.Get("Retry-After"))
	assert.Contains(t, r.text("#retry-at"), "minutes")
	assert.Empty(t, f.launcher.made())
}

// fakeJobs is the console's provisioning as the test sets it.
type fakeJobs struct {
	started []string
	err     error
	latest  store.ProvisionJob
}

func (j *fakeJobs) Start(_ context.Context, by string) error {
	j.started = append(j.started, by)
	return j.err
}

func (j *fakeJobs) Latest(context.Context) (store.ProvisionJob, error) {
	if j.latest.State == "" {
		return store.ProvisionJob{}, store.ErrNotFound
	}
	return j.latest, nil
}

// The console's provisioning page counts the linked accounts, starts the
// background job (one at a time), and shows a running job's progress,
// reloading itself.
func TestProvisioningPage(t *testing.T) {
	f := setup(t)
	f.account("root@example.com", true)
	a := f.account("ada@example.com", false)
	f.account("bob@example.com", false)
	f.accts.link(a.ID, "p-ada", time.Time{})
	jobs := &fakeJobs{}
	f.reconfigure(func(d *Deps) { d.Provisioning = jobs })
	c := f.client()
	c.signIn("root@example.com")

	r := c.get("/admin/provisioning")
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "1 account", r.text("#linked"), "one, not \"1 accounts\"")
	assert.Equal(t, "2 enabled accounts", r.text("#unlinked"), "root and bob")
	assert.Contains(t, r.text("#provision-start"), "Provision all 2 unlinked accounts")
	assert.Contains(t, r.text("#provision-cli"), "ssobridge provision --all", "a real platform: the command line works too")
	assert.Equal(t, "/admin/audit?kind=provision", r.doc.Find("#job-report a").AttrOr("href", ""), "every job's outcomes stay in the audit log")
	f.platform.conn.Embedded = true
	r = c.get("/admin/provisioning")
	assert.NotContains(t, r.text("#provision-cli"), "--all", "the demo: the command refuses its emulator, so it is not suggested")
	assert.Contains(t, r.text("#provision-cli"), "In the demo, provision here")
	f.platform.conn.Embedded = false

	r = c.submit("/admin/provisioning", "/admin/provisioning/start", nil)
	assert.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, []string{"root@example.com"}, jobs.started)
	assert.Len(t, f.accts.eventsOf(store.KindAdmin), 1, "audited")

	jobs.err = store.ErrJobRunning
	r = c.submit("/admin/provisioning", "/admin/provisioning/start", nil)
	assert.Equal(t, "/admin/provisioning?m=running", r.header.Get("Location"))

	jobs.latest = store.ProvisionJob{State: store.JobRunning, StartedBy: "root@example.com", SeenAt: f.clock.Now(), Total: 10, Done: 4, Created: 3, Existed: 1, RateLimited: 2}
	r = c.get("/admin/provisioning")
	assert.Equal(t, "4", r.doc.Find("#job-progress").AttrOr("value", ""))
	assert.Equal(t, "10", r.doc.Find("#job-progress").AttrOr("max", ""))
	assert.Contains(t, r.text("#job-counts"), "3 created, 1 found on the platform, 0 failed")
	assert.Contains(t, r.text("#job-counts"), "answered 2 calls with 429")
	assert.Equal(t, "2", r.doc.Find(`meta[http-equiv="refresh"]`).AttrOr("content", ""), "reloads while running")
	assert.Contains(t, r.text("#job-reload"), "Stop reloading")
	still := c.get("/admin/provisioning?still=1")
	assert.Empty(t, still.doc.Find(`meta[http-equiv="refresh"]`).Nodes, "the admin stopped the reloads (WCAG 2.2.1)")
	assert.Contains(t, still.text("#job-reload"), "Reload by itself again")
	assert.Empty(t, r.doc.Find("#provision-start").Nodes, "no second start while it runs")

	f.clock.Advance(time.Minute) // its instance stopped
	r = c.get("/admin/provisioning")
	assert.Contains(t, r.text("#job-state"), "stopped")
	assert.Empty(t, r.doc.Find(`meta[http-equiv="refresh"]`).Nodes)

	user := f.client()
	user.signIn("ada@example.com")
	assert.Equal(t, http.StatusForbidden, user.get("/admin/provisioning").status)
}

// Without a line the launch runs at once, bounded, and answers the
// 303 at once.
func TestLaunchWithoutALine(t *testing.T) {
	f := setup(t)
	f.account("ada@example.com", false)
	ln := withLine(f, fixedBudget{}, time.Minute)
	c := f.client()
	c.signIn("ada@example.com")
	r := c.submit("/", "/launch", nil)
	assert.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, "https://platform.example/api/5/login-token/login/TOKEN-ada@example.com", r.header.Get("Location"))
	calls := f.launcher.made()
	require.Len(t, calls, 1)
	assert.True(t, calls[0].hasDeadline, "bounded")
	assert.Zero(t, ln.Waiting())
}

// waitRefresh is a waiting page's refresh for browsers without JavaScript
// (the meta refresh inside <noscript>), "" if it has none.
func waitRefresh(r *response) string {
	m := regexp.MustCompile(`<noscript><meta http-equiv="refresh" content="([^"]+)"`).FindStringSubmatch(r.body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// A launch whose turn does not come within max_wait ends on the "too
// busy" page (503, Retry-After); the browser keeps the launch's place,
// so the person who comes back within it takes that place again, once,
// and only for their own account.
func TestTooBusyKeepsThePlace(t *testing.T) {
	f := setup(t)
	f.account("ada@example.com", false)
	f.account("eve@example.com", false)
	f.launcher.untilCancelled = true // its turn never comes
	withLine(f, fixedBudget{Waiting: 1}, 300*time.Millisecond)
	c := f.client()
	c.signIn("ada@example.com")
	next := c.submit("/", "/launch", nil).header.Get("Location")
	require.Regexp(t, `^/launch/wait/[0-9a-f]{32}$`, next)
	var busy *response
	require.Eventually(t, func() bool {
		busy = c.get(next)
		return busy.status == http.StatusServiceUnavailable
	}, 5*time.Second, 20*time.Millisecond)
	assert.Equal(t, "60", busy.header.Get("Retry-After"))
	assert.Equal(t, "platform-busy", busy.class())
	assert.Contains(t, busy.text("#place-kept"), "kept for 11 minutes", "the page says so")
	require.NotEmpty(t, c.cookie(placeCookie), "the place is kept")
	first := f.launcher.made()[0].place
	require.False(t, first.IsZero())

	f.launcher.mu.Lock()
	f.launcher.untilCancelled = false
	f.launcher.mu.Unlock()
	r := c.submit("/", "/launch", nil)
	require.Equal(t, http.StatusSeeOther, r.status)
	calls := f.launcher.made()
	assert.WithinDuration(t, first, calls[len(calls)-1].place, time.Millisecond, "back at the place it had")
	assert.Empty(t, c.cookie(placeCookie), "taken once")

	r = c.submit("/", "/launch", nil)
	require.Equal(t, http.StatusSeeOther, r.status)
	calls = f.launcher.made()
	assert.Greater(t, calls[len(calls)-1].place.Sub(first), 100*time.Millisecond, "a later launch has a place of its own")

	// Ada's place is no use to another account's browser.
	f.launcher.mu.Lock()
	f.launcher.untilCancelled = true
	f.launcher.mu.Unlock()
	next = c.submit("/", "/launch", nil).header.Get("Location")
	require.Eventually(t, func() bool { return c.get(next).status == http.StatusServiceUnavailable }, 5*time.Second, 20*time.Millisecond)
	kept := c.cookie(placeCookie)
	require.NotEmpty(t, kept)
	f.launcher.mu.Lock()
	f.launcher.untilCancelled = false
	f.launcher.mu.Unlock()
	eve := f.client()
	eve.signIn("eve@example.com")
	eve.setCookie(placeCookie, kept)
	require.Equal(t, http.StatusSeeOther, eve.submit("/", "/launch", nil).status)
	calls = f.launcher.made()
	assert.Equal(t, "eve@example.com", calls[len(calls)-1].account.Email)
	assert.Greater(t, calls[len(calls)-1].place.Sub(first), 100*time.Millisecond, "Eve's launch has her own place, not Ada's")
}

// The place kept on one instance's "too busy" page is taken by the next
// launch on another instance (a load balancer's next pick): the cookie is
// sealed under the session keys every instance shares, and the other
// instance's line puts the launch at the place it had.
func TestTooBusyPlaceTakenOnAnotherInstance(t *testing.T) {
	f := setup(t)
	f.account("ada@example.com", false)
	f.launcher.untilCancelled = true // its turn never comes
	withLine(f, fixedBudget{Waiting: 1}, 300*time.Millisecond)
	// Instance B: the same store and keys, a line of its own.
	lineB := waitline.New(waitline.Config{Patience: 50 * time.Millisecond, MaxWait: 300 * time.Millisecond, Now: time.Now},
		f.launcher, f.accts.SQLite, fixedBudget{Waiting: 1}, NewSealer(f.deps.Sessions, time.Hour, nil))
	t.Cleanup(lineB.Close)
	depsB := f.deps
	depsB.Line = lineB
	b := httptest.NewServer(New(depsB))
	t.Cleanup(b.Close)

	onA := f.client()
	onA.signIn("ada@example.com")
	next := onA.submit("/", "/launch", nil).header.Get("Location")
	require.Eventually(t, func() bool { return onA.get(next).status == http.StatusServiceUnavailable }, 5*time.Second, 20*time.Millisecond)
	require.NotEmpty(t, onA.cookie(placeCookie), "the place is kept")
	first := f.launcher.made()[0].place
	require.False(t, first.IsZero())

	f.launcher.mu.Lock()
	f.launcher.untilCancelled = false
	f.launcher.mu.Unlock()
	onB := &client{t: t, base: b.URL, c: onA.c} // the same browser: cookies do not tell ports apart
	r := onB.submit("/", "/launch", nil)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	calls := f.launcher.made()
	assert.WithinDuration(t, first, calls[len(calls)-1].place, time.Millisecond, "back at the place it had on A")
	assert.Empty(t, onB.cookie(placeCookie), "taken once")
}
