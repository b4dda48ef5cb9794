package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

var (
	ltiLearner    = ltiplatformtest.User{Sub: "lms-sub-1", Email: "pupil@school.example", GivenName: "Pia", FamilyName: "Pupil", Roles: []string{ltiplatformtest.RoleLearner}}
	ltiInstructor = ltiplatformtest.User{Sub: "lms-sub-2", Email: "teacher@school.example", GivenName: "Tom", FamilyName: "Teacher", Roles: []string{ltiplatformtest.RoleInstructor}}
	ltiAdmin      = ltiplatformtest.User{Sub: "lms-sub-3", Email: "head@school.example", GivenName: "Hana", FamilyName: "Head", Roles: []string{ltiplatformtest.RoleAdministrator}}
)

// ltiSetup is the app with LTI on, registered at a platform of its own
// (the fixture's clock set to the present: the platform signs with it).
func ltiSetup(t *testing.T, tweak ...func(*lti.Platform)) (*fixture, *ltiplatformtest.Platform, *lti.Tool) {
	t.Helper()
	f := setup(t)
	f.clock.Set(time.Now())
	plat := ltiplatformtest.Start(t, f.srv.URL)
	plat.SetClock(f.clock.Now)
	for hint, u := range map[string]ltiplatformtest.User{"learner": ltiLearner, "instructor": ltiInstructor, "admin": ltiAdmin} {
		plat.AddUser(hint, u)
	}
	p := lti.Platform{Name: "Springfield LMS", Issuer: plat.Issuer, ClientID: plat.ClientID, DeploymentIDs: []string{plat.DeploymentID},
		AuthURL: plat.AuthURL(), JWKSURL: plat.JWKSURL(), AdminRoles: []string{"Administrator"}, CreateAccounts: true, Key: "lti.platforms[0]"}
	for _, fn := range tweak {
		fn(&p)
	}
	tool := lti.New(lti.Config{Platforms: []lti.Platform{p}, UseOnce: f.accts.UseOnce, Now: f.clock.Now, HTTPClient: plat.Server.Client()})
	f.reconfigure(func(d *Deps) {
		withWay(d, &lti.Way{LMS: tool, KeySet: []byte(`{"keys":[]}`), Sources: map[string]signin.Source{lti.SourceKey(p.Issuer, p.ClientID): {
			ID: lti.SourceID(p.Issuer, p.ClientID), Name: "LTI: " + p.Name, Key: "lti.platforms[0]",
			CreateAccounts: p.CreateAccounts, AdminAuthority: len(p.AdminRoles) > 0, EmailDomains: testDomains}}})
	})
	return f, plat, tool
}

