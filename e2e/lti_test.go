package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

var (
	ltiPupil   = ltiplatformtest.User{Sub: "canvas-user-1001", Email: "pupil@school.example", GivenName: "Pia", FamilyName: "Pupil", Roles: []string{ltiplatformtest.RoleLearner}}
	ltiTeacher = ltiplatformtest.User{Sub: "canvas-user-2002", Email: "teacher@school.example", GivenName: "Tom", FamilyName: "Teacher", Roles: []string{ltiplatformtest.RoleInstructor}}
)

// ltiYAML registers plat with the bridge.
func ltiYAML(plat *ltiplatformtest.Platform, jwksURL string) string {
	return fmt.Sprintf("lti:\n  platforms:\n    - name: Springfield Canvas\n      issuer: %q\n      client_id: %q\n      deployment_ids: [%q]\n      auth_url: %q\n      jwks_url: %q\n      admin_roles: [Administrator]\n",
		plat.Issuer, plat.ClientID, plat.DeploymentID, plat.AuthURL(), jwksURL)
}

// startLMS starts a platform that knows the pupil and the teacher.
func startLMS(t *testing.T) *ltiplatformtest.Platform {
	plat := ltiplatformtest.Start(t, "http://bridge.invalid")
	plat.AddUser("pupil", ltiPupil)
	plat.AddUser("teacher", ltiTeacher)
	return plat
}

