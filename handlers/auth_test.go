package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoginPage(t *testing.T) {
	tests := []struct {
		name, query, notice string
	}{
		{"plain", "", ""},
		{"session ended", "?expired=1", "Your session has ended. Please sign in again."},
		{"signed out", "?signed_out=1", "You have been signed out."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t)
			r := f.client().get("/login" + tt.query)
			require.Equal(t, http.StatusOK, r.status)
			assert.Equal(t, "Sign in", r.text("h1"))
			assert.Equal(t, tt.notice, r.text(".notice"))
			assert.NotEmpty(t, r.doc.Find(`form[action="/login"] input[name="_csrf"]`).AttrOr("value", ""))
			assert.Contains(t, setCookieHeader(r, csrfPlainName), "HttpOnly")
		})
	}
	t.Run("signed in: to the portal", func(t *testing.T) {
		f := setup(t)
		f.account("ada@example.com", false)
		c := f.client()
		c.signIn("ada@example.com")
		r := c.get("/login")
		assert.Equal(t, http.StatusSeeOther, r.status)
		assert.Equal(t, "/", r.header.Get("Location"))
	})
}

// Every failed sign-in answers the same page (401) whatever the reason;
// the reason goes to the audit log only. Bad input is a 400 that counts
// nothing.
func TestLoginFailures(t *testing.T) {
	tests := []struct {
		name, email, password string
		status                int
		message               string
		reason                string // the audit detail; "" when nothing is audited
		verified, dummy       int    // password verifications spent
	}{
		{"wrong password", "ada@example.com", "wrong password", 401, "Email or password is incorrect.", "wrong password", 1, 0},
		{"unknown email", "nobody@example.com", testPassword, 401, "Email or password is incorrect.", "unknown email", 0, 1},
		{"disabled account", "off@example.com", testPassword, 401, "Email or password is incorrect.", "account disabled", 1, 0},
		{"email too long", strings.Repeat("a", 250) + "@example.com", testPassword, 401, "Email or password is incorrect.", "input too long", 0, 0},
		{"no password", "ada@example.com", "", 400, "Enter your email and password.", "", 0, 0},
		{"no email", "", testPassword, 400, "Enter your email and password.", "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t)
			f.account("ada@example.com", false)
			off := f.account("off@example.com", false)
			f.account("keeper@example.com", true)
			require.NoError(t, f.accts.SetDisabled(t.Context(), off.ID, true))
			c := f.client()
			r := c.submit("/login", "/login", url.Values{"email": {tt.email}, "password": {tt.password}})
			assert.Equal(t, tt.status, r.status)
			assert.Equal(t, tt.message, r.text("#error-summary li a"))
			assert.Empty(t, setCookieHeader(r, SessionCookie), "no session")
			assert.Equal(t, http.StatusSeeOther, c.get("/").status, "still signed out")
			verified, dummy := f.pw.counts()
			assert.Equal(t, tt.verified, verified)
			assert.Equal(t, tt.dummy, dummy)
			evs := f.accts.eventsOf(store.KindLogin)
			if tt.reason == "" {
				assert.Empty(t, evs)
				assert.Empty(t, f.reg.admitted, "bad input counts no attempt")
				return
			}
			require.Len(t, evs, 1)
			assert.Equal(t, "failed", evs[0].Outcome)
			assert.Equal(t, tt.reason, evs[0].Detail)
			assert.NotEmpty(t, evs[0].RequestID)
			assert.Equal(t, 1, f.reg.failed, "the failure is counted")
			assert.NotContains(t, r.body, tt.reason, "the page does not say why")
		})
	}
}

// Two failures for different reasons answer the same page but for the
// typed email and the form's token.
func TestLoginFailuresLookAlike(t *testing.T) {
	f := setup(t)
	f.account("ada@example.com", false)
	c := f.client()
	page := func(email, password string) string {
		r := c.submit("/login", "/login", url.Values{"email": {email}, "password": {password}})
		r.doc.Find(`input[name="_csrf"]`).RemoveAttr("value")
		html, err := r.doc.Html()
		require.NoError(t, err)
		return strings.ReplaceAll(html, email, "EMAIL")
	}
	assert.Equal(t, page("ada@example.com", "wrong password"), page("nobody@example.com", "wrong password"))
}