// lmsLogin posts the course page's login form to the bridge as the LMS's
// page does (cross-site), and returns the bridge's answer.
func lmsLogin(c *client, plat *ltiplatformtest.Platform, hint string) *response {
	return c.post("/lti/login", plat.LoginForm(hint), "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
}

// ltiLaunchAs runs a whole launch of the platform user hint in browser c
// and returns the bridge's answer to the posted id_token.
func ltiLaunchAs(t *testing.T, c *client, plat *ltiplatformtest.Platform, hint string) *response {
	t.Helper()
	r := lmsLogin(c, plat, hint)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	return c.hop(c.post("/lti/launch", plat.Answer(t, r.header.Get("Location")), "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL))
}

func TestLTILaunchOpensTheEditor(t *testing.T) {
	f, plat, _ := ltiSetup(t)
	c := f.client()
	r := lmsLogin(c, plat, "learner")
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	to, err := url.Parse(r.header.Get("Location"))
	require.NoError(t, err)
	assert.Equal(t, plat.AuthURL(), to.Scheme+"://"+to.Host+to.Path)
	assert.Equal(t, f.srv.URL+"/lti/launch", to.Query().Get("redirect_uri"))
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
	assert.NotEmpty(t, c.cookie(lti.FlowCookie), "the login is bound to this browser's key")

	r = c.post("/lti/launch", plat.Answer(t, to.String()), "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	assert.True(t, strings.HasPrefix(r.header.Get("Location"), "/arrive?grant="), "the cross-site post goes on where the session cookie is sent")
	assert.Equal(t, http.StatusBadRequest, f.client().get(r.header.Get("Location")).status, "another browser (without the arrival's cookie) is not signed in by the link")
	r = c.hop(r)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	assert.Equal(t, "https://platform.example/api/5/login-token/login/TOKEN-pupil@school.example", r.header.Get("Location"), "into the editor")
	acct, err := f.accts.AccountByEmail(t.Context(), "pupil@school.example")
	require.NoError(t, err)
	assert.Equal(t, "Pia", acct.FirstName)
	assert.False(t, acct.Admin, "a learner is no partner admin")
	id, err := f.accts.AccountOfIdentity(t.Context(), lti.SourceID(plat.Issuer, plat.ClientID), "lms-sub-1")
	require.NoError(t, err)
	assert.Equal(t, acct.ID, id, "linked to the LMS user")
	assert.Equal(t, http.StatusOK, c.get("/").status, "signed in")

	t.Run("the same form posted again", func(t *testing.T) {
		other := f.client()
		r := other.post("/lti/launch", url.Values{"id_token": {plat.Issued()[0]}, "state": {to.Query().Get("state")}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Equal(t, "lti-stale", r.class())
		assert.Empty(t, other.cookie("ssobridge_session"), "no session")
	})
}

func TestLTIInstructorAndAdminRoles(t *testing.T) {
	f, plat, _ := ltiSetup(t)
	r := ltiLaunchAs(t, f.client(), plat, "instructor")
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	teacher, err := f.accts.AccountByEmail(t.Context(), "teacher@school.example")
	require.NoError(t, err)
	assert.False(t, teacher.Admin, "a teacher is no partner admin")

	// Linked now: a later launch with the admin role grants it, one
	// without takes it away (the platform's admin_roles hold the role of
	// the accounts it admits).
	promoted := ltiInstructor
	promoted.Roles = append([]string{ltiplatformtest.RoleAdministrator}, ltiInstructor.Roles...)
	plat.AddUser("instructor", promoted)
	require.Equal(t, http.StatusSeeOther, ltiLaunchAs(t, f.client(), plat, "instructor").status)
	teacher, err = f.accts.AccountByID(t.Context(), teacher.ID)
	require.NoError(t, err)
	assert.True(t, teacher.Admin, "granted on a returning launch")
	r = ltiLaunchAs(t, f.client(), plat, "admin")
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	head, err := f.accts.AccountByEmail(t.Context(), "head@school.example")
	require.NoError(t, err)
	assert.True(t, head.Admin, "admin_roles make a partner admin")

	plat.AddUser("instructor", ltiInstructor)
	require.Equal(t, http.StatusSeeOther, ltiLaunchAs(t, f.client(), plat, "instructor").status)
	teacher, err = f.accts.AccountByID(t.Context(), teacher.ID)
	require.NoError(t, err)
	assert.False(t, teacher.Admin, "a launch without the institution role takes it away (another admin is left)")

	// A course's administrator, a learner's administrator sub-role and a
	// vendor's role ending in #Administrator hold no institution role.
	courseAdmin := ltiInstructor
	courseAdmin.Roles = []string{"http://purl.imsglobal.org/vocab/lis/v2/membership#Administrator",
		"http://purl.imsglobal.org/vocab/lis/v2/membership/Learner#Administrator", "https://vendor.example/roles#Administrator"}
	plat.AddUser("instructor", courseAdmin)
	require.Equal(t, http.StatusSeeOther, ltiLaunchAs(t, f.client(), plat, "instructor").status)
	teacher, err = f.accts.AccountByID(t.Context(), teacher.ID)
	require.NoError(t, err)
	assert.False(t, teacher.Admin, "context and vendor roles make no partner admin")
}

// A returning user whose address changed in the LMS keeps the account the
// first launch linked: one account, found by (issuer, sub).
func TestLTIReturningUserKeepsOneAccount(t *testing.T) {
	f, plat, _ := ltiSetup(t)
	require.Equal(t, http.StatusSeeOther, ltiLaunchAs(t, f.client(), plat, "learner").status)
	first, err := f.accts.AccountByEmail(t.Context(), "pupil@school.example")
	require.NoError(t, err)
	moved := ltiLearner
	moved.Email = "pia.pupil@school.example"
	plat.AddUser("learner", moved)
	r := ltiLaunchAs(t, f.client(), plat, "learner")
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	assert.Equal(t, "https://platform.example/api/5/login-token/login/TOKEN-pupil@school.example", r.header.Get("Location"))
	_, err = f.accts.AccountByEmail(t.Context(), "pia.pupil@school.example")
	assert.ErrorIs(t, err, store.ErrNotFound, "no second account")
	calls := f.launcher.made()
	require.Len(t, calls, 2)
	assert.Equal(t, first.ID, calls[1].account.ID)
}

// A target_link_uri of the /open form lands at its path in the editor.
func TestLTIDeepLink(t *testing.T) {
	f, plat, _ := ltiSetup(t)
	plat.Target = f.srv.URL + "/open?return_to=" + url.QueryEscape("/editor/projects?id=7")
	r := ltiLaunchAs(t, f.client(), plat, "learner")
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	calls := f.launcher.made()
	require.Len(t, calls, 1)
	assert.Equal(t, "/editor/projects?id=7", calls[0].returnTo)
}

// A framed launch gets a page only the LMS may frame, whose button opens
// the editor in a new tab, once.
func TestLTIFramedLaunch(t *testing.T) {
	f, plat, _ := ltiSetup(t)
	plat.SetFramed(true)
	// The course page is on another host than the authorization endpoint
	// (as Canvas's are): the signed return_url names it.
	plat.Edit(func(m map[string]any) {
		m["https://purl.imsglobal.org/spec/lti/claim/launch_presentation"] = map[string]any{"document_target": "iframe",
			"return_url": "https://springfield.lms.example/courses/7/external_content/success"}
	})
	c := f.client()
	r := ltiLaunchAs(t, c, plat, "learner")
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.Contains(t, r.header.Get("Content-Security-Policy"), "frame-ancestors "+plat.Server.URL+" https://springfield.lms.example;")
	assert.NotContains(t, r.header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	assert.Empty(t, r.header.Get("X-Frame-Options"))
	btn := r.doc.Find("#lti-framed form")
	assert.Equal(t, "_blank", btn.AttrOr("target", ""))
	assert.Equal(t, "/lti/continue", btn.AttrOr("action", ""))
	assert.Empty(t, f.launcher.made(), "nothing launched inside the frame")

	other := f.client().get("/login")
	assert.Contains(t, other.header.Get("Content-Security-Policy"), "frame-ancestors 'none'", "every other page refuses to be framed")
	assert.Equal(t, "DENY", other.header.Get("X-Frame-Options"))

	// The new tab: a first-party request of its own, no earlier cookie.
	tab := f.client()
	form := url.Values{"continuation": {r.form("continuation")}}
	r2 := tab.post("/lti/continue", form, "Origin", f.srv.URL, "Sec-Fetch-Site", "same-origin")
	require.Equal(t, http.StatusSeeOther, r2.status, r2.body)
	assert.Equal(t, "https://platform.example/api/5/login-token/login/TOKEN-pupil@school.example", r2.header.Get("Location"))
	assert.Equal(t, http.StatusOK, tab.get("/").status, "signed in in the new tab")

	again := f.client().post("/lti/continue", form, "Origin", f.srv.URL, "Sec-Fetch-Site", "same-origin")
	assert.Equal(t, http.StatusBadRequest, again.status, "the button works once")
	assert.Equal(t, "lti-stale", again.class())

	cross := f.client().post("/lti/continue", form, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, cross.status, "another site cannot post it")
}

func TestLTIRefusalPages(t *testing.T) {
	f, plat, _ := ltiSetup(t, func(p *lti.Platform) {})
	fromCourse := map[string]bool{"another browser's state": true, "no email shared": true, "an expired id_token": true, "another audience": true,
		"a key the LMS changed moments after the set was read": true, "the key set down": true}
	for _, tc := range []struct {
		name   string
		do     func(c *client) *response
		status int
		class  string
		says   string
	}{
		{"an unregistered issuer", func(c *client) *response {
			q := plat.LoginForm("learner")
			q.Set("iss", "https://lms.other.example")
			return c.post("/lti/login", q)
		}, 400, "lti-refused", "not registered"},
		{"an unregistered deployment", func(c *client) *response {
			q := plat.LoginForm("learner")
			q.Set("lti_deployment_id", "deployment-9")
			return c.get("/lti/login?" + q.Encode())
		}, 400, "lti-refused", "lti.platforms[0].deployment_ids"},
		{"a launch with no login in this browser", func(c *client) *response {
			return c.post("/lti/launch", url.Values{"id_token": {"x.y.z"}, "state": {"forged"}})
		}, 400, "lti-stale", "cannot be SameSite=None (browsers require Secure, that is https)"},
		{"another browser's state", func(c *client) *response {
			r := lmsLogin(f.client(), plat, "learner")
			form := plat.Answer(t, r.header.Get("Location"))
			lmsLogin(c, plat, "learner") // this browser has a login of its own
			return c.post("/lti/launch", form)
		}, 400, "lti-stale", ""},
		{"no email shared", func(c *client) *response {
			plat.Edit(func(m map[string]any) { delete(m, "email") })
			defer plat.Edit(nil)
			return ltiLaunchAs(t, c, plat, "learner")
		}, 400, "lti-no-email", "Privacy Level"},
		{"an expired id_token", func(c *client) *response {
			plat.Edit(func(m map[string]any) { m["exp"] = time.Now().Add(-time.Hour).Unix() })
			defer plat.Edit(nil)
			return ltiLaunchAs(t, c, plat, "learner")
		}, 400, "lti-clock", "NTP"},
		{"another audience", func(c *client) *response {
			plat.Edit(func(m map[string]any) { m["aud"] = "another-tool" })
			defer plat.Edit(nil)
			return ltiLaunchAs(t, c, plat, "learner")
		}, 400, "lti-refused", "audience"},
		{"a key the LMS changed moments after the set was read", func(c *client) *response {
			plat.RotateKey()
			return ltiLaunchAs(t, c, plat, "learner")
		}, 503, "lti-key-changed", "try again in a minute"},
		{"the key set down", func(c *client) *response {
			plat.SetKeysDown(true)
			defer plat.SetKeysDown(false)
			plat.RotateKey() // an unknown kid: the set must be read again
			f.clock.Advance(2 * time.Minute)
			return ltiLaunchAs(t, c, plat, "learner")
		}, 503, "lti-unavailable", "it answered with an error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := f.client()
			r := tc.do(c)
			assert.Equal(t, tc.status, r.status, r.body)
			assert.Equal(t, tc.class, r.class())
			if tc.says != "" {
				assert.Contains(t, r.body, tc.says)
			}
			assert.Empty(t, c.cookie("ssobridge_session"), "never a session")
			// A launch the platform signed carries its course page as
			// return_url: the page's way back, not the bridge's start page.
			if fromCourse[tc.name] {
				assert.Equal(t, plat.URL()+"/course", r.doc.Find("#way-back").AttrOr("href", ""))
				assert.Equal(t, "Back to the course", r.text("#way-back"))
			} else {
				assert.Empty(t, r.doc.Find("#way-back").Nodes)
			}
		})
	}
	assert.Contains(t, f.logs.String(), `msg="LTI launch refused"`)
	assert.Contains(t, f.logs.String(), "answered 503", "the log keeps what the page does not say")
	assert.NotContains(t, f.logs.String(), "eyJ", "no id_token in the logs")
}

// Unreadable at start: launches get the 503 page, /readyz says degraded
// (and stays ready), and the first launch after the set is back works.
func TestLTIKeySetDownAtStart(t *testing.T) {
	f, plat, tool := ltiSetup(t)
	plat.SetKeysDown(true)
	require.Error(t, tool.Refresh(t.Context()))
	var st ReadyStatus
	r := f.client().get("/readyz")
	require.NoError(t, json.Unmarshal([]byte(r.body), &st))
	assert.Equal(t, "degraded", st.Ways["lti"])

	f.clock.Advance(10 * time.Second)
	c := f.client()
	r = ltiLaunchAs(t, c, plat, "learner")
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.Equal(t, "lti-unavailable", r.class())
	assert.Empty(t, c.cookie("ssobridge_session"))

	plat.SetKeysDown(false)
	f.clock.Advance(10 * time.Second)
	r = ltiLaunchAs(t, f.client(), plat, "learner")
	assert.Equal(t, http.StatusSeeOther, r.status, r.body)
	r = f.client().get("/readyz")
	require.NoError(t, json.Unmarshal([]byte(r.body), &st))
	assert.Equal(t, "ok", st.Ways["lti"])
}

func TestLTIConfigAndKeys(t *testing.T) {
	f, _, _ := ltiSetup(t)
	c := f.client()
	r := c.get("/lti/config")
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, f.srv.URL+"/lti/login", r.text("#lti-login-url"))
	assert.Equal(t, f.srv.URL+"/lti/launch", r.text("#lti-redirect-uri"))
	assert.Equal(t, f.srv.URL+"/lti/jwks", r.text("#lti-jwks-url"))
	assert.NotContains(t, r.body, "Springfield LMS", "the registered schools are not anyone's to list")
	r = c.get("/lti/config", "Accept", "application/json")
	var cfg map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.body), &cfg))
	assert.Equal(t, f.srv.URL+"/lti/login", cfg["login_url"])
	assert.Nil(t, cfg["platforms"])

	f.account("boss@example.com", true)
	f.account("pupil@example.com", false)
	pupil := f.client()
	pupil.signIn("pupil@example.com")
	assert.NotContains(t, pupil.get("/lti/config").body, "Springfield LMS", "nor a user's")
	admin := f.client()
	admin.signIn("boss@example.com")
	assert.Contains(t, admin.get("/lti/config").body, "Springfield LMS", "a partner admin sees them")
	r = admin.get("/lti/config", "Accept", "application/json")
	require.NoError(t, json.Unmarshal([]byte(r.body), &cfg))
	assert.Equal(t, []any{"Springfield LMS"}, cfg["platforms"])
	r = c.get("/lti/jwks")
	assert.Equal(t, `{"keys":[]}`, r.body)
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))

	off := setup(t)
	for _, p := range []string{"/lti/config", "/lti/jwks", "/lti/login"} {
		assert.Equal(t, http.StatusNotFound, off.client().get(p).status, "%s without LTI", p)
	}
}

