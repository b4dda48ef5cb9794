package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beevik/etree"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/internal/pgtest"
	"github.com/ssobridge/ssobridge/internal/samlidptest"
	"github.com/ssobridge/ssobridge/store"
)

// The users of the test IdP.
var (
	samlAda   = samlidptest.User{Name: "ada", Password: "analytical engine", Email: "ada.lovelace@school.test", GivenName: "Ada", Surname: "Lovelace", Groups: []string{"staff"}}
	samlGrace = samlidptest.User{Name: "grace", Password: "compiler", Email: "grace.hopper@school.test", GivenName: "Grace", Surname: "Hopper", Groups: []string{"staff", "bridge-admins"}}
)

// samlIdP is a real SAML IdP (crewjam/saml's samlidp) with Ada and Grace.
func samlIdP(t *testing.T) *samlidptest.IdP {
	t.Helper()
	idp := samlidptest.Start(t)
	idp.AddUser(t, samlAda)
	idp.AddUser(t, samlGrace)
	return idp
}

func samlYAML(idp *samlidptest.IdP, extra string) string {
	return fmt.Sprintf("saml:\n  idp_metadata_url: %s\n  display_name: Springfield Schools\n  groups_attribute: eduPersonAffiliation\n  admin_group: bridge-admins\n%s",
		idp.MetadataURL(), extra)
}

// samlBridge is a bridge at publicURL (its own listener when empty) whose
// SAML IdP is idp, registered there by the bridge's own metadata.
func samlBridge(t *testing.T, idp *samlidptest.IdP, o testOptions, publicURL, extra string) *testApp {
	t.Helper()
	if o.listener == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		o.listener = ln
	}
	if publicURL == "" {
		publicURL = "http://" + o.listener.Addr().String()
	}
	o.yaml += "server:\n  public_url: " + publicURL + "\n" + samlYAML(idp, extra)
	ta := startTestApp(t, o)
	md := ta.browser(t).get("/saml/metadata")
	require.Equal(t, http.StatusOK, md.status, md.body)
	assert.Equal(t, "application/samlmetadata+xml", md.header.Get("Content-Type"))
	idp.AddService(t, "bridge-"+publicURL, []byte(md.body))
	return ta
}

// samlSignIn starts a sign-in at the bridge (continuing to next), signs u
// in at the IdP and returns the IdP's response form, not yet posted.
func (b *browser) samlSignIn(t *testing.T, next string, u samlidptest.User) samlidptest.Form {
	t.Helper()
	path := "/auth/saml"
	if next != "" {
		path += "?next=" + url.QueryEscape(next)
	}
	r := b.get(path)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	form, err := samlidptest.SignIn(b.c, r.header.Get("Location"), u.Name, u.Password)
	require.NoError(t, err)
	return form
}

// postACS posts the IdP's form to the bridge as the browser's auto-submit
// does: a cross-site POST.
func (b *browser) postACS(form url.Values) page {
	req, _ := http.NewRequest("POST", b.base+"/saml/acs", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "null")
	return b.do(req)
}

