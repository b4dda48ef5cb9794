package handlers

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/handlers/console"
	"github.com/ssobridge/ssobridge/internal/fakeclock"
	"github.com/ssobridge/ssobridge/internal/syncbuf"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/oidc"
	"github.com/ssobridge/ssobridge/wayin/portal"
	"github.com/ssobridge/ssobridge/wayin/samlsso"
)

// fixture is the handlers' Echo app over httptest, on a real SQLite store,
// with fakes of the other interfaces it declares and a settable clock.
type fixture struct {
	t        *testing.T
	accts    *testStore
	pw       *fakePasswords
	reg      *fakeRegulator
	launcher *fakeLauncher
	platform *fakePlatform
	idp      *fakeIdP
	saml     *fakeSAML
	clock    *fakeclock.Clock
	logs     *syncbuf.Buffer
	srv      *httptest.Server
	deps     Deps
}

// reconfigure serves, at the same address and over the same fakes, the
// app built from the fixture's Deps as tweak changes them (a restart with
// another configuration).
func (f *fixture) reconfigure(tweak func(*Deps)) {
	tweak(&f.deps)
	f.srv.Config.Handler = New(f.deps)
}

const testPassword = "correct horse battery"

// The portal handoff of the fixture (a real portal.Verifier).
var (
	portalSecret   = []byte("test-portal-secret-of-at-least-32-bytes")
	portalIssuer   = "https://portal.example"
	portalAudience = "https://sso.example"
)

// portalToken signs a handoff token for email as the portal would, at the
// fixture's clock.
func (f *fixture) portalToken(c portal.Claims) string {
	tok, err := portal.SignHS256(portalSecret, portalIssuer, portalAudience, c, f.clock.Now())
	require.NoError(f.t, err)
	return tok
}

// wayOf is the way in of type W among d's (nil if none).
func wayOf[W wayin.Way](d *Deps) W {
	for _, w := range d.Ways {
		if x, ok := w.(W); ok {
			return x
		}
	}
	var none W
	return none
}

// withoutWay drops the ways in of type W from d's.
func withoutWay[W wayin.Way](d *Deps) {
	d.Ways = slices.DeleteFunc(slices.Clone(d.Ways), func(w wayin.Way) bool { _, ok := w.(W); return ok })
}

// withWay puts w in place of d's way of its type (or adds it).
func withWay[W wayin.Way](d *Deps, w W) {
	withoutWay[W](d)
	d.Ways = append(d.Ways, w)
}

// testDomains are the domains the fixture's ways in are trusted for: the
// tests' addresses.
var testDomains = []string{"example.com", "partner.example", "school.example"}

// setup builds the app; tweak adjusts its Deps before New.
func setup(t *testing.T, tweak ...func(*Deps)) *fixture {
	t.Helper()
	clock := fakeclock.New(time.Time{})
	f := &fixture{t: t, accts: newTestStore(t, clock.Now), pw: &fakePasswords{}, reg: &fakeRegulator{banned: map[string]time.Time{}},
		launcher: &fakeLauncher{}, idp: &fakeIdP{}, saml: &fakeSAML{}, clock: clock, logs: &syncbuf.Buffer{},
		platform: &fakePlatform{conn: console.Connection{BaseURL: "https://platform.example", Method: "hmac", Scheme: "SVC", KeyID: "key-1"},
			report: console.CheckReport{Verdict: "ok", Summary: "OK: all good."}}}
	d := Deps{Store: StoreOf(f.accts.SQLite), Passwords: f.pw, Regulator: f.reg, Launcher: f.launcher, Platform: f.platform,
		Sessions: SessionConfig{HashKey: testHashKey, BlockKey: testBlockKey, MaxAge: 12 * time.Hour, IdleTimeout: 2 * time.Hour},
		Logger:   slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Now: f.clock.Now,
		AuditRetention: 90 * 24 * time.Hour}
	v, err := portal.NewVerifier(portal.Config{Secret: portalSecret, Issuer: portalIssuer, Audience: portalAudience}, f.accts, f.clock.Now)
	require.NoError(t, err)
	d.PasswordForm = PasswordForm{Fallback: true}
	d.Ways = []wayin.Way{
		&portal.Way{Tokens: v, Source: signin.Source{ID: "portal:" + portalIssuer, Name: "portal", Key: "portal", CreateAccounts: true, EmailDomains: testDomains}},
		&oidc.Way{RP: f.idp, DisplayName: "Test IdP",
			Source: signin.Source{ID: "oidc:https://idp.example", Name: "identity provider", Key: "oidc", CreateAccounts: true, AdminAuthority: true, EmailDomains: testDomains}},
		&samlsso.Way{IdP: f.saml, DisplayName: "Test SAML",
			Source: signin.Source{ID: "saml", Name: "SAML identity provider", Key: "saml", CreateAccounts: true, AdminAuthority: true, EmailDomains: testDomains}},
	}
	for _, fn := range tweak {
		fn(&d)
	}
	f.deps = d
	e := New(d)
	f.srv = httptest.NewServer(e)
	t.Cleanup(f.srv.Close)
	return f
}

