package e2e

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/internal/skipnote"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin/portal"
)

const (
	e2ePortalSecret = "e2e-portal-secret-of-at-least-32-bytes"
	e2ePortalIssuer = "https://portal.example"
	e2ePortalAud    = "https://sso.example"
)

// portalYAML configures the handoff with the test's HS256 key.
var portalYAML = "portal:\n  jwt_secret: " + e2ePortalSecret + "\n  jwt_issuer: " + e2ePortalIssuer + "\n  jwt_audience: " + e2ePortalAud + "\n"

func portalToken(t *testing.T, c portal.Claims) string {
	tok, err := portal.SignHS256([]byte(e2ePortalSecret), e2ePortalIssuer, e2ePortalAud, c, time.Now())
	require.NoError(t, err)
	return tok
}

// follow takes a launch's 303 through the platform's exchange and returns
// where the browser lands and what the editor says (on the exchange's
// host, which may not be the API's).
func (b *browser) follow(t *testing.T, ta *testApp, launch page) (path, body string) {
	t.Helper()
	require.Equal(t, http.StatusSeeOther, launch.status, launch.body)
	exchange, err := url.Parse(launch.header.Get("Location"))
	require.NoError(t, err)
	resp := b.get2(exchange.String())
	require.Equal(t, http.StatusFound, resp.status)
	path = resp.header.Get("Location")
	landing, err := exchange.Parse(path)
	require.NoError(t, err)
	return path, b.get2(landing.String()).body
}

// The handoff end to end: a portal user never seen before lands in the
// editor, at the token's return_to, signed in to the bridge too; a replay
// is refused.
func TestPortalHandoffLandsInTheEditor(t *testing.T) {
	ta := startTestApp(t, testOptions{yaml: portalYAML})
	b := ta.browser(t)
	tok := portalToken(t, portal.Claims{Email: "grace@example.com", GivenName: "Grace", FamilyName: "Hopper", ReturnTo: "/editor/projects/42"})
	path, editor := b.follow(t, ta, b.post("/sso/jwt", url.Values{"jwt": {tok}}, "Sec-Fetch-Site", "cross-site"))
	assert.Equal(t, "/editor/projects/42", path)
	assert.Contains(t, editor, "Signed in as Grace Hopper")
	assert.Len(t, ta.sim.Users("grace@example.com"), 1)
	assert.Equal(t, http.StatusOK, b.get("/").status, "signed in to the bridge as well")

	r := ta.browser(t).post("/sso/jwt", url.Values{"jwt": {tok}})
	assert.Equal(t, http.StatusUnauthorized, r.status, "replayed")
	assert.Contains(t, ta.logs.String(), "a replay")
}

// A deep link while signed out: the sign-in page, then the editor at the
// link's path.
func TestDeepLinkThroughSignIn(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	ta.addAccount(t, "ada@example.com", false)
	b := ta.browser(t)
	r := b.get("/open?return_to=" + url.QueryEscape("/editor/projects/42"))
	require.Equal(t, http.StatusSeeOther, r.status)
	login := r.header.Get("Location")
	require.True(t, strings.HasPrefix(login, "/login?next="), login)
	page := b.get(login)
	next := regexp.MustCompile(`name="next" value="([^"]*)"`).FindStringSubmatch(page.body)
	require.NotNil(t, next, "the form carries next")
	r = b.post("/login", url.Values{"_csrf": {b.csrf(login)}, "email": {"ada@example.com"}, "password": {testPassword}, "next": {htmlUnescape(next[1])}})
	require.Equal(t, http.StatusSeeOther, r.status)
	path, editor := b.follow(t, ta, b.get(r.header.Get("Location")))
	assert.Equal(t, "/editor/projects/42", path)
	assert.Contains(t, editor, "Signed in as Ada Lovelace")
}

func htmlUnescape(s string) string { return strings.ReplaceAll(s, "&amp;", "&") }