// The sign-ins of the issue against a real IdP: first sign-in, a returning
// user (one account, one platform user), the admin group, the Assertion
// signed alone, a deep link through the round trip into the editor.
func TestSAMLSignIn(t *testing.T) {
	idp := samlIdP(t)
	ta := samlBridge(t, idp, testOptions{}, "", "")

	t.Run("first sign-in creates the account, lands on the portal and opens the editor as Ada", func(t *testing.T) {
		b := ta.browser(t)
		r := b.postACS(b.samlSignIn(t, "", samlAda).Values)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/", r.header.Get("Location"))
		p := b.get("/")
		require.Equal(t, http.StatusOK, p.status)
		assert.Contains(t, p.body, "Open video editor")
		a := ta.account(t, samlAda.Email)
		assert.Equal(t, passhash.NoPassword, a.PasswordHash, "no bridge password")
		assert.Equal(t, "Ada", a.FirstName)
		assert.Equal(t, "Lovelace", a.LastName)
		assert.False(t, a.Admin)
		_, editor := b.follow(t, ta, b.launch())
		assert.Contains(t, editor, "Signed in as Ada Lovelace")
		assert.Len(t, ta.sim.Users(samlAda.Email), 1)
	})
	t.Run("returning user keeps one account and one platform user", func(t *testing.T) {
		before, _ := ta.store.CountAccounts(context.Background())
		b := ta.browser(t)
		r := b.postACS(b.samlSignIn(t, "", samlAda).Values)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		after, _ := ta.store.CountAccounts(context.Background())
		assert.Equal(t, before, after, "the same account")
		_, editor := b.follow(t, ta, b.launch())
		assert.Contains(t, editor, "Signed in as Ada Lovelace")
		assert.Len(t, ta.sim.Users(samlAda.Email), 1, "the same platform user")
	})
	t.Run("the admin group makes an admin", func(t *testing.T) {
		b := ta.browser(t)
		r := b.postACS(b.samlSignIn(t, "", samlGrace).Values)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.True(t, ta.account(t, samlGrace.Email).Admin)
		assert.Equal(t, http.StatusOK, b.get("/admin/accounts").status)
	})
	t.Run("the Assertion signed alone", func(t *testing.T) {
		b := ta.browser(t)
		form := b.samlSignIn(t, "", samlAda).Values
		form = alterResponse(t, form, func(doc *etree.Document) { doc.Root().RemoveChild(signatureOf(doc.Root())) })
		r := b.postACS(form)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, http.StatusOK, b.get("/").status)
	})
	t.Run("a deep link through the round trip", func(t *testing.T) {
		b := ta.browser(t)
		r := b.get("/open?return_to=" + url.QueryEscape("/editor/projects/9"))
		login := r.header.Get("Location")
		page := b.get(login)
		require.Contains(t, page.body, `id="saml-sign-in"`)
		assert.Contains(t, page.body, "Sign in with Springfield Schools")
		next, _ := url.Parse(login)
		r = b.postACS(b.samlSignIn(t, next.Query().Get("next"), samlAda).Values)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/open?return_to=%2Feditor%2Fprojects%2F9", r.header.Get("Location"))
		path, editor := b.follow(t, ta, b.get(r.header.Get("Location")))
		assert.Equal(t, "/editor/projects/9", path)
		assert.Contains(t, editor, "Signed in as Ada Lovelace")
	})
	t.Run("two sign-ins started in two tabs both complete", func(t *testing.T) {
		b := ta.browser(t)
		first := b.samlSignIn(t, "/open?return_to=%2Feditor%2Fprojects%2F1", samlAda)
		second := b.samlSignIn(t, "/open?return_to=%2Feditor%2Fprojects%2F2", samlAda)
		r := b.postACS(second.Values)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		r = b.postACS(first.Values)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/open?return_to=%2Feditor%2Fprojects%2F1", r.header.Get("Location"))
	})
}

// With saml.create_accounts off a newcomer gets a clear page; an existing
// account of a domain the IdP is trusted for still signs in.
func TestSAMLWithoutAccountCreation(t *testing.T) {
	idp := samlIdP(t)
	ta := samlBridge(t, idp, testOptions{}, "", "  create_accounts: false\n  email_domains: [school.test]\n")
	b := ta.browser(t)
	r := b.postACS(b.samlSignIn(t, "", samlAda).Values)
	assert.Equal(t, http.StatusForbidden, r.status)
	assert.Contains(t, r.body, "did not let you in")
	_, err := ta.store.AccountByEmail(context.Background(), samlAda.Email)
	assert.ErrorIs(t, err, store.ErrNotFound, "no account made")
	assert.Equal(t, "/login", b.get("/").header.Get("Location"), "no session")

	ta.addNamedAccount(t, samlAda.Email, "Ada", "Lovelace", false)
	r = b.postACS(b.samlSignIn(t, "", samlAda).Values)
	assert.Equal(t, http.StatusSeeOther, r.status, r.body)
	assert.Equal(t, http.StatusOK, b.get("/").status)
}