// Over https the login's cookie crosses the LMS's posts (SameSite=None)
// and is partitioned by the top-level site, so a launch inside the LMS's
// frame keeps it where third-party cookies are dropped.
func TestLTIFlowCookie(t *testing.T) {
	f, plat, _ := ltiSetup(t)
	f.reconfigure(func(d *Deps) { d.Sessions.Secure = true })
	r := lmsLogin(f.client(), plat, "learner")
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	ck := setCookieHeader(r, "__Host-"+lti.FlowCookie)
	require.NotEmpty(t, ck)
	for _, attr := range []string{"SameSite=None", "Secure", "HttpOnly", "Partitioned", "Path=/"} {
		assert.Contains(t, ck, attr)
	}

	// A launch over plain http to a bridge whose cookies are Secure came
	// without the cookie: the stale page's detail says why, not "another
	// browser"; through a proxy that ended TLS, it does not.
	r = f.client().post("/lti/launch", url.Values{"id_token": {"x.y.z"}, "state": {"s"}})
	assert.Equal(t, "lti-stale", r.class())
	assert.Contains(t, r.text("#error-detail"), "browsers do not send Secure cookies over plain http")
	r = f.client().post("/lti/launch", url.Values{"id_token": {"x.y.z"}, "state": {"s"}}, "X-Forwarded-Proto", "https")
	assert.Equal(t, "lti-stale", r.class())
	assert.NotContains(t, r.body, "over plain http")
}

