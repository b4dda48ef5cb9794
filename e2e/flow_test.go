package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/internal/version"
)

func TestSignInAndLaunchFlow(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	ta.addAccount(t, "ada@example.com", false)
	b := ta.browser(t)

	p := b.get("/")
	assert.Equal(t, http.StatusSeeOther, p.status, "no session: to /login")
	assert.Equal(t, "/login", p.header.Get("Location"))

	p = b.login("ADA@example.com", testPassword)
	require.Equal(t, http.StatusSeeOther, p.status, p.body)
	assert.Equal(t, "/", p.header.Get("Location"))
	var session string
	for _, c := range p.header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "ssobridge_session=") {
			session = c
		}
	}
	assert.Contains(t, session, "HttpOnly")
	assert.Contains(t, session, "SameSite=Lax")
	assert.NotContains(t, session, "Secure", "http public URL: not Secure")

	p = b.get("/")
	require.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, p.body, "Open video editor")
	assert.Contains(t, p.body, "Hello, Ada Lovelace")
	assert.Contains(t, p.body, "never: your editor account will be set up")
	ta.calls()

	p = b.launch()
	require.Equal(t, http.StatusSeeOther, p.status, p.body)
	loc := p.header.Get("Location")
	assert.True(t, strings.HasPrefix(loc, ta.sim.URL+"/api/5/login-token/login/"), loc)
	assert.Equal(t, "no-store", p.header.Get("Cache-Control"))
	assert.Equal(t, "no-referrer", p.header.Get("Referrer-Policy"))
	assert.Equal(t, map[string]int{"list_users": 1, "create_user": 1, "issue_token": 1}, ta.calls(), "new user: GET + POST + token")

	// The browser takes the token to the platform and lands in the editor.
	resp := b.get2(loc)
	assert.Equal(t, http.StatusFound, resp.status)
	editor := b.get2(ta.sim.URL + resp.header.Get("Location"))
	assert.Contains(t, editor.body, "Signed in as Ada Lovelace")
	assert.Equal(t, map[string]int{"exchange": 1}, ta.calls())

	p = b.launch("return_to", "/editor/projects?id=7")
	require.Equal(t, http.StatusSeeOther, p.status)
	assert.Equal(t, map[string]int{"issue_token": 1}, ta.calls(), "returning user: token only")
	resp = b.get2(p.header.Get("Location"))
	assert.Equal(t, "/editor/projects?id=7", resp.header.Get("Location"), "return_to becomes redirectTo")

	p = b.get("/")
	assert.Contains(t, p.body, "linked (platform user 9007199254740993)")
	assert.NotContains(t, p.body, "never: your editor")
	assert.Len(t, ta.sim.Users("ada@example.com"), 1)
}

// get2 fetches an absolute URL with the same cookie jar.
func (b *browser) get2(u string) page {
	req, _ := http.NewRequest("GET", u, nil)
	return b.do(req)
}

func TestExistingUserFoundOnALaterPage(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	// 120 decoys match the substring query before the real user does.
	for i := range 120 {
		_, err := ta.sim.AddUser("D", "Ecoy", fmt.Sprintf("ada@example.com.d%d.test", i))
		require.NoError(t, err)
	}
	real, err := ta.sim.AddUser("Ada", "L", "Ada@Example.com")
	require.NoError(t, err)
	ta.addAccount(t, "ada@example.com", false)
	b := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, b.login("ada@example.com", testPassword).status)
	ta.calls()
	p := b.launch()
	require.Equal(t, http.StatusSeeOther, p.status, p.body)
	assert.Equal(t, map[string]int{"list_users": 2, "issue_token": 1}, ta.calls(), "two pages of 100, no create")
	l, err := ta.store.LinkFor(t.Context(), 1)
	require.NoError(t, err)
	assert.Equal(t, real.ID, l.PlatformUserID)
}

func TestFailedLoginAnswersAlike(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	ta.addAccount(t, "ada@example.com", false)
	disabled := ta.addAccount(t, "off@example.com", false)
	require.NoError(t, ta.store.SetDisabled(t.Context(), disabled.ID, true))

	normalize := func(p page, email string) string {
		return strings.ReplaceAll(csrfRE.ReplaceAllString(p.body, ""), email, "EMAIL")
	}
	b := ta.browser(t)
	wrong := b.login("ada@example.com", "wrong password")
	unknown := b.login("nobody@example.com", "wrong password")
	off := b.login("off@example.com", testPassword)
	for _, p := range []page{wrong, unknown, off} {
		assert.Equal(t, http.StatusUnauthorized, p.status)
		assert.Contains(t, p.body, "Email or password is incorrect.")
	}
	assert.Equal(t, normalize(wrong, "ada@example.com"), normalize(unknown, "nobody@example.com"), "same page for unknown email and wrong password")
	assert.Equal(t, normalize(wrong, "ada@example.com"), normalize(off, "off@example.com"))

	empty := b.post("/login", url.Values{"_csrf": {b.csrf("/login")}, "email": {""}, "password": {""}})
	assert.Equal(t, http.StatusBadRequest, empty.status)
	assert.Equal(t, http.StatusSeeOther, b.get("/").status, "still signed out")
}