func TestLoginSuccess(t *testing.T) {
	f := setup(t, func(d *Deps) { d.Sessions.Secure = true })
	ada := f.account("ada@example.com", false)
	c := f.client()
	tok := c.csrf("/login")
	r := c.post("/login", url.Values{"_csrf": {tok}, "email": {" ADA@example.com "}, "password": {testPassword}})
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	assert.Equal(t, "/", r.header.Get("Location"))
	session := setCookieHeader(r, "__Host-"+SessionCookie)
	for _, attr := range []string{"HttpOnly", "SameSite=Lax", "Secure", "Path=/"} {
		assert.Contains(t, session, attr)
	}
	assert.Contains(t, setCookieHeader(r, csrfSecureName), "Max-Age=0", "the CSRF token is rotated on sign-in")
	assert.Equal(t, []string{"ADA@example.com 127.0.0.1"}, f.reg.admitted, "counted before the password was verified")
	assert.Equal(t, 1, f.reg.succeeded, "the regulator forgets the failures")
	evs := f.accts.eventsOf(store.KindLogin)
	require.Len(t, evs, 1)
	assert.Equal(t, store.Event{ID: evs[0].ID, At: f.clock.Now(), Kind: store.KindLogin, AccountID: ada.ID, Email: ada.Email, Outcome: "ok", RequestID: r.header.Get("X-Request-Id")}, evs[0])
}

// A banned sign-in is refused even with the right password; the page says
// how long the ban lasts (in whole minutes, rounded up) and Retry-After
// gives the seconds. A ban tells nothing of the account: unknown emails
// are banned alike.
func TestLoginWhileBanned(t *testing.T) {
	for _, tt := range []struct {
		banned  string
		left    time.Duration
		message string
		retry   string
	}{
		{"ada@example.com", 10 * time.Minute, "Too many failed sign-ins. Please try again in 10 minutes.", "600"},
		{"127.0.0.1", 90 * time.Second, "Too many failed sign-ins. Please try again in 2 minutes.", "90"},
		{"ada@example.com", 20 * time.Second, "Too many failed sign-ins. Please try again in 1 minute.", "20"},
	} {
		t.Run(tt.banned+" "+tt.left.String(), func(t *testing.T) {
			f := setup(t)
			f.account("ada@example.com", false)
			f.reg.banned[tt.banned] = f.clock.Now().Add(tt.left)
			c := f.client()
			r := c.submit("/login", "/login", url.Values{"email": {"ada@example.com"}, "password": {testPassword}})
			assert.Equal(t, http.StatusTooManyRequests, r.status, "refused even with the right password")
			assert.Equal(t, tt.message, r.text("#error-summary li a"))
			assert.Equal(t, tt.retry, r.header.Get("Retry-After"))
			verified, dummy := f.pw.counts()
			assert.Zero(t, verified+dummy, "no password is tested during a ban")
			evs := f.accts.eventsOf(store.KindLogin)
			require.Len(t, evs, 1)
			assert.Equal(t, "banned", evs[0].Outcome)
		})
	}
}

func TestLoginFailureStartsBan(t *testing.T) {
	f := setup(t)
	f.reg.banOnFail = true
	c := f.client()
	c.submit("/login", "/login", url.Values{"email": {"ada@example.com"}, "password": {"guess"}})
	evs := f.accts.eventsOf(store.KindLogin)
	require.Len(t, evs, 1)
	assert.Equal(t, "unknown email; ban started", evs[0].Detail)
	logs := f.logs.String()
	assert.Contains(t, logs, `level=WARN msg="sign-in ban started: too many failed sign-ins" email=ada@example.com client_ip=127.0.0.1`)
	assert.NotContains(t, logs, "guess", "never the password")
}