// lmsLaunch clicks the course link of the platform user hint in browser b
// as the LMS's pages drive it: the login posted cross-site, the bridge's
// redirect to the platform, the id_token posted back. It returns the
// bridge's answer to the id_token and the form that was posted.
func (b *browser) lmsLaunch(t testing.TB, plat *ltiplatformtest.Platform, hint string) (page, url.Values) {
	t.Helper()
	r := b.post("/lti/login", plat.LoginForm(hint), "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	form := plat.Answer(t, r.header.Get("Location"))
	return b.post("/lti/launch", form, "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL), form
}

// A learner and an instructor each land in the editor as their own
// platform user with one click; a returning learner keeps one account and
// one platform user; a deep link lands at its path.
func TestLTILaunchLandsInTheEditor(t *testing.T) {
	plat := startLMS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	plat.SetTool("http://" + ln.Addr().String())
	ta := startTestApp(t, testOptions{listener: ln, yaml: ltiYAML(plat, plat.JWKSURL())})

	for _, who := range []struct{ hint, email, name string }{{"pupil", "pupil@school.example", "Pia Pupil"}, {"teacher", "teacher@school.example", "Tom Teacher"}} {
		b := ta.browser(t)
		r, _ := b.lmsLaunch(t, plat, who.hint)
		path, editor := b.follow(t, ta, r)
		assert.Equal(t, "/editor", path)
		assert.Contains(t, editor, "Signed in as "+who.name)
		assert.Len(t, ta.sim.Users(who.email), 1)
		acct, err := ta.store.AccountByEmail(t.Context(), who.email)
		require.NoError(t, err)
		assert.False(t, acct.Admin, "%s is no partner admin", who.hint)
	}
	ta.calls()

	b := ta.browser(t)
	r, _ := b.lmsLaunch(t, plat, "pupil")
	_, editor := b.follow(t, ta, r)
	assert.Contains(t, editor, "Signed in as Pia Pupil")
	assert.Equal(t, map[string]int{"issue_token": 1, "exchange": 1}, ta.calls(), "a returning learner: one token, no lookup, no creation")
	assert.Len(t, ta.sim.Users("pupil@school.example"), 1, "one platform user")
	accts, total, err := ta.store.ListAccounts(t.Context(), store.AccountFilter{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 2, total, "one account each: %v", accts)

	plat.Target = ta.srv.URL + "/open?return_to=" + url.QueryEscape("/editor/projects/42")
	r, _ = ta.browser(t).lmsLaunch(t, plat, "teacher")
	path, _ := b.follow(t, ta, r)
	assert.Equal(t, "/editor/projects/42", path, "the deep link lands at its path")
}

// A launch replayed on another instance (the same form, with a copy of the
// browser's flow cookie) is refused there: the nonce is spent in the store.
func TestLTIReplayAcrossInstances(t *testing.T) {
	plat := startLMS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	public := "http://" + ln.Addr().String()
	plat.SetTool(public)
	o := testOptions{yaml: "server:\n  public_url: " + public + "\n" + ltiYAML(plat, plat.JWKSURL())}
	o.listener = ln
	a, b := instancePair(t, o)

	onA := a.browser(t)
	r := onA.post("/lti/login", plat.LoginForm("pupil"), "Sec-Fetch-Site", "cross-site")
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	form := plat.Answer(t, r.header.Get("Location"))
	u, _ := url.Parse(a.srv.URL)
	thief := b.browser(t)
	thief.c.Jar.SetCookies(u, onA.c.Jar.Cookies(u)) // the flow cookie, copied before the post

	first := onA.post("/lti/launch", form, "Sec-Fetch-Site", "cross-site")
	require.Equal(t, http.StatusSeeOther, first.status, first.body)
	replay := thief.post("/lti/launch", form, "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusBadRequest, replay.status)
	assert.Contains(t, replay.body, `data-class="lti-stale"`)
	assert.Contains(t, replay.body, "lti: the launch was used before", "refused for its spent nonce, not for its state")
	assert.Equal(t, http.StatusSeeOther, thief.get("/").status, "no session on B")

	// The link made on A serves B: a returning launch on B finds the account.
	acct, err := a.store.AccountByEmail(t.Context(), "pupil@school.example")
	require.NoError(t, err)
	id, err := b.store.AccountOfIdentity(t.Context(), lti.SourceID(plat.Issuer, plat.ClientID), ltiPupil.Sub)
	require.NoError(t, err)
	assert.Equal(t, acct.ID, id)
}

// A key set unreadable at start: the bridge starts, /readyz says LTI is
// degraded, launches get the 503 page; once the set is back, launches work
// without a restart.
func TestLTIKeySetDownAtStartRecovers(t *testing.T) {
	plat := startLMS(t)
	plat.SetKeysDown(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	plat.SetTool("http://" + ln.Addr().String())
	ta := startTestApp(t, testOptions{listener: ln, yaml: ltiYAML(plat, plat.JWKSURL()), ltiRetry: 50 * time.Millisecond})
	require.Eventually(t, func() bool { return strings.Contains(ta.browser(t).get("/readyz").body, `"lti":"degraded"`) }, 10*time.Second, 20*time.Millisecond)
	ready := ta.browser(t).get("/readyz")
	assert.Equal(t, http.StatusOK, ready.status, "the rest of the bridge stays ready")

	b := ta.browser(t)
	r, _ := b.lmsLaunch(t, plat, "pupil")
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.Contains(t, r.body, `data-class="lti-unavailable"`)
	assert.Equal(t, "30", r.header.Get("Retry-After"))
	assert.Contains(t, ta.logs.String(), "key set is unreadable")

	plat.SetKeysDown(false)
	require.Eventually(t, func() bool { return strings.Contains(ta.browser(t).get("/readyz").body, `"lti":"ok"`) }, 10*time.Second, 20*time.Millisecond)
	r, _ = ta.browser(t).lmsLaunch(t, plat, "pupil")
	_, editor := b.follow(t, ta, r)
	assert.Contains(t, editor, "Signed in as Pia Pupil")
}

// The tool's key is generated once and kept in the store: two instances
// publish the same key set.
func TestLTIToolKeySharedByInstances(t *testing.T) {
	plat := startLMS(t)
	a, b := instancePair(t, testOptions{yaml: ltiYAML(plat, plat.JWKSURL())})
	ka, kb := a.browser(t).get("/lti/jwks"), b.browser(t).get("/lti/jwks")
	require.Equal(t, http.StatusOK, ka.status)
	assert.Contains(t, ka.body, `"kty":"RSA"`)
	assert.NotContains(t, ka.body, `"d":`, "no private part")
	assert.Equal(t, ka.body, kb.body)
}

// In Chromium, with the LMS and the bridge on two https sites: the course
// link lands in the editor with one click (the flow cookie survives the
// cross-site posts), and a framed launch shows its new-tab page inside the
// LMS's page, whose button opens the editor in a tab of its own.
func TestBrowserLTIAcrossSites(t *testing.T) {
	ctx := newTab(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	public := "https://bridge.test:" + port
	plat := ltiplatformtest.StartTLS(t, public, "lms.test")
	plat.AddUser("pupil", ltiPupil)
	plat.AddUser("teacher", ltiTeacher)
	ta := startTestApp(t, testOptions{listener: ln, tls: true, ltiClient: plat.Server.Client(),
		yaml: "server:\n  public_url: " + public + "\n" + ltiYAML(plat, plat.Server.URL+"/jwks")})

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(plat.URL()+"/course/pupil")))
	assert.Equal(t, "Signed in as Pia Pupil", editorWho(t, ctx))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	assert.Equal(t, ta.sim.URL+"/editor", loc)
	assert.NotContains(t, ta.logs.String(), "LTI launch refused")

	// The instructor, from a link into a project, in the browser the
	// pupil signed in in: asked first, switched on the person's click.
	plat.Target = public + "/open?return_to=" + url.QueryEscape("/editor/projects/42")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(plat.URL()+"/course/teacher")))
	confirmSwitch(t, ctx, "pupil@school.example", "teacher@school.example")
	assert.Equal(t, "Signed in as Tom Teacher", editorWho(t, ctx))
	loc, err = chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	assert.Equal(t, ta.sim.URL+"/editor/projects/42", loc)
	plat.Target = public + "/lti/launch"

	plat.SetFramed(true)
	tab := newTab(t)
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(plat.URL()+"/framed/pupil"), chromedp.WaitVisible(chromedp.ID("tool"))))
	tabCtx := openFramedInNewTab(t, tab, public, ta.logs.String, "13-lti-framed")
	confirmSwitch(t, tabCtx, "teacher@school.example", "pupil@school.example")
	assert.Equal(t, "Signed in as Pia Pupil", editorWho(t, tabCtx))
	assert.Len(t, ta.sim.Users("pupil@school.example"), 1, "one platform user for two launches")
	assert.NotContains(t, ta.logs.String(), "LTI launch refused")
}