func TestCSRF(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	ta.addAccount(t, "ada@example.com", false)
	b := ta.browser(t)
	tok := b.csrf("/login")
	form := url.Values{"email": {"ada@example.com"}, "password": {testPassword}}

	p := b.post("/login", form)
	assert.Equal(t, http.StatusBadRequest, p.status, "no token")
	assert.Contains(t, p.body, `data-class="csrf"`)

	form.Set("_csrf", "wrong-token")
	p = b.post("/login", form)
	assert.Equal(t, http.StatusForbidden, p.status, "wrong token")
	assert.Contains(t, p.body, `data-class="csrf"`)

	form.Set("_csrf", tok)
	p = b.post("/login", form, "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, p.status, "cross-site, even with the token")
	assert.Contains(t, p.body, `data-class="csrf"`)
	assert.Equal(t, http.StatusSeeOther, b.get("/").status, "none of them signed in")

	p = b.post("/login", form)
	assert.Equal(t, http.StatusSeeOther, p.status, "right token")
	assert.Equal(t, "/", p.header.Get("Location"))

	// Launch is protected too.
	ta.calls()
	p = b.post("/launch", url.Values{"_csrf": {"nope"}})
	assert.Equal(t, http.StatusForbidden, p.status)
	assert.Empty(t, ta.calls(), "nothing reached the platform")
}

func TestSessionRules(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	acct := ta.addAccount(t, "ada@example.com", false)
	b := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, b.login("ada@example.com", testPassword).status)

	// Launch without a session: the session-expired page, nothing launched.
	anon := ta.browser(t)
	tok := anon.csrf("/login")
	p := anon.post("/launch", url.Values{"_csrf": {tok}})
	assert.Equal(t, http.StatusUnauthorized, p.status)
	assert.Contains(t, p.body, `data-class="session-expired"`)

	// Logout ends the session, and a copy of the old cookie is void too.
	u, _ := url.Parse(ta.srv.URL)
	old := b.c.Jar.Cookies(u)
	p = b.post("/logout", url.Values{"_csrf": {b.csrf("/")}})
	assert.Equal(t, http.StatusSeeOther, p.status)
	assert.Equal(t, "/login?signed_out=1", p.header.Get("Location"))
	assert.Contains(t, b.get("/login?signed_out=1").body, "You have been signed out.")
	assert.Equal(t, http.StatusSeeOther, b.get("/").status)
	thief := ta.browser(t)
	thief.c.Jar.SetCookies(u, old)
	p = thief.get("/")
	assert.Equal(t, http.StatusSeeOther, p.status)
	assert.Equal(t, "/login?expired=1", p.header.Get("Location"), "a replayed cookie is expired")

	// Disabling the account ends its sessions at once.
	c := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, c.login("ada@example.com", testPassword).status)
	require.Equal(t, http.StatusOK, c.get("/").status)
	require.NoError(t, ta.store.SetDisabled(t.Context(), acct.ID, true))
	assert.Equal(t, http.StatusSeeOther, c.get("/").status)

	// A tampered cookie is treated as signed out.
	d := ta.browser(t)
	d.c.Jar.SetCookies(u, []*http.Cookie{{Name: "ssobridge_session", Value: "tampered" + old[0].Value}})
	assert.Equal(t, "/login?expired=1", d.get("/").header.Get("Location"))
}