// Failed and banned sign-ins are in the server log too, with the email,
// the client IP and the reason; never the password.
func TestLoginFailuresAreLogged(t *testing.T) {
	f := setup(t)
	f.account("ada@example.com", false)
	c := f.client()
	c.submit("/login", "/login", url.Values{"email": {"ada@example.com"}, "password": {"wrong-secret-1"}})
	c.submit("/login", "/login", url.Values{"email": {"nobody@example.com"}, "password": {"wrong-secret-2"}})
	f.reg.banned["ada@example.com"] = f.clock.Now().Add(time.Hour)
	c.submit("/login", "/login", url.Values{"email": {"ada@example.com"}, "password": {testPassword}})
	logs := f.logs.String()
	assert.Contains(t, logs, `level=WARN msg="sign-in failed" email=ada@example.com client_ip=127.0.0.1 reason="wrong password"`)
	assert.Contains(t, logs, `level=WARN msg="sign-in failed" email=nobody@example.com client_ip=127.0.0.1 reason="unknown email"`)
	assert.Contains(t, logs, `level=WARN msg="sign-in refused: banned" email=ada@example.com client_ip=127.0.0.1`)
	for _, pw := range []string{"wrong-secret-1", "wrong-secret-2", testPassword} {
		assert.NotContains(t, logs, pw, "never the password")
	}
}

// The client IP for regulation comes from the connection unless proxy
// headers are trusted.
func TestLoginRegulatedByClientIP(t *testing.T) {
	for _, trust := range []bool{false, true} {
		f := setup(t, func(d *Deps) { d.TrustProxyHeaders = trust })
		c := f.client()
		form := url.Values{"_csrf": {c.csrf("/login")}, "email": {"x@example.com"}, "password": {"guess"}}
		c.post("/login", form, "X-Forwarded-For", "203.0.113.9")
		want := "x@example.com 127.0.0.1"
		if trust {
			want = "x@example.com 203.0.113.9"
		}
		assert.Equal(t, []string{want}, f.reg.admitted, "trust_proxy_headers=%v", trust)
	}
}

func TestLoginStoreFailureIsAnInternalError(t *testing.T) {
	f := setup(t)
	c := f.client()
	tok := c.csrf("/login")
	f.accts.down()
	r := c.post("/login", url.Values{"_csrf": {tok}, "email": {"ada@example.com"}, "password": {testPassword}})
	assert.Equal(t, http.StatusInternalServerError, r.status)
	assert.Equal(t, "internal", r.class())
	assert.NotContains(t, r.body, "closed", "no internal detail on the page")
	assert.Contains(t, f.logs.String(), "closed", "the log has it")
}

func TestLogout(t *testing.T) {
	f := setup(t)
	ada := f.account("ada@example.com", false)
	c, laptop := f.client(), f.client()
	c.signIn("ada@example.com")
	laptop.signIn("ada@example.com")
	old := c.cookie(SessionCookie)
	r := c.submit("/", "/logout", nil)
	assert.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, "/login?signed_out=1", r.header.Get("Location"))
	assert.Contains(t, setCookieHeader(r, SessionCookie), "Max-Age=0")
	got, _ := f.accts.AccountByID(t.Context(), ada.ID)
	assert.Equal(t, ada.SessionEpoch, got.SessionEpoch, "one device: the account's epoch stays")
	require.Len(t, f.accts.eventsOf(store.KindLogout), 1)
	left, _ := f.accts.ListSessions(t.Context(), ada.ID)
	assert.Len(t, left, 1, "only this device's session ended")

	thief := f.client()
	thief.setCookie(SessionCookie, old)
	r = thief.get("/")
	assert.Equal(t, "/login?expired=1", r.header.Get("Location"), "a replayed cookie of the signed-out device has expired")
	assert.Equal(t, http.StatusOK, laptop.get("/").status, "the other device stays signed in")

	// Signing out without a session just clears the cookie.
	anon := f.client()
	r = anon.submit("/login", "/logout", nil)
	assert.Equal(t, http.StatusSeeOther, r.status)
	assert.Len(t, f.accts.eventsOf(store.KindLogout), 1)
}