// A jti used on one instance is refused on another sharing the store.
func TestPortalTokenIsSingleUseAcrossInstances(t *testing.T) {
	a, b := instancePair(t, testOptions{yaml: portalYAML})
	tok := portalToken(t, portal.Claims{Email: "grace@example.com"})
	assert.Equal(t, http.StatusSeeOther, a.browser(t).get("/sso/jwt?jwt="+tok).status)
	r := b.browser(t).get("/sso/jwt?jwt=" + tok)
	assert.Equal(t, http.StatusUnauthorized, r.status, "replayed on the other instance")
	// A jti with a NUL byte is remembered like any other (PostgreSQL text
	// holds no NUL: the store keeps a hash).
	nul, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": e2ePortalIssuer, "aud": e2ePortalAud, "iat": time.Now().Unix(),
		"exp": time.Now().Add(time.Minute).Unix(), "jti": "x\x00y", "email": "grace@example.com"}).SignedString([]byte(e2ePortalSecret))
	require.NoError(t, err)
	assert.Equal(t, http.StatusSeeOther, a.browser(t).get("/sso/jwt?jwt="+url.QueryEscape(nul)).status)
	assert.Equal(t, http.StatusUnauthorized, b.browser(t).get("/sso/jwt?jwt="+url.QueryEscape(nul)).status)
}

// An imported account (no password) gets a set-password link from the
// command line, sets its password there and is signed in; the link then
// is gone, and bad input changes nothing.
func TestUserInvite(t *testing.T) {
	cfg, dsn := writeConfig(t, "server:\n  public_url: https://sso.example\n")
	code, _, stderr := runCLI(t, "", nil, "user", "invite", "--config", cfg, "--email", "nobody@example.com")
	assert.Equal(t, 2, code, "no such account")
	assert.Contains(t, stderr, "no account with email nobody@example.com")
	code, _, stderr = runCLI(t, "", nil, "user", "invite", "--config", cfg, "--email", "not-an-email")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "not an e-mail address")

	ta := startTestApp(t, testOptions{dsn: dsn})
	_, err := ta.store.CreateAccount(t.Context(), store.NewAccount{Email: "imported@example.com", FirstName: "Im", LastName: "Ported", PasswordHash: passhash.NoPassword})
	require.NoError(t, err)
	code, out, stderr := runCLI(t, "", nil, "user", "invite", "--config", cfg, "--email", "imported@example.com")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "the link's base URL https://sso.example from server.public_url")
	link := regexp.MustCompile(`https://sso\.example(/set-password\?token=\S+)`).FindStringSubmatch(out)
	require.NotNil(t, link, out)

	// The README's port tip: the demo runs with SSOBRIDGE_SERVER_ADDR
	// exported, and so does the command: its link is the running
	// bridge's, and it says where its base URL came from.
	plain := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(plain, []byte("store:\n  dsn: "+dsn+"\n"), 0o600))
	addr := strings.TrimPrefix(ta.srv.URL, "http://")
	code, out, stderr = runCLI(t, "", []string{"SSOBRIDGE_SERVER_ADDR=" + addr}, "user", "invite", "--config", plain, "--email", "imported@example.com")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "the link's base URL "+ta.srv.URL+" from server.addr ("+addr+")")
	exported := regexp.MustCompile(regexp.QuoteMeta(ta.srv.URL) + `(/set-password\?token=\S+)`).FindStringSubmatch(out)
	require.NotNil(t, exported, out)
	assert.Equal(t, http.StatusOK, ta.browser(t).get(exported[1]).status, "the link works on the running bridge")
	// It replaced the first link; the one below is made again.
	code, out, stderr = runCLI(t, "", nil, "user", "invite", "--config", cfg, "--email", "imported@example.com")
	require.Equal(t, 0, code, stderr)
	link = regexp.MustCompile(`https://sso\.example(/set-password\?token=\S+)`).FindStringSubmatch(out)
	require.NotNil(t, link, out)
	b := ta.browser(t)
	form := url.Values{"_csrf": {b.csrf(link[1])}, "token": {strings.TrimPrefix(link[1], "/set-password?token=")},
		"password": {"a new long password"}, "confirm": {"a new long password"}}
	r := b.post("/set-password", form)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	assert.Equal(t, http.StatusOK, b.get("/").status, "signed in")
	assert.Equal(t, http.StatusSeeOther, ta.browser(t).login("imported@example.com", "a new long password").status, "the password signs in")
	assert.Equal(t, http.StatusGone, ta.browser(t).get(link[1]).status, "used once")
}

