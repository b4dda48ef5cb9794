package e2e

import (
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/internal/fakeclock"
)

func TestRegulationBansAfterFailures(t *testing.T) {
	clk := fakeclock.New(time.Now())
	ta := startTestApp(t, testOptions{now: clk.Now, yaml: "regulation:\n  max_retries: 3\n  max_retries_per_ip: 10\n  find_time: 5m\n  ban_time: 15m\n"})
	ta.addAccount(t, "ada@example.com", false)
	b := ta.browser(t)
	for range 3 {
		assert.Equal(t, http.StatusUnauthorized, b.login("ada@example.com", "guess").status)
	}
	p := b.login("ada@example.com", testPassword)
	assert.Equal(t, http.StatusTooManyRequests, p.status, "banned: refused even with the right password")
	assert.Contains(t, p.body, "Too many failed sign-ins. Please try again in 15 minutes.")
	assert.Equal(t, "900", p.header.Get("Retry-After"))
	assert.NotContains(t, p.body, "incorrect")
	assert.Equal(t, http.StatusSeeOther, b.get("/").status, "not signed in")

	// An unknown email is regulated the same way: a ban says nothing of existence.
	for range 3 {
		b.login("ghost@example.com", "guess")
	}
	assert.Equal(t, http.StatusTooManyRequests, b.login("ghost@example.com", "guess").status)

	clk.Advance(15*time.Minute + time.Second)
	assert.Equal(t, http.StatusSeeOther, b.login("ada@example.com", testPassword).status, "the ban ends")
}

func TestRegulationPerIPIgnoresForwardedHeader(t *testing.T) {
	ta := startTestApp(t, testOptions{yaml: "regulation:\n  max_retries: 100\n  max_retries_per_ip: 4\n"})
	ta.addAccount(t, "ada@example.com", false)
	b := ta.browser(t)
	for i := range 4 {
		tok := b.csrf("/login")
		// A forged X-Forwarded-For must not spread the failures over "IPs".
		b.post("/login", url.Values{"_csrf": {tok}, "email": {"spray" + string(rune('a'+i)) + "@example.com"}, "password": {"x"}},
			"X-Forwarded-For", "203.0.113."+string(rune('1'+i)))
	}
	assert.Equal(t, http.StatusTooManyRequests, b.login("ada@example.com", testPassword).status, "the connection's IP is banned")
}

func TestUnknownEmailSpendsTheSameHashingWork(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	ta.addAccount(t, "ada@example.com", false)
	b := ta.browser(t)
	before := ta.hasher.Verifications()
	b.login("ada@example.com", "wrong password")
	wrong := ta.hasher.Verifications() - before
	before = ta.hasher.Verifications()
	b.login("nobody@example.com", "wrong password")
	unknown := ta.hasher.Verifications() - before
	assert.Equal(t, int64(1), wrong)
	assert.Equal(t, wrong, unknown, "one argon2id verification either way")
}

func TestSessionFixationPrevented(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	ta.addAccount(t, "ada@example.com", false)
	ta.addAccount(t, "eve@example.com", false)
	u, _ := url.Parse(ta.srv.URL)

	// Eve signs in and plants her session cookie in Ada's browser.
	eve := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, eve.login("eve@example.com", testPassword).status)
	var planted *http.Cookie
	for _, c := range eve.c.Jar.Cookies(u) {
		if c.Name == "ssobridge_session" {
			planted = c
		}
	}
	require.NotNil(t, planted)
	ada := ta.browser(t)
	ada.c.Jar.SetCookies(u, []*http.Cookie{planted})
	// Ada's browser shows Eve's session until Ada signs in herself...
	assert.Contains(t, ada.get("/").body, "eve@example.com")
	require.Equal(t, http.StatusSeeOther, ada.post("/logout", url.Values{"_csrf": {ada.csrf("/")}}).status)
	require.Equal(t, http.StatusSeeOther, ada.login("ada@example.com", testPassword).status)
	// ...and after sign-in the cookie is a new one that is Ada's alone.
	var after *http.Cookie
	for _, c := range ada.c.Jar.Cookies(u) {
		if c.Name == "ssobridge_session" {
			after = c
		}
	}
	require.NotNil(t, after)
	assert.NotEqual(t, planted.Value, after.Value, "a new session on sign-in")
	assert.Contains(t, ada.get("/").body, "ada@example.com")

	// Signing in over a still-valid session replaces it: the browser keeps
	// the valid session cookie of Eve's sign-in, signs in as Ada, and ends
	// up with a new cookie that is Ada's session, not Eve's.
	mallory := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, mallory.login("eve@example.com", testPassword).status)
	eveCookie := sessionCookie(t, mallory, u)
	require.Contains(t, mallory.get("/").body, "eve@example.com", "Eve's session is valid")
	// /login sends a signed-in browser to the portal; its form token serves.
	over := mallory.post("/login", url.Values{"_csrf": {mallory.csrf("/")}, "email": {"ada@example.com"}, "password": {testPassword}})
	require.Equal(t, http.StatusSeeOther, over.status, over.body)
	adaCookie := sessionCookie(t, mallory, u)
	assert.NotEqual(t, eveCookie, adaCookie, "a new session cookie on sign-in")
	portal := mallory.get("/")
	assert.Contains(t, portal.body, "ada@example.com", "the new session is Ada's")
	assert.NotContains(t, portal.body, "eve@example.com")
}