// Any site can post an error to /lti/launch (it must be exempt from the
// cross-site guards): the page says in the bridge's words what the LMS
// answered, and shows the LMS's description only quoted and labelled as
// the LMS's, bounded.
func TestLTIErrorTextIsNeverTheBridgesOwn(t *testing.T) {
	f, plat, _ := ltiSetup(t)
	c := f.client()
	r := lmsLogin(c, plat, "learner")
	require.Equal(t, http.StatusSeeOther, r.status)
	to, _ := url.Parse(r.header.Get("Location"))
	notice := "SECURITY NOTICE: your account is locked, call +1 555 0100" + strings.Repeat(" now", 100000)
	r = c.post("/lti/launch", url.Values{"state": {to.Query().Get("state")}, "error": {"login_required"}, "error_description": {notice}},
		"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Equal(t, "lti-refused", r.class())
	detail := r.text("#error-detail")
	assert.Contains(t, detail, `the LMS answered with the error code "login_required"; the LMS's own description: "SECURITY NOTICE`, detail)
	assert.Contains(t, detail, `bytes)`, "bounded, with its length")
	assert.Less(t, len(r.body), 8*1024)
	assert.NotContains(t, r.doc.Find("h1, .lead").Text(), "SECURITY NOTICE", "never in the bridge's own words")
}

// Another site can make a browser start LTI logins at will (every login
// arrives cross-site): ten of them between a person's login and its
// launch leave the person's login intact, and none of them can be
// finished by another browser.
func TestLTIHostileLoginsDoNotPushOutThePersons(t *testing.T) {
	f, plat, _ := ltiSetup(t)
	c := f.client()
	r := lmsLogin(c, plat, "learner")
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	own := r.header.Get("Location")
	var hostile []string
	for range 10 {
		h := lmsLogin(c, plat, "instructor") // another site's auto-submitted form
		require.Equal(t, http.StatusSeeOther, h.status)
		hostile = append(hostile, h.header.Get("Location"))
	}
	r = c.hop(c.post("/lti/launch", plat.Answer(t, own), "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL))
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	assert.Equal(t, "https://platform.example/api/5/login-token/login/TOKEN-pupil@school.example", r.header.Get("Location"), "the person's login survived")

	other := f.client()
	r = other.post("/lti/launch", plat.Answer(t, hostile[0]), "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
	assert.Equal(t, http.StatusBadRequest, r.status, "a login is finished only in the browser that started it")
	assert.Equal(t, "lti-stale", r.class())
}

// A refused login from an issuer no platform registers is audited as
// from an unknown platform (it read "LTI: : lti: …").
func TestLTIRefusalOfAnUnknownPlatformIsAuditedSo(t *testing.T) {
	f, plat, _ := ltiSetup(t)
	q := plat.LoginForm("learner")
	q.Set("iss", "https://lms.other.example")
	require.Equal(t, http.StatusBadRequest, f.client().post("/lti/login", q).status)
	evs := f.accts.eventsOf(store.KindLogin)
	require.NotEmpty(t, evs)
	assert.True(t, strings.HasPrefix(evs[0].Detail, "LTI (unknown platform): "), evs[0].Detail)
}

// The admission's own page (an address outside the LMS's email_domains)
// keeps the way back to the course, as the LMS's pages do.
func TestLTIAdmissionRefusalLeadsBackToTheCourse(t *testing.T) {
	f, plat, _ := ltiSetup(t)
	plat.Edit(func(m map[string]any) { m["email"] = "someone@elsewhere.example" })
	c := f.client()
	r := ltiLaunchAs(t, c, plat, "learner")
	assert.Equal(t, http.StatusForbidden, r.status)
	assert.Equal(t, "arrival-refused", r.class())
	assert.Equal(t, plat.URL()+"/course", r.doc.Find("#way-back").AttrOr("href", ""))
	assert.Equal(t, "Back to the course", r.text("#way-back"))
	assert.NotContains(t, r.text("#error-page .meta"), "Back to the start page", "not the bridge's start page, where a pupil has no password")
}