// Each refusal of the issue through the bridge's ACS: its page and status,
// no session (a browser already signed in keeps its own, and the replay is
// still refused), and one log line saying why.
func TestSAMLRefusals(t *testing.T) {
	idp := samlIdP(t)
	ta := samlBridge(t, idp, testOptions{}, "", "")
	edit := func(f func(doc *etree.Document)) func(t *testing.T, b *browser, form url.Values) url.Values {
		return func(t *testing.T, _ *browser, form url.Values) url.Values { return alterResponse(t, form, f) }
	}
	tests := []struct {
		name   string
		alter  func(t *testing.T, b *browser, form url.Values) url.Values
		status int
		page   string // the page's id
		reason string // in the log line
	}{
		{"content edited", edit(func(doc *etree.Document) {
			doc.FindElement("//NameID").SetText(samlGrace.Email)
		}), http.StatusBadRequest, "idp-invalid", "Signature could not be verified"},
		{"signatures stripped", edit(func(doc *etree.Document) {
			doc.Root().RemoveChild(signatureOf(doc.Root()))
			a := doc.FindElement("//Assertion")
			a.RemoveChild(signatureOf(a))
		}), http.StatusBadRequest, "idp-invalid", "signature element not present"},
		{"wrapping: an unsigned assertion before the signed one", edit(func(doc *etree.Document) {
			doc.Root().RemoveChild(signatureOf(doc.Root()))
			a := doc.FindElement("//Assertion")
			e := a.Copy()
			e.RemoveChild(signatureOf(e))
			e.CreateAttr("ID", "id-evil")
			e.FindElement(".//NameID").SetText(samlGrace.Email)
			doc.Root().InsertChildAt(a.Index(), e)
		}), http.StatusBadRequest, "idp-invalid", "exactly one Assertion"},
		{"a DTD", edit(func(doc *etree.Document) {
			doc.InsertChildAt(0, etree.NewDirective(`DOCTYPE r [<!ENTITY a "aaaaaaaaaa">]`))
		}), http.StatusBadRequest, "idp-invalid", "DTD"},
		{"an oversized body", func(_ *testing.T, _ *browser, form url.Values) url.Values {
			form.Set("SAMLResponse", strings.Repeat("PEE+", 300<<10/4))
			return form
		}, http.StatusBadRequest, "idp-invalid", "more than 262144"},
		{"started in another browser", func(t *testing.T, b *browser, form url.Values) url.Values {
			jar, _ := cookiejar.New(nil)
			b.c.Jar = jar // the flow cookie stays behind
			return form
		}, http.StatusBadRequest, "idp-state", "no sign-in started in this browser"},
		{"an earlier response under a new sign-in", func(t *testing.T, b *browser, form url.Values) url.Values {
			// The same browser signs in with it, then starts another
			// sign-in (a fresh flow cookie) and posts the old response
			// again under the new flow's RelayState.
			r := b.postACS(form)
			require.Equal(t, http.StatusSeeOther, r.status, r.body)
			fresh := b.samlSignIn(t, "", samlAda)
			form.Set("RelayState", fresh.Values.Get("RelayState"))
			return form
		}, http.StatusBadRequest, "idp-state", "InResponseTo"},
		{"a replay under its own flow, signed in already", func(t *testing.T, b *browser, form url.Values) url.Values {
			// A copy of the flow cookie from before the response was
			// used: only the store remembers the assertion.
			u, _ := url.Parse(b.base)
			saved := b.c.Jar.Cookies(u)
			r := b.postACS(form)
			require.Equal(t, http.StatusSeeOther, r.status, r.body)
			b.c.Jar.SetCookies(u, saved)
			return form
		}, http.StatusBadRequest, "idp-state", "used before"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := ta.browser(t)
			form := b.samlSignIn(t, "", samlAda).Values
			form = tt.alter(t, b, form)
			signedIn := b.get("/").status == http.StatusOK
			before := strings.Count(ta.logs.String(), "SAML sign-in refused")
			r := b.postACS(form)
			assert.Equal(t, tt.status, r.status)
			assert.Contains(t, r.body, `data-class="`+tt.page+`"`)
			logs := ta.logs.String()
			assert.Equal(t, before+1, strings.Count(logs, "SAML sign-in refused"), "one log line")
			assert.Contains(t, logs[strings.LastIndex(logs, "SAML sign-in refused"):], tt.reason)
			if signedIn {
				assert.Equal(t, http.StatusOK, b.get("/").status, "the session it had is kept")
			} else {
				assert.Equal(t, "/login", b.get("/").header.Get("Location"), "no session")
			}
		})
	}
	t.Run("unsolicited while IdP-initiated sign-in is off", func(t *testing.T) {
		b := ta.browser(t)
		b.samlSignIn(t, "", samlAda) // the IdP's session
		idp.AddShortcut(t, "bridge", "http://"+ta.srv.Listener.Addr().String()+"/saml/metadata")
		form, err := samlidptest.Unsolicited(b.c, idp.URL+"/login/bridge")
		require.NoError(t, err)
		r := b.postACS(form.Values)
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, `data-class="idp-state"`)
		assert.Equal(t, "/login", b.get("/").header.Get("Location"), "no session")
	})
}