// sessionCookie is the browser's session cookie for u; the test fails
// without one.
func sessionCookie(t *testing.T, b *browser, u *url.URL) string {
	t.Helper()
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "ssobridge_session" {
			return c.Value
		}
	}
	require.FailNow(t, "no session cookie")
	return ""
}

func TestSessionTimeouts(t *testing.T) {
	clk := fakeclock.New(time.Now())
	ta := startTestApp(t, testOptions{now: clk.Now, yaml: "session:\n  max_age: 3h\n  idle_timeout: 30m\n"})
	ta.addAccount(t, "ada@example.com", false)

	idle := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, idle.login("ada@example.com", testPassword).status)
	clk.Advance(29 * time.Minute)
	require.Equal(t, http.StatusOK, idle.get("/").status, "within the idle timeout")
	clk.Advance(29 * time.Minute)
	require.Equal(t, http.StatusOK, idle.get("/").status, "activity refreshed the idle clock")
	clk.Advance(31 * time.Minute)
	p := idle.get("/")
	assert.Equal(t, "/login?expired=1", p.header.Get("Location"), "idle too long")

	abs := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, abs.login("ada@example.com", testPassword).status)
	for range 7 {
		clk.Advance(25 * time.Minute)
		require.Equal(t, http.StatusOK, abs.get("/").status)
	}
	clk.Advance(10 * time.Minute) // 3h05 after sign-in, never idle
	assert.Equal(t, "/login?expired=1", abs.get("/").header.Get("Location"), "absolute lifetime")

	// A cookie signed with other keys (another deployment) is signed out.
	other := startTestApp(t, testOptions{})
	other.addAccount(t, "ada@example.com", false)
	foreign := other.browser(t)
	require.Equal(t, http.StatusSeeOther, foreign.login("ada@example.com", testPassword).status)
	ou, _ := url.Parse(other.srv.URL)
	u, _ := url.Parse(ta.srv.URL)
	victim := ta.browser(t)
	victim.c.Jar.SetCookies(u, foreign.c.Jar.Cookies(ou))
	assert.Equal(t, "/login?expired=1", victim.get("/").header.Get("Location"))
}

