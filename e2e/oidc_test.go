package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/internal/fakeclock"
	"github.com/ssobridge/ssobridge/store"
)

// dexBridge is a bridge whose IdP is a real Dex, running before the bridge
// starts (its listener is taken first, for the redirect URI).
func dexBridge(t *testing.T, o testOptions, extra string) *testApp {
	t.Helper()
	bin := dexBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	o.listener = ln
	issuer := startDex(t, bin, freePort(t), "http://"+ln.Addr().String()+"/auth/oidc/callback")
	o.yaml += oidcYAML(issuer, extra)
	return startTestApp(t, o)
}

func (ta *testApp) account(t *testing.T, email string) store.Account {
	t.Helper()
	a, err := ta.store.AccountByEmail(context.Background(), email)
	require.NoError(t, err)
	return a
}

// The sign-ins of the issue, against one Dex: first sign-in, returning
// user, the admin group (granted and taken away), an unverified email, a
// disabled account, a deep link through the round trip.
func TestOIDCSignIn(t *testing.T) {
	ta := dexBridge(t, testOptions{}, "")

	t.Run("first sign-in creates the account and lands on the portal", func(t *testing.T) {
		b := ta.browser(t)
		r, _ := b.idpSignIn(t, "", dexAda)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/", r.header.Get("Location"))
		p := b.get("/")
		require.Equal(t, http.StatusOK, p.status)
		assert.Contains(t, p.body, "Open video editor")
		a := ta.account(t, dexAda.email)
		assert.Equal(t, passhash.NoPassword, a.PasswordHash, "no bridge password")
		assert.False(t, a.Admin)
	})
	t.Run("returning user", func(t *testing.T) {
		before, _ := ta.store.CountAccounts(context.Background())
		r, _ := ta.browser(t).idpSignIn(t, "", dexAda)
		require.Equal(t, http.StatusSeeOther, r.status)
		after, _ := ta.store.CountAccounts(context.Background())
		assert.Equal(t, before, after, "the same account")
	})
	t.Run("admin group grants admin; leaving it takes it away", func(t *testing.T) {
		b := ta.browser(t)
		r, _ := b.idpSignIn(t, "", dexRoot)
		require.Equal(t, http.StatusSeeOther, r.status)
		assert.True(t, ta.account(t, dexRoot.email).Admin, "in "+dexAdminGroup)
		assert.Equal(t, http.StatusOK, b.get("/admin/accounts").status)
		ada := ta.account(t, dexAda.email)
		require.NoError(t, ta.store.SetAdmin(context.Background(), ada.ID, true))
		r, _ = ta.browser(t).idpSignIn(t, "", dexAda)
		require.Equal(t, http.StatusSeeOther, r.status)
		assert.False(t, ta.account(t, dexAda.email).Admin, "not in the group: admin taken away at sign-in")
	})
	t.Run("unverified email refused", func(t *testing.T) {
		b := ta.browser(t)
		r, _ := b.idpSignIn(t, "", dexUnverified)
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Contains(t, r.body, "not verified")
		assert.Equal(t, "/login", b.get("/").header.Get("Location"), "no session")
		_, err := ta.store.AccountByEmail(context.Background(), dexUnverified.email)
		assert.ErrorIs(t, err, store.ErrNotFound, "no account made")
	})
	t.Run("disabled account refused", func(t *testing.T) {
		ada := ta.account(t, dexAda.email)
		require.NoError(t, ta.store.SetDisabled(context.Background(), ada.ID, true))
		defer func() { require.NoError(t, ta.store.SetDisabled(context.Background(), ada.ID, false)) }()
		b := ta.browser(t)
		r, _ := b.idpSignIn(t, "", dexAda)
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Contains(t, r.body, "disabled")
		assert.Equal(t, "/login", b.get("/").header.Get("Location"), "no session")
	})
	t.Run("a deep link through the round trip", func(t *testing.T) {
		b := ta.browser(t)
		r := b.get("/open?return_to=" + url.QueryEscape("/editor/projects/9"))
		login := r.header.Get("Location")
		page := b.get(login)
		require.Contains(t, page.body, `id="idp-sign-in"`)
		next, _ := url.Parse(login)
		r, _ = b.idpSignIn(t, next.Query().Get("next"), dexAda)
		require.Equal(t, http.StatusSeeOther, r.status)
		assert.Equal(t, "/open?return_to=%2Feditor%2Fprojects%2F9", r.header.Get("Location"))
		path, editor := b.follow(t, ta, b.get(r.header.Get("Location")))
		assert.Equal(t, "/editor/projects/9", path)
		assert.Contains(t, editor, "Signed in as")
	})
}