// portal-link prints a URL that signs in through the handoff and opens the
// editor at --return-to; bad input exits 2.
func TestPortalLinkCommand(t *testing.T) {
	cfg, dsn := writeConfig(t, "server:\n  public_url: https://sso.example\n"+portalYAML)
	code, out, stderr := runCLI(t, "", nil, "portal-link", "--config", cfg, "--email", "lin@example.com", "--first-name", "Lin", "--last-name", "Test", "--return-to", "/editor/x")
	require.Equal(t, 0, code, stderr)
	u, err := url.Parse(strings.TrimSpace(out))
	require.NoError(t, err)
	assert.Equal(t, "https://sso.example/sso/jwt", u.Scheme+"://"+u.Host+u.Path)
	assert.Equal(t, "the link's base URL https://sso.example from server.public_url\n", stderr, "stdout is the link alone; stderr says its base")

	ta := startTestApp(t, testOptions{dsn: dsn, yaml: portalYAML})
	b := ta.browser(t)
	path, editor := b.follow(t, ta, b.get("/sso/jwt?"+u.RawQuery))
	assert.Equal(t, "/editor/x", path)
	assert.Contains(t, editor, "Signed in as Lin Test")

	for _, args := range [][]string{
		{"--email", "bad"}, {"--email", "a@example.com", "--return-to", "//evil.example"},
	} {
		code, _, _ := runCLI(t, "", nil, append([]string{"portal-link", "--config", cfg}, args...)...)
		assert.Equal(t, 2, code, "%v", args)
	}
	// The demo's portal is trusted for portal.example only: a link for
	// another address would be refused, so none is printed.
	demo, _ := writeConfig(t, "")
	code, out, stderr = runCLI(t, "", nil, "portal-link", "--config", demo, "--email", "ada@example.com")
	assert.Equal(t, 2, code, out)
	assert.Empty(t, out, "no link")
	assert.Contains(t, stderr, "the portal is trusted for portal.example only (portal.email_domains)")
	code, out, _ = runCLI(t, "", nil, "portal-link", "--config", demo, "--email", "ada@portal.example")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "/sso/jwt?jwt=")
	noKey, _ := writeConfig(t, "platform:\n  base_url: https://p.example\n  api_key: k\n  api_secret: s\n")
	code, _, stderr = runCLI(t, "", nil, "portal-link", "--config", noKey, "--email", "a@example.com")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "portal.jwt_secret")
}

// The sample portal is the embedded demo's alone: with a real platform it
// is not served, and without a portal key neither is the handoff.
func TestSamplePortalOnlyInTheDemo(t *testing.T) {
	demo := startTestApp(t, testOptions{})
	assert.Equal(t, http.StatusOK, demo.browser(t).get("/demo/portal").status)
	sim := sharedPlatform(t, nil)
	real := startTestApp(t, testOptions{platform: sim})
	assert.Equal(t, http.StatusNotFound, real.browser(t).get("/demo/portal").status)
	assert.Equal(t, http.StatusNotFound, real.browser(t).get("/sso/jwt?jwt=x").status, "no portal key: no handoff")
	configured := startTestApp(t, testOptions{platform: sim, yaml: portalYAML})
	assert.Equal(t, http.StatusNotFound, configured.browser(t).get("/demo/portal").status, "a configured portal: no sample")
	assert.Equal(t, http.StatusUnauthorized, configured.browser(t).get("/sso/jwt?jwt=x").status)
	embeddedWithKey := startTestApp(t, testOptions{yaml: portalYAML})
	assert.Equal(t, http.StatusNotFound, embeddedWithKey.browser(t).get("/demo/portal").status, "the demo with a portal key: no sample")
	assert.Contains(t, embeddedWithKey.logs.String(), "sample partner portal off: a portal key is set", "and the start says why")
	assert.Contains(t, embeddedWithKey.logs.String(), "key=portal.jwt_secret")
}