// openFramedInNewTab finds the bridge's launch page (at bridge) inside
// the LMS's frame in tab, clicks its button, and returns the new tab it
// opens. A frame from another site is a target of its own (another
// process); one from the same site (the demo's LMS) is reached through
// the frame element's document. logs is printed when the page does not
// come; shot names the screenshot of the framed page.
func openFramedInNewTab(t *testing.T, tab context.Context, bridge string, logs func() string, shot string) context.Context {
	t.Helper()
	var frameCtx context.Context // the frame's target, when it has one
	var button *chromedp.Node    // else the button, inside the frame element's document
	var seen string
	require.Eventually(t, func() bool {
		infos, err := chromedp.Targets(tab)
		if err != nil {
			return false
		}
		for _, info := range infos {
			if info.Type == "iframe" && strings.HasPrefix(info.URL, bridge+"/lti/launch") {
				ctx, cancel := chromedp.NewContext(tab, chromedp.WithTargetID(info.TargetID))
				t.Cleanup(cancel)
				label, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("open-editor-tab") || {}).textContent || ""`))
				if err == nil && strings.Contains(label, "new tab") {
					frameCtx = ctx
					return true
				}
			}
		}
		qctx, cancel := context.WithTimeout(tab, 500*time.Millisecond)
		defer cancel()
		frames, err := chromedp.Run(qctx, chromedp.Nodes(chromedp.ID("tool"), chromedp.AtLeast(0)))
		if err != nil || len(frames) == 0 || frames[0].ContentDocument == nil {
			return false
		}
		found, err := chromedp.Run(qctx, chromedp.Nodes(chromedp.ID("open-editor-tab"), chromedp.AtLeast(0), chromedp.FromNode(frames[0])))
		if err == nil && len(found) > 0 {
			button = found[0]
			return true
		}
		seen = fmt.Sprint(err)
		return false
	}, 20*time.Second, 50*time.Millisecond, "the launch page inside the LMS's frame: %s\n%s", seen, logs())
	screenshot(t, tab, shot)
	click := chromedp.Click(chromedp.ID("open-editor-tab"))
	clickIn := frameCtx
	if frameCtx == nil {
		click, clickIn = chromedp.MouseClickNode(button), tab
	}
	return clickOpensTab(t, clickIn, tab, click, "the framed page's button opened no tab")
}

// clickOpensTab runs click in ctx and returns the tab (or window) it
// opens, as a context under parent.
func clickOpensTab(t *testing.T, ctx, parent context.Context, click chromedp.Action[chromedp.Void], what string) context.Context {
	t.Helper()
	opened := chromedp.WaitNewTarget(ctx, func(info *target.Info) bool { return info.Type == "page" })
	require.NoError(t, chromedp.Do(ctx, click))
	var id target.ID
	select {
	case id = <-opened:
	case <-time.After(20 * time.Second):
		t.Fatal(what)
	}
	tabCtx, cancel := chromedp.NewContext(parent, chromedp.WithTargetID(id))
	t.Cleanup(cancel)
	return tabCtx
}

// The demo's sample LMS, as `go run .` starts it: its course page's
// learner link opens a new window that lands in the editor as the
// learner; its instructor link inside the course page's frame opens the
// editor in a new tab (asking first, as the learner is signed in in this
// browser). check on the demo's configuration says LTI is ready.
func TestBrowserDemoSampleLMS(t *testing.T) {
	tab := newTab(t)
	cfg, _ := writeConfig(t, "server:\n  addr: 127.0.0.1:0\n")
	cmd, out, errOut := startCLI(t, nil, "--config", cfg)
	bridge := waitForURL(t, out, `ssobridge listening on (\S+)`)
	course := waitForURL(t, out, `sample LMS \(demo[^)]*\) at (\S+)`)

	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(course), chromedp.WaitVisible(chromedp.ID("window-ada"))))
	screenshot(t, tab, "14-sample-lms")
	win := clickOpensTab(t, tab, tab, chromedp.Click(chromedp.ID("window-ada")), "the learner's link opened no window")
	assert.Equal(t, "Signed in as Ada Lovelace", editorWho(t, win))

	// A tab of its own, in front (a tab behind the learner's window is
	// not painted, and neither clicks nor screenshots reach it).
	lms := newTab(t)
	require.NoError(t, chromedp.Do(lms, chromedp.Navigate(course), chromedp.WaitVisible(chromedp.ID("framed-alan")),
		chromedp.Click(chromedp.ID("framed-alan")), chromedp.WaitVisible(chromedp.ID("tool"))))
	alan := openFramedInNewTab(t, lms, bridge, errOut.String, "15-sample-lms-framed")
	confirmSwitch(t, alan, "ada.lovelace@school.example", "alan.turing@school.example")
	assert.Equal(t, "Signed in as Alan Turing", editorWho(t, alan))
	assert.NotContains(t, errOut.String(), "LTI launch refused")
	assert.NotContains(t, errOut.String(), "level=WARN", "the demo's LMS starts and launches without a warning")

	// check beside the running demo: its own emulator and sample LMS on
	// free ports, and LTI ready on loopback.
	code, checked, stderr := runCLI(t, "", nil, "check", "--config", cfg)
	assert.Equal(t, 0, code, "%s\n%s", checked, stderr)
	assert.Contains(t, checked, "Sample LMS (demo) (issuer https://sample-lms.ssobridge.invalid")
	assert.Contains(t, checked, "verdict:   LTI OK (loopback")
	assert.Equal(t, 0, stop(t, cmd))
}

// confirmSwitch waits for the "Switch accounts?" page naming who is
// signed in and who arrives, and confirms it.
func confirmSwitch(t *testing.T, ctx context.Context, signedIn, arriving string) {
	t.Helper()
	var page string
	require.Eventually(t, func() bool {
		p, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("handoff-switch") || {}).textContent || ""`))
		page = p
		return err == nil && p != ""
	}, 30*time.Second, 20*time.Millisecond, "the switch page")
	assert.Contains(t, page, signedIn)
	assert.Contains(t, page, arriving)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("switch-account"))))
}