// Signing out everywhere ends every device's session.
func TestLogoutEverywhere(t *testing.T) {
	f := setup(t)
	ada := f.account("ada@example.com", false)
	phone, laptop := f.client(), f.client()
	phone.signIn("ada@example.com")
	laptop.signIn("ada@example.com")
	r := phone.submit("/", "/logout/everywhere", nil)
	assert.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, "/login?signed_out=everywhere", r.header.Get("Location"))
	assert.Equal(t, "/login?expired=1", laptop.get("/").header.Get("Location"), "the other device is signed out too")
	left, _ := f.accts.ListSessions(t.Context(), ada.ID)
	assert.Empty(t, left)
	evs := f.accts.eventsOf(store.KindLogout)
	require.Len(t, evs, 1)
	assert.Equal(t, "every device", evs[0].Detail)
	assert.Contains(t, phone.get("/login?signed_out=everywhere").body, "signed out on every device")

	anon := f.client()
	assert.Equal(t, http.StatusUnauthorized, anon.submit("/login", "/logout/everywhere", nil).status, "no session: the session-expired page")
}

// TestCSRF: with a plain client (no Sec-Fetch-Site), a form post needs the
// token; a cross-site post is refused even with it (net/http's
// CrossOriginProtection reads Sec-Fetch-Site, then Origin against Host).
func TestCSRF(t *testing.T) {
	tests := []struct {
		name   string
		token  func(good string) string
		header []string
		status int
	}{
		{"no token", func(string) string { return "" }, nil, http.StatusBadRequest},
		{"wrong token", func(string) string { return "wrong-token" }, nil, http.StatusForbidden},
		{"cross-site, with the token", func(good string) string { return good }, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"right token", func(good string) string { return good }, nil, http.StatusSeeOther},
	}
	for _, path := range []string{"/login", "/launch", "/logout", "/admin/accounts/1/disable"} {
		for _, tt := range tests {
			t.Run(path+": "+tt.name, func(t *testing.T) {
				f := setup(t)
				f.account("ada@example.com", true)
				f.account("bob@example.com", false)
				c := f.client()
				from := "/login"
				if path != "/login" {
					c.signIn("ada@example.com")
					from = "/"
				}
				form := url.Values{"email": {"ada@example.com"}, "password": {testPassword}}
				if tok := tt.token(c.csrf(from)); tok != "" {
					form.Set("_csrf", tok)
				}
				r := c.post(path, form, tt.header...)
				if path == "/admin/accounts/1/disable" && tt.status == http.StatusSeeOther {
					assert.Equal(t, http.StatusConflict, r.status, "passed the check (the last admin stays)")
					return
				}
				assert.Equal(t, tt.status, r.status, r.body)
				if tt.status != http.StatusSeeOther {
					assert.Equal(t, "csrf", r.class())
					assert.Empty(t, f.launcher.made(), "nothing launched")
				}
			})
		}
	}
}