// Conditions past their time (the bridge's clock ahead of the IdP's by
// more than the skew allowance) and not yet valid (behind).
func TestSAMLTimes(t *testing.T) {
	idp := samlIdP(t)
	var offset atomic.Int64 // the bridge's clock against the IdP's
	ta := samlBridge(t, idp, testOptions{now: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }}, "", "")
	for _, tt := range []struct {
		shift time.Duration
		text  string
	}{{4 * time.Minute, "expired"}, {-10 * time.Minute, "not yet valid"}} {
		// The sign-in starts in agreement (the IdP checks the request's
		// time too); the response arrives at a bridge whose clock is off.
		offset.Store(0)
		b := ta.browser(t)
		form := b.samlSignIn(t, "", samlAda).Values
		offset.Store(int64(tt.shift))
		r := b.postACS(form)
		assert.Equal(t, http.StatusBadRequest, r.status, tt.text)
		assert.Contains(t, r.body, `data-class="idp-clock"`, tt.text)
		assert.Contains(t, ta.logs.String(), tt.text)
		assert.Equal(t, "/login", b.get("/").header.Get("Location"), "no session")
	}
}

// Two instances behind one URL on one PostgreSQL database: a response
// used on one is refused on the other.
func TestSAMLReplayAcrossInstances(t *testing.T) {
	dsn := pgtest.DSN(t)
	idp := samlIdP(t)
	lnA, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	public := "http://" + lnA.Addr().String()
	sim := sharedPlatform(t, nil) // one platform for both, as behind one URL
	a := samlBridge(t, idp, testOptions{postgres: dsn, platform: sim, listener: lnA}, public, "")
	b := samlBridge(t, idp, testOptions{postgres: dsn, platform: sim}, public, "")

	onA := a.browser(t)
	form := onA.samlSignIn(t, "", samlAda).Values
	u, _ := url.Parse(onA.base)
	flowCookie := onA.c.Jar.Cookies(u)
	r := onA.postACS(form)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)

	// The same response with a copy of the flow cookie, at the other
	// instance: its flow matches, its signature verifies, and it is
	// refused as used.
	onB := b.browser(t)
	ub, _ := url.Parse(onB.base)
	onB.c.Jar.SetCookies(ub, flowCookie)
	r = onB.postACS(form)
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, r.body, `data-class="idp-state"`)
	assert.Contains(t, b.logs.String(), "used before")
	assert.Equal(t, "/login", onB.get("/").header.Get("Location"), "no session on the other instance")

	// The other instance takes a response of its own.
	fresh := onB.samlSignIn(t, "", samlAda).Values
	r = onB.postACS(fresh)
	assert.Equal(t, http.StatusSeeOther, r.status, r.body)
}