// editorWho waits until the tab shows the emulator's editor and returns
// whom it says is signed in. After a chain of cross-site posts the tab's
// document is another process's: a script reads it where a DOM query
// would wait on the old one.
func editorWho(t *testing.T, ctx context.Context) string {
	t.Helper()
	var who string
	require.Eventually(t, func() bool {
		w, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("who") || {}).textContent || ""`))
		who = w
		return err == nil && w != ""
	}, 30*time.Second, 20*time.Millisecond, "the editor")
	return who
}

// check names a wrong key, reads each platform's key set and says what to
// enter in the LMS.
func TestCheckLTI(t *testing.T) {
	plat := startLMS(t)
	lms := ltiYAML(plat, plat.JWKSURL())
	cfg, _ := writeConfig(t, "server:\n  public_url: https://sso.partner.example\n"+lms)
	code, out, stderr := runCLI(t, "", nil, "check", "--config", cfg)
	assert.Equal(t, 0, code, out+stderr)
	assert.Contains(t, out, "in the LMS, enter: login URL https://sso.partner.example/lti/login, redirect URI https://sso.partner.example/lti/launch, target link URI https://sso.partner.example/lti/launch, key set URL https://sso.partner.example/lti/jwks")
	assert.Contains(t, out, "Springfield Canvas (issuer "+plat.Issuer+", client ssobridge-client, 1 deployment(s)): key set read; partner admins: Administrator")
	assert.Contains(t, out, "verdict:   LTI OK (https)")

	plat.SetKeysDown(true)
	code, out, _ = runCLI(t, "", nil, "check", "--config", cfg)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "key set UNREADABLE")
	assert.Contains(t, out, "verdict:   LTI NOT READY")
	plat.SetKeysDown(false)

	// Plain http: a trial on loopback is ready (and says so); on every
	// interface, or at a public http URL, launches would fail.
	trial, _ := writeConfig(t, lms)
	code, out, _ = runCLI(t, "", nil, "check", "--config", trial)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "verdict:   LTI OK (loopback: only browsers on this machine reach http://127.0.0.1:8080")
	for _, server := range []string{"server:\n  addr: :8080\n", "server:\n  public_url: http://sso.partner.example\n"} {
		plain, _ := writeConfig(t, server+lms)
		code, out, _ = runCLI(t, "", nil, "check", "--config", plain)
		assert.Equal(t, 1, code, server)
		assert.Contains(t, out, "verdict:   LTI NOT READY\nthe bridge is served over plain http at ", server)
		assert.Contains(t, out, "set server.public_url to the https URL the LMS reaches", server)
	}

	keyFile := filepath.Join(t.TempDir(), "tool.pem")
	require.NoError(t, os.WriteFile(keyFile, []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), 0o600))
	wrongKey, _ := writeConfig(t, "server:\n  public_url: https://sso.partner.example\n"+lms+"  key_file: "+keyFile+"\n")
	code, out, _ = runCLI(t, "", nil, "check", "--config", wrongKey)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "tool key: WRONG")
	assert.Contains(t, out, `a PEM "CERTIFICATE" block, not a private key`)
}

// check reads the LMSs registered from the console (kept in the store)
// as it reads the configured ones: the key set, and who may arrive as
// whom; an unreadable key set of one makes the check fail.
func TestCheckReadsRegisteredLMSs(t *testing.T) {
	plat := startLMS(t)
	cfg, dsn := writeConfig(t, "server:\n  public_url: https://sso.partner.example\nlti:\n  dynamic_registration: true\n")
	st, err := sqlstore.OpenSQLite(t.Context(), dsn, nil)
	require.NoError(t, err)
	require.NoError(t, (&lti.Records{Store: st}).AddPlatform(t.Context(), lti.Registered{Name: "Springfield Moodle", Issuer: plat.Issuer, ClientID: "registered-7",
		DeploymentID: "d1", AuthURL: plat.AuthURL(), JWKSURL: plat.JWKSURL(), EmailDomains: "school.example", CreateAccounts: true,
		RegisteredAt: time.Now(), RegisteredBy: "root@partner.example"}))
	require.NoError(t, st.Close())
	code, out, stderr := runCLI(t, "", nil, "check", "--config", cfg)
	assert.Equal(t, 0, code, out+stderr)
	assert.Contains(t, out, "Springfield Moodle (issuer "+plat.Issuer+", client registered-7, 1 deployment(s)): key set read")
	assert.Contains(t, out, "LTI: Springfield Moodle (registered from the console): accounts of school.example; creates accounts: true")

	plat.SetKeysDown(true)
	code, out, _ = runCLI(t, "", nil, "check", "--config", cfg)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "Springfield Moodle (issuer "+plat.Issuer+", client registered-7): key set UNREADABLE")
}