// A handoff for an address that Unicode case mapping would turn into an
// admin's (U+0130, the Kelvin sign) is an account of its own: it never
// signs in as the admin, and the platform gets a user of its own for it.
func TestPortalHandoffLookAlikeIsAnotherAccount(t *testing.T) {
	ta := startTestApp(t, testOptions{yaml: portalYAML})
	admin := ta.addAccount(t, "kim@example.com", true)
	for _, email := range []string{"k\u0130m@example.com", "\u212Aim@example.com"} {
		t.Run(email, func(t *testing.T) {
			b := ta.browser(t)
			tok := portalToken(t, portal.Claims{Email: email, GivenName: "Mallory", FamilyName: "M"})
			_, editor := b.follow(t, ta, b.post("/sso/jwt", url.Values{"jwt": {tok}}, "Sec-Fetch-Site", "cross-site"))
			assert.Contains(t, editor, "Signed in as Mallory M")
			acct, err := ta.store.AccountByEmail(t.Context(), email)
			require.NoError(t, err)
			assert.NotEqual(t, admin.ID, acct.ID)
			assert.Equal(t, email, acct.Email)
			assert.False(t, acct.Admin)
			assert.Len(t, ta.sim.Users(email), 1)
		})
	}
	assert.Empty(t, ta.sim.Users("kim@example.com"), "the admin never launched")
}

// A return_to that leaves the platform once decoded or resolved is refused
// by every way in (deep link, launch, handoff): the bad-request page, no
// token asked for.
func TestReturnToCheckedDecoded(t *testing.T) {
	ta := startTestApp(t, testOptions{yaml: portalYAML})
	ta.addAccount(t, "ada@example.com", false)
	b := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, b.login("ada@example.com", testPassword).status)
	for _, rt := range []string{"/%2F%2Fevil.example", "/..//evil", "/%09/evil", "/x#//evil", "/%23//evil.example"} {
		t.Run(rt, func(t *testing.T) {
			ta.calls() // reset the counts
			r := b.get("/open?return_to=" + url.QueryEscape(rt))
			assert.Equal(t, http.StatusBadRequest, r.status, "/open")
			r = b.launch("return_to", rt)
			assert.Equal(t, http.StatusBadRequest, r.status, "/launch")
			tok := portalToken(t, portal.Claims{Email: "grace@example.com", ReturnTo: rt})
			r = ta.browser(t).post("/sso/jwt", url.Values{"jwt": {tok}}, "Sec-Fetch-Site", "cross-site")
			assert.Equal(t, http.StatusBadRequest, r.status, "/sso/jwt")
			assert.NotContains(t, r.header.Get("Location"), "evil")
			assert.Zero(t, ta.calls()["issue_token"], "no token issued")
		})
	}
}

// The shell example in docs/portal.md makes a token the bridge accepts:
// the block is run as written, with the secret in the environment.
func TestPortalShellSnippet(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		skipnote.Skip(t, "tests of the docs' openssl snippets", "install openssl")
	}
	doc := readDoc(t, "../docs/portal.md")
	start := strings.Index(doc, "**Shell**")
	require.Positive(t, start)
	block := doc[start:]
	block = block[strings.Index(block, "```sh\n")+len("```sh\n"):]
	block = block[:strings.Index(block, "```")]
	secret := "a-shell-made-portal-secret-of-more-than-32-bytes"
	ta := startTestApp(t, testOptions{yaml: "portal:\n  jwt_secret: " + secret + "\n  jwt_issuer: https://portal.partner.example\n  jwt_audience: https://sso.partner.example\n"})
	cmd := exec.Command("sh", "-c", block)
	cmd.Env = append(os.Environ(), "SSOBRIDGE_PORTAL_JWT_SECRET="+secret)
	out, err := cmd.Output()
	require.NoError(t, err)
	u, err := url.Parse(strings.TrimSpace(string(out)))
	require.NoError(t, err)
	assert.Equal(t, "https://sso.partner.example/sso/jwt", u.Scheme+"://"+u.Host+u.Path)
	b := ta.browser(t)
	_, editor := b.follow(t, ta, b.get("/sso/jwt?"+u.RawQuery))
	assert.Contains(t, editor, "ada@example.com")
}