// The callback is bound to the browser that started the flow and used
// once: a tampered state, a replay in the same browser and a replay with a
// copy of the flow cookie are refused; so is the IdP's access_denied.
func TestOIDCRefusesTamperedAndReplayedCallbacks(t *testing.T) {
	ta := dexBridge(t, testOptions{}, "")

	b := ta.browser(t)
	cb := b.idpCallbackURL(t, "", dexAda)
	u, _ := url.Parse(cb)
	// Two copies of the browser's flow cookie, taken before anything runs.
	copyJar, _ := cookiejar.New(nil)
	copyJar.SetCookies(u, b.c.Jar.Cookies(u))
	copyJar2, _ := cookiejar.New(nil)
	copyJar2.SetCookies(u, b.c.Jar.Cookies(u))
	thief := &browser{t: t, base: ta.srv.URL, c: &http.Client{Jar: copyJar, CheckRedirect: b.c.CheckRedirect}}

	tampered := *u
	q := tampered.Query()
	q.Set("state", q.Get("state")+"x")
	tampered.RawQuery = q.Encode()
	r := thief.get2(tampered.String())
	assert.Equal(t, http.StatusBadRequest, r.status, "tampered state")
	assert.Contains(t, r.body, "could not be completed")

	r = b.get2(cb)
	require.Equal(t, http.StatusSeeOther, r.status, "the real callback")
	r = b.get2(cb)
	assert.Equal(t, http.StatusBadRequest, r.status, "replayed in the same browser: its flow is gone")
	replay := &browser{t: t, base: ta.srv.URL, c: &http.Client{Jar: copyJar2, CheckRedirect: b.c.CheckRedirect}}
	r = replay.get2(cb)
	assert.Equal(t, http.StatusBadRequest, r.status, "replayed with a copy of the flow cookie")
	assert.Contains(t, ta.logs.String(), "the callback was replayed")

	denied := ta.browser(t)
	start := denied.get("/auth/oidc")
	auth, _ := url.Parse(start.header.Get("Location"))
	r = denied.get("/auth/oidc/callback?error=access_denied&error_description=no&state=" + url.QueryEscape(auth.Query().Get("state")))
	assert.Equal(t, http.StatusForbidden, r.status)
	assert.Contains(t, r.body, "did not let you in")
}

// A flow older than 10 minutes is refused with its own page.
func TestOIDCFlowExpires(t *testing.T) {
	clk := fakeclock.New(time.Now())
	ta := dexBridge(t, testOptions{now: clk.Now}, "")
	b := ta.browser(t)
	cb := b.idpCallbackURL(t, "", dexAda)
	clk.Advance(11 * time.Minute)
	r := b.get2(cb)
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, r.body, "took too long")
}

// An IdP that is down at start is a warning, not a crash: /readyz reports
// it and the sign-in button's page says so; once it is up, sign-in works.
// The password form can be hidden, reachable at /login?local=1.
func TestOIDCIdPDownAtStart(t *testing.T) {
	bin := dexBinary(t)
	port := freePort(t)
	ta := startTestApp(t, testOptions{yaml: oidcYAML(fmt.Sprintf("http://127.0.0.1:%d/dex", port), "  local_login: false\n")})
	assert.Contains(t, ta.logs.String(), "identity provider unreachable at start")
	b := ta.browser(t)
	r := b.get("/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.Contains(t, r.body, `"idp":"unavailable"`)
	r = b.get("/auth/oidc")
	assert.Equal(t, http.StatusBadGateway, r.status)
	assert.Contains(t, r.body, "not reachable right now")

	login := b.get("/login").body
	assert.Contains(t, login, "Sign in with Test IdP")
	assert.NotContains(t, login, `id="password"`, "oidc.local_login false: no password form")
	assert.Contains(t, b.get("/login?local=1").body, `id="password"`, "the fallback for admins")

	startDex(t, bin, port, ta.srv.URL+"/auth/oidc/callback")
	// A failed discovery is remembered for a few seconds, then retried.
	require.Eventually(t, func() bool { return b.get("/readyz").status == http.StatusOK }, 15*time.Second, 100*time.Millisecond,
		"/readyz ready once the IdP is up")
	cbPage, _ := b.idpSignIn(t, "", dexAda)
	assert.Equal(t, http.StatusSeeOther, cbPage.status, "discovery retried: the sign-in works")
	assert.True(t, strings.HasPrefix(ta.account(t, dexAda.email).Email, "ada@"))
}

// An IdP that goes down after start: /readyz says so within a health
// check, the sign-in button leads to the IdP-unavailable page (not to the
// dead IdP), one log line says it is down and one that it is back, and
// sign-in recovers by itself.
func TestOIDCIdPOutageAfterStart(t *testing.T) {
	bin := dexBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := freePort(t)
	callback := "http://" + ln.Addr().String() + "/auth/oidc/callback"
	issuer, stop := runDex(t, bin, port, callback)
	ta := startTestApp(t, testOptions{listener: ln, yaml: oidcYAML(issuer, ""), idpHealth: 100 * time.Millisecond})
	b := ta.browser(t)
	require.Equal(t, http.StatusOK, b.get("/readyz").status)

	stop()
	require.Eventually(t, func() bool { return b.get("/readyz").status == http.StatusServiceUnavailable }, 10*time.Second, 50*time.Millisecond,
		"/readyz notices the IdP is gone")
	assert.Contains(t, b.get("/readyz").body, `"idp":"unavailable"`)
	r := b.get("/auth/oidc")
	assert.Equal(t, http.StatusBadGateway, r.status, "the IdP-unavailable page, not a redirect to the dead IdP")
	assert.Contains(t, r.body, "not reachable right now")
	assert.Equal(t, 1, strings.Count(ta.logs.String(), "identity provider unavailable"), "one line for the outage")

	runDex(t, bin, port, callback)
	require.Eventually(t, func() bool { return b.get("/readyz").status == http.StatusOK }, 15*time.Second, 50*time.Millisecond,
		"/readyz ready once the IdP is back")
	assert.Contains(t, ta.logs.String(), "identity provider is back")
	cbPage, _ := b.idpSignIn(t, "", dexAda)
	assert.Equal(t, http.StatusSeeOther, cbPage.status, "sign-in works again")
}