// account adds an account whose password is testPassword.
func (f *fixture) account(email string, admin bool) store.Account {
	f.t.Helper()
	a, err := f.accts.CreateAccount(f.t.Context(), store.NewAccount{Email: email, FirstName: "Ada", LastName: "Lovelace",
		PasswordHash: "hash:" + testPassword, Admin: admin})
	require.NoError(f.t, err)
	return a
}

// client is a browser without JavaScript: a cookie jar, no redirects
// followed, every answer parsed.
type client struct {
	t    *testing.T
	base string
	c    *http.Client
}

func (f *fixture) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: f.t, base: f.srv.URL, c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// response is one answer, its body parsed.
type response struct {
	status int
	header http.Header
	body   string
	doc    *goquery.Document
}

// class is the error page's class (data-class), "" on other pages.
func (r *response) class() string { return r.doc.Find("#error-page").AttrOr("data-class", "") }

// text is the trimmed text of the first element matching sel.
func (r *response) text(sel string) string { return strings.TrimSpace(r.doc.Find(sel).First().Text()) }

// form is the value of the page's first form field named name.
func (r *response) form(name string) string {
	return r.doc.Find(`input[name="`+name+`"]`).First().AttrOr("value", "")
}

func (c *client) do(req *http.Request) *response {
	c.t.Helper()
	resp, err := c.c.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	require.NoError(c.t, err)
	return &response{status: resp.StatusCode, header: resp.Header, body: string(body), doc: doc}
}

// get fetches path; header holds name, value pairs.
func (c *client) get(path string, header ...string) *response {
	req, _ := http.NewRequest("GET", c.base+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return c.do(req)
}

// post sends form to path; header holds name, value pairs.
func (c *client) post(path string, form url.Values, header ...string) *response {
	req, _ := http.NewRequest("POST", c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return c.do(req)
}

// csrf is the token of the first form on path.
func (c *client) csrf(path string) string {
	c.t.Helper()
	r := c.get(path)
	tok := FormToken([]byte(r.body))
	require.NotEmpty(c.t, tok, "no _csrf on %s (%d)", path, r.status)
	return tok
}

// submit posts form with a token taken from the page at from.
func (c *client) submit(from, path string, form url.Values) *response {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("_csrf", c.csrf(from))
	return c.post(path, form)
}

// signIn signs email in with testPassword.
func (c *client) signIn(email string) {
	c.t.Helper()
	r := c.submit("/login", "/login", url.Values{"email": {email}, "password": {testPassword}})
	require.Equal(c.t, http.StatusSeeOther, r.status, r.body)
}

// hop follows the step a cross-site post's arrival takes through GET
// /arrive (as a browser follows the 303), and returns what that answers;
// any other answer is returned as it is.
func (c *client) hop(r *response) *response {
	c.t.Helper()
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), arrivePath+"?") {
		return r
	}
	return c.get(r.header.Get("Location"))
}

// cookie is the value of the named cookie the browser holds ("" if none).
func (c *client) cookie(name string) string {
	u, _ := url.Parse(c.base)
	for _, ck := range c.c.Jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

// setCookie plants a cookie in the browser.
func (c *client) setCookie(name, value string) {
	u, _ := url.Parse(c.base)
	c.c.Jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/"}})
}

// setCookieHeader is every Set-Cookie of the named cookie in a response,
// joined ("" if none).
func setCookieHeader(r *response, name string) string {
	var out []string
	for _, v := range r.header.Values("Set-Cookie") {
		if strings.HasPrefix(v, name+"=") {
			out = append(out, v)
		}
	}
	return strings.Join(out, "\n")
}