// The IdP's metadata unreachable at start: the bridge starts, /readyz
// names SAML, the button leads to the IdP-unavailable page, and sign-in
// recovers by itself once the metadata can be read.
func TestSAMLIdPDownAtStart(t *testing.T) {
	idp := samlIdP(t)
	idp.SetDown(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	public := "http://" + ln.Addr().String()
	ta := startTestApp(t, testOptions{listener: ln, yaml: "server:\n  public_url: " + public + "\n" + samlYAML(idp, "")})
	assert.Contains(t, ta.logs.String(), "metadata unreadable at start")
	b := ta.browser(t)
	r := b.get("/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.Contains(t, r.body, `"saml":"unavailable"`)
	r = b.get("/auth/saml")
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.Contains(t, r.body, `data-class="idp-unavailable"`)
	assert.Contains(t, b.get("/login").body, "Sign in with Springfield Schools")

	idp.SetDown(false)
	idp.AddService(t, "bridge", []byte(b.get("/saml/metadata").body))
	back := time.Now()
	require.Eventually(t, func() bool { return b.get("/readyz").status == http.StatusOK }, time.Minute, 200*time.Millisecond,
		"ready within a minute of the metadata becoming readable")
	t.Logf("SAML ready %s after the metadata became readable", time.Since(back).Round(100*time.Millisecond))
	assert.Contains(t, ta.logs.String(), "SAML identity provider's metadata read")
	r = b.postACS(b.samlSignIn(t, "", samlAda).Values)
	assert.Equal(t, http.StatusSeeOther, r.status, r.body)
}

// alterResponse changes the response XML in an IdP form.
func alterResponse(t *testing.T, form url.Values, f func(doc *etree.Document)) url.Values {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(form.Get("SAMLResponse"))
	require.NoError(t, err)
	doc := etree.NewDocument()
	require.NoError(t, doc.ReadFromBytes(raw))
	f(doc)
	out, err := doc.WriteToBytes()
	require.NoError(t, err)
	altered := url.Values{}
	for k, v := range form {
		altered[k] = append([]string(nil), v...)
	}
	altered.Set("SAMLResponse", base64.StdEncoding.EncodeToString(out))
	return altered
}

// signatureOf is el's own enveloped signature.
func signatureOf(el *etree.Element) *etree.Element {
	for _, c := range el.ChildElements() {
		if c.Tag == "Signature" {
			return c
		}
	}
	return nil
}

// A person signs in through the partner's SAML IdP in a real browser: a
// deep link, the bridge's "Sign in with ..." button, the IdP's login page,
// its self-submitting form, then the editor at the link's path.
func TestBrowserSignInWithSAML(t *testing.T) {
	idp := samlIdP(t)
	ta := samlBridge(t, idp, testOptions{}, "", "")
	ctx := newTab(t)
	start := time.Now()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/open?return_to=%2Feditor%2Fprojects%2F5"),
		chromedp.WaitVisible(chromedp.ID("saml-sign-in"))))
	screenshot(t, ctx, "13-login-with-saml")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("saml-sign-in")),
		chromedp.WaitVisible(chromedp.CSS(`input[name="user"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="user"]`), samlAda.Name),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), samlAda.Password),
		chromedp.Click(chromedp.CSS(`input[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("who"))))
	t.Logf("deep link to the editor through the SAML IdP's login page: %s", time.Since(start).Round(time.Millisecond))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	u, err := url.Parse(loc)
	require.NoError(t, err)
	assert.Equal(t, "/editor/projects/5", u.Path)
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("who")))
	require.NoError(t, err)
	assert.Equal(t, "Signed in as Ada Lovelace", who)
	assert.Len(t, ta.sim.Users(samlAda.Email), 1)
}

// `ssobridge check` reads the SAML metadata as the bridge would: what the
// IdP names and what to enter there; unreadable, it fails (exit 1).
func TestCheckSAML(t *testing.T) {
	idp := samlIdP(t)
	cfg, _ := writeConfig(t, "server:\n  public_url: https://sso.partner.example\n"+samlYAML(idp, ""))
	code, out, stderr := runCLI(t, "", nil, "check", "--config", cfg)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "at the IdP, enter: entity ID https://sso.partner.example/saml/metadata, ACS URL https://sso.partner.example/saml/acs (HTTP-POST), NameID format emailAddress")
	assert.Contains(t, out, "the IdP: entity "+idp.MetadataURL()+", sign-in at "+idp.URL+"/sso, 1 signing certificate(s)")
	assert.Contains(t, out, "verdict:   SAML OK")

	idp.SetDown(true)
	code, out, _ = runCLI(t, "", nil, "check", "--config", cfg)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "verdict:   SAML UNAVAILABLE")
	assert.Contains(t, out, "503 Service Unavailable")

	bad, _ := writeConfig(t, "saml:\n  idp_metadata_url: http://idp.example/metadata\n  sp_cert_file: /nonexistent.pem\n")
	code, _, stderr = runCLI(t, "", nil, "check", "--config", bad)
	assert.Equal(t, 2, code, "bad configuration: exit 2")
	assert.Contains(t, stderr, "saml.idp_metadata_url")
	assert.Contains(t, stderr, "must be the https URL")
	assert.Contains(t, stderr, "saml.sp_cert_file")
}

// With SAML off its routes are not there.
func TestSAMLRoutesOffWithoutMetadata(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	b := ta.browser(t)
	for _, path := range []string{"/auth/saml", "/saml/metadata"} {
		assert.Equal(t, http.StatusNotFound, b.get(path).status, path)
	}
	assert.Equal(t, http.StatusNotFound, b.postACS(url.Values{"SAMLResponse": {"x"}}).status)
	assert.NotContains(t, b.get("/login").body, "saml-sign-in")
	assert.NotContains(t, b.get("/readyz").body, "saml")
}

// The sign-in as it runs in service: the bridge over https at one site,
// the IdP over https at another, so the IdP's self-submitting form is a
// cross-site POST. The flow cookie (SameSite=None; Secure) comes back with
// it, and the session cookie set in its answer holds on the landing page.
func TestBrowserSAMLAcrossSites(t *testing.T) {
	idp := samlidptest.StartTLS(t, "idp.test")
	idp.AddUser(t, samlAda)
	file := filepath.Join(t.TempDir(), "idp-metadata.xml")
	require.NoError(t, os.WriteFile(file, idp.Metadata(t), 0o600))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	public := "https://bridge.test:" + port
	ta := startTestApp(t, testOptions{listener: ln, tls: true, yaml: "server:\n  public_url: " + public + "\n" +
		"saml:\n  idp_metadata_file: " + file + "\n  display_name: Springfield Schools\n"})
	md := ta.srv.Client().Get
	resp, err := md(ta.srv.URL + "/saml/metadata")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	idp.AddService(t, "bridge", body)

	ctx := newTab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(public+"/login"),
		chromedp.WaitVisible(chromedp.ID("saml-sign-in")),
		chromedp.Click(chromedp.ID("saml-sign-in")),
		chromedp.WaitVisible(chromedp.CSS(`input[name="user"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="user"]`), samlAda.Name),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), samlAda.Password),
		chromedp.Click(chromedp.CSS(`input[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("open-editor"))))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	assert.Equal(t, public+"/", loc, "signed in, on the bridge's home page")
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("signed-in-as")))
	require.NoError(t, err)
	assert.Equal(t, "Ada Lovelace", who)
	assert.NotContains(t, ta.logs.String(), "SAML sign-in refused")
}