func TestRoutesAndHeaders(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	ta.addAccount(t, "ada@example.com", false)
	b := ta.browser(t)

	p := b.get("/healthz")
	assert.Equal(t, http.StatusOK, p.status)
	assert.JSONEq(t, `{"status":"ok"}`, p.body)

	p = b.get("/readyz")
	assert.Equal(t, http.StatusOK, p.status)
	assert.JSONEq(t, `{"ready":true,"store":"ok","platform":"ok","portal":"ok","version":"`+version.Get().Short()+`"}`, p.body, "the demo's sample portal is a way in")

	p = b.get("/static/app.css")
	assert.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, p.header.Get("Content-Type"), "text/css")

	p = b.get("/login")
	assert.Equal(t, http.StatusOK, p.status)
	csp := p.header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "frame-ancestors 'none'")
	assert.Contains(t, csp, "form-action 'self' "+ta.sim.URL, "the launch redirect may land on the platform")
	assert.NotContains(t, csp, "unsafe-inline")
	assert.NotContains(t, p.body, "<script")
	assert.Equal(t, "nosniff", p.header.Get("X-Content-Type-Options"))
	assert.Equal(t, "DENY", p.header.Get("X-Frame-Options"))
	assert.Regexp(t, `^[0-9a-f]{16}$`, p.header.Get("X-Request-Id"))
	req, _ := http.NewRequest("GET", ta.srv.URL+"/login", nil)
	req.Header.Set("X-Request-Id", "forged-by-the-client")
	forged := b.do(req)
	assert.Regexp(t, `^[0-9a-f]{16}$`, forged.header.Get("X-Request-Id"), "a client's id is not adopted")
	assert.Contains(t, p.body, `<label for="email">`)
	assert.Contains(t, p.body, `<label for="password">`)

	p = b.get("/no/such/page")
	assert.Equal(t, http.StatusNotFound, p.status)
	assert.Contains(t, p.body, `data-class="not-found"`)

	require.Equal(t, http.StatusSeeOther, b.login("ada@example.com", testPassword).status)
	p = b.get("/admin/")
	assert.Equal(t, http.StatusForbidden, p.status, "not an admin")
	assert.Contains(t, p.body, `data-class="forbidden"`)

	require.Equal(t, http.StatusSeeOther, b.launch().status)
	p = b.get("/metrics")
	assert.Equal(t, http.StatusOK, p.status)
	for _, m := range []string{`ssobridge_launches_total{outcome="ok",path="created"} 1`, `ssobridge_platform_requests_total{endpoint="issue_token",status="200"} 1`,
		`ssobridge_logins_total{outcome="ok"} 1`, "ssobridge_launch_duration_seconds_bucket", "ssobridge_platform_request_duration_seconds_bucket"} {
		assert.Contains(t, p.body, m)
	}

	big := b.post("/launch", url.Values{"_csrf": {b.csrf("/")}, "return_to": {strings.Repeat("a", 2<<20)}})
	assert.Equal(t, http.StatusRequestEntityTooLarge, big.status, "request body limit")

	p = b.post("/launch", url.Values{"_csrf": {b.csrf("/")}, "return_to": {"https://evil.example/"}})
	assert.Equal(t, http.StatusBadRequest, p.status)
	assert.Contains(t, p.body, `data-class="bad-request"`)
}

func TestPlatformErrorPages(t *testing.T) {
	tests := []struct {
		name   string
		opts   testOptions
		fault  func(sim *platformsim.Server)
		status int
		class  string
		text   string
	}{
		{"member credential: 403", testOptions{simConfig: func(c *platformsim.Config) { c.Credentials[0].Admin = false }}, nil,
			http.StatusBadGateway, "platform-forbidden", "not an admin of the Instance"},
		{"wrong secret: 401", testOptions{client: func(o *apiclient.Options) { o.Credentials.APISecret = "not-the-secret" }}, nil,
			http.StatusBadGateway, "platform-unauthorized", "API secret"},
		{"platform clock 10 min off", testOptions{}, func(sim *platformsim.Server) { sim.SetClockOffset(600e9) },
			http.StatusBadGateway, "platform-clock-skew", "10m0s"},
		{"429 always", testOptions{}, func(sim *platformsim.Server) {
			sim.InjectFault(platformsim.EndpointListUsers, platformsim.Fault{Status: 429, RetryAfter: 7})
		}, http.StatusServiceUnavailable, "platform-unavailable", "about 7 seconds"},
		{"5xx always", testOptions{}, func(sim *platformsim.Server) {
			sim.InjectFault(platformsim.EndpointListUsers, platformsim.Fault{Status: 502})
		}, http.StatusServiceUnavailable, "platform-unavailable", "Nothing was lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ta := startTestApp(t, tt.opts)
			ta.addAccount(t, "root@example.com", true)
			ta.addAccount(t, "ada@example.com", false)
			admin, user := ta.browser(t), ta.browser(t)
			require.Equal(t, http.StatusSeeOther, admin.login("root@example.com", testPassword).status)
			require.Equal(t, http.StatusSeeOther, user.login("ada@example.com", testPassword).status)
			if tt.fault != nil {
				tt.fault(ta.sim.Server)
			}
			p := admin.launch()
			assert.Equal(t, tt.status, p.status)
			assert.Contains(t, p.body, `data-class="`+tt.class+`"`)
			assert.Contains(t, p.body, tt.text, "the admin reads the cause")
			assert.Contains(t, p.body, `id="request-id"`)

			p = user.launch()
			assert.Equal(t, tt.status, p.status)
			assert.Contains(t, p.body, `data-class="`+tt.class+`"`)
			assert.Contains(t, p.body, `id="request-id"`, "the end user has a reference to quote")
			assert.NotContains(t, p.body, "For the partner admin")
			assert.NotContains(t, p.body, "SSOBRIDGE_")
			assert.Empty(t, ta.sim.Users("ada@example.com"), "no user created")
		})
	}
}

// Removing the data folder under a running bridge makes it unready at once
// (the open database would otherwise take writes into an unlinked file).
func TestReadyzNoticesTheDataFolderIsGone(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	b := ta.browser(t)
	require.Equal(t, http.StatusOK, b.get("/readyz").status)
	require.NoError(t, os.RemoveAll(ta.data))
	p := b.get("/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, p.status)
	assert.JSONEq(t, `{"ready":false,"store":"unavailable","platform":"ok","portal":"ok","version":"`+version.Get().Short()+`"}`, p.body)
}