// TestSecretsNeverLeak runs the flow and its failures with a known API
// secret and password and searches every log line and page for them.
func TestSecretsNeverLeak(t *testing.T) {
	const apiSecret = "KNOWN-API-SECRET-4f1e9a"
	admin := platformsim.Credential{Key: "known-key", Secret: apiSecret, Admin: true}
	sim, err := platformsim.New(platformsim.Config{Credentials: []platformsim.Credential{admin}})
	require.NoError(t, err)
	running, err := platformsim.Start(sim, "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { running.Close() })

	ta := startTestApp(t, testOptions{env: []string{"SSOBRIDGE_PLATFORM_BASE_URL=" + running.URL,
		"SSOBRIDGE_PLATFORM_API_KEY=known-key", "SSOBRIDGE_PLATFORM_API_SECRET=" + apiSecret}})
	ta.addAccount(t, "ada@example.com", true)
	b := ta.browser(t)
	var pages []string
	keep := func(p page) page { pages = append(pages, p.body); return p }

	keep(b.login("ada@example.com", "wrong password for the log"))
	keep(b.login("nobody@example.com", testPassword))
	require.Equal(t, http.StatusSeeOther, keep(b.login("ada@example.com", testPassword)).status)
	keep(b.get("/"))
	var tokens []string
	for range 2 {
		p := keep(b.launch())
		require.Equal(t, http.StatusSeeOther, p.status)
		loc := p.header.Get("Location")
		tokens = append(tokens, loc[strings.LastIndexByte(loc, '/')+1:])
		keep(b.get2(loc))
	}
	keep(b.get2(running.URL + "/api/5/login-token/login/" + tokens[0])) // reused: 409
	for _, status := range []int{403, 429, 500} {
		sim.InjectFault(platformsim.EndpointIssueToken, platformsim.Fault{Status: status, Times: 10})
		keep(b.launch())
		sim.ClearFaults()
	}
	sim.SetClockOffset(time.Hour)
	keep(b.launch())
	keep(b.post("/admin/connection/check", url.Values{"_csrf": {b.csrf("/admin/connection")}}))
	sim.SetClockOffset(0)
	keep(b.get("/admin/audit"))
	keep(b.get("/admin/connection"))
	keep(b.get("/metrics"))
	resp, err := http.Get(ta.srv.URL + "/readyz")
	require.NoError(t, err)
	rb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	pages = append(pages, string(rb))

	logs := ta.logs.String()
	require.Contains(t, logs, "launch=returning", "the logs were captured")
	everything := logs + strings.Join(pages, "\n")
	for what, secret := range map[string]string{"API secret": apiSecret, "password": testPassword, "wrong password": "wrong password for the log",
		"token 1": tokens[0], "token 2": tokens[1]} {
		assert.NotContains(t, everything, secret, "%s leaked", what)
	}
	assert.NotContains(t, logs, "Authorization")
}

// TestNewSessionIsValidOnAnotherInstanceAtOnce: two instances share one
// database and the session keys. B has the account in its cache when A
// ends the sessions and signs in again; the new session is valid on B at
// once, not after B's cache runs out (the clock stands still, so it never
// would in this test).
func TestNewSessionIsValidOnAnotherInstanceAtOnce(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "shared", "ssobridge.db")
	keys := "session:\n  hash_key: " + strings.Repeat("ab", 32) + "\n  block_key: " + strings.Repeat("cd", 32) + "\n"
	clk := fakeclock.New(time.Now())
	a := startTestApp(t, testOptions{dsn: dsn, yaml: keys, now: clk.Now})
	b := startTestApp(t, testOptions{dsn: dsn, yaml: keys, now: clk.Now})
	a.addAccount(t, "ada@example.com", false)
	onA := a.browser(t)
	onB := &browser{t: t, base: b.srv.URL, c: onA.c} // one browser: cookies are per host, not port
	require.Equal(t, http.StatusSeeOther, onA.login("ada@example.com", testPassword).status)
	require.Equal(t, http.StatusOK, onB.get("/").status, "B reads (and caches) the account")

	require.Equal(t, http.StatusSeeOther, onA.post("/logout", url.Values{"_csrf": {onA.csrf("/")}}).status)
	require.Equal(t, http.StatusSeeOther, onA.login("ada@example.com", testPassword).status)
	p := onB.get("/")
	assert.Equal(t, http.StatusOK, p.status, "the new session is valid on B at once: %s", p.header.Get("Location"))

	// The other direction still holds: a session ended on A is void on B.
	stale := onA.c.Jar.Cookies(mustURL(t, a.srv.URL))
	require.Equal(t, http.StatusSeeOther, onA.post("/logout", url.Values{"_csrf": {onA.csrf("/")}}).status)
	replay := b.browser(t)
	replay.c.Jar.SetCookies(mustURL(t, b.srv.URL), stale)
	clk.Advance(2 * time.Second) // past B's cache
	assert.Equal(t, "/login?expired=1", replay.get("/").header.Get("Location"))
}

func mustURL(t testing.TB, s string) *url.URL {
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}