// TestCSRFTokenIsBound: a token passes only with the cookie it was issued
// for, and that cookie only if the server sealed it. A planted cookie with
// a matching field (what any sibling subdomain could set) fails, as do a
// token from another browser and a same-site or same-origin post without
// one.
func TestCSRFTokenIsBound(t *testing.T) {
	f := setup(t)
	f.account("ada@example.com", false)
	form := func(tok string) url.Values {
		return url.Values{"_csrf": {tok}, "email": {"ada@example.com"}, "password": {testPassword}}
	}
	planted := f.client()
	planted.setCookie(csrfPlainName, "attacker-chosen-value")
	r := planted.post("/login", form("attacker-chosen-value"))
	assert.Equal(t, http.StatusForbidden, r.status, "planted double-submit cookie")
	assert.Equal(t, "csrf", r.class())

	other, victim := f.client(), f.client()
	foreignToken := other.csrf("/login")
	victim.csrf("/login") // the victim has a cookie of its own
	r = victim.post("/login", form(foreignToken))
	assert.Equal(t, http.StatusForbidden, r.status, "another browser's token")

	stolenCookie := other.cookie(csrfPlainName)
	thief := f.client()
	thief.setCookie(csrfPlainName, stolenCookie)
	r = thief.post("/login", form(mask(make([]byte, csrfSecretLen))))
	assert.Equal(t, http.StatusForbidden, r.status, "a token for another secret")

	for _, site := range []string{"same-origin", "none"} {
		c := f.client()
		c.csrf("/login")
		r = c.post("/login", url.Values{"email": {"ada@example.com"}, "password": {testPassword}}, "Sec-Fetch-Site", site)
		assert.Equal(t, http.StatusBadRequest, r.status, "Sec-Fetch-Site %s does not skip the token", site)
	}

	// Another origin is refused before the token is read, even with the
	// right one: a sibling subdomain is same-site, not same-origin.
	for _, hdr := range [][]string{
		{"Sec-Fetch-Site", "same-site"},
		{"Sec-Fetch-Site", "cross-site"},
		{"Origin", "https://evil.example"},
		{"Origin", "http://sibling." + strings.TrimPrefix(f.srv.URL, "http://")},
	} {
		c := f.client()
		r = c.post("/login", form(c.csrf("/login")), hdr...)
		assert.Equal(t, http.StatusForbidden, r.status, "%v with the right token", hdr)
		assert.Equal(t, "csrf", r.class())
	}
	c := f.client()
	r = c.post("/login", form(c.csrf("/login")), "Origin", f.srv.URL)
	assert.Equal(t, http.StatusSeeOther, r.status, "this origin, with the right token")

	fresh := f.client()
	tok := fresh.csrf("/login")
	assert.NotEqual(t, tok, fresh.csrf("/login"), "a fresh mask on every page")
	r = fresh.post("/login", form(tok))
	assert.Equal(t, http.StatusSeeOther, r.status, "a token from an earlier page of the same browser passes")
	r = fresh.post("/logout", url.Values{"_csrf": {tok}})
	assert.Equal(t, http.StatusForbidden, r.status, "sign-in rotated the secret: tokens from before fail")
}

// On https both cookies carry the __Host- prefix: Secure, path /, no
// domain, so no other host can set them.
func TestCookiesOnHTTPSAreHostOnly(t *testing.T) {
	f := setup(t, func(d *Deps) { d.Sessions.Secure = true })
	f.account("ada@example.com", false)
	c := f.client()
	r := c.get("/login")
	csrf := setCookieHeader(r, csrfSecureName)
	require.NotEmpty(t, csrf, "the CSRF cookie is %s", csrfSecureName)
	tok := r.doc.Find(`input[name="_csrf"]`).AttrOr("value", "")
	// The client's jar keeps Secure cookies away from http: send it by hand.
	value := strings.TrimPrefix(strings.SplitN(csrf, ";", 2)[0], csrfSecureName+"=")
	r = c.post("/login", url.Values{"_csrf": {tok}, "email": {"ada@example.com"}, "password": {testPassword}}, "Cookie", csrfSecureName+"="+value)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	session := setCookieHeader(r, "__Host-"+SessionCookie)
	for _, ck := range []string{csrf, session} {
		require.NotEmpty(t, ck)
		assert.Contains(t, ck, "Secure")
		assert.Contains(t, ck, "Path=/")
		assert.NotContains(t, strings.ToLower(ck), "domain=")
	}
}

// FormToken reads the first form's token from a page as the views render
// it, and nothing from a page without one.
func TestFormToken(t *testing.T) {
	f := setup(t)
	c := f.client()
	page := c.get("/login")
	tok := FormToken([]byte(page.body))
	assert.Equal(t, page.doc.Find(`form input[name="_csrf"]`).First().AttrOr("value", ""), tok)
	assert.NotEmpty(t, tok)
	assert.Empty(t, FormToken([]byte(`<p>no form</p>`)))
}
