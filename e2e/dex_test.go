package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/ssobridge/ssobridge/internal/skipnote"
	"github.com/ssobridge/ssobridge/internal/syncbuf"
)

// EnvDex names the variable that points the OIDC tests at a Dex binary
// (tools/dex; .ci/run builds it).
const EnvDex = "SSOBRIDGE_TEST_DEX"

// dexUser is a static password user of the test Dex.
type dexUser struct {
	email, password string
	verified        bool
	groups          []string
}

// The test IdP's users.
var (
	dexAda        = dexUser{"ada@idp.example", "ada-password", true, nil}
	dexRoot       = dexUser{"root@idp.example", "root-password", true, []string{"bridge-admins"}}
	dexUnverified = dexUser{"unverified@idp.example", "unverified-password", false, nil}
)

const (
	dexClientID     = "ssobridge"
	dexClientSecret = "test-client-secret"
	dexAdminGroup   = "bridge-admins"
)

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// dexBinary is the Dex to run, or the test skips naming the variable.
func dexBinary(t *testing.T) string {
	bin := os.Getenv(EnvDex)
	if bin == "" {
		skipnote.Skip(t, "OIDC tests against a real Dex", "set "+EnvDex+" to a Dex binary (built from tools/dex; .ci/run builds it)")
	}
	return bin
}

// startDex runs Dex on port with memory storage, the bridge's client
// (redirecting to redirectURI) and the test users; it returns when Dex
// answers discovery.
func startDex(t *testing.T, bin string, port int, redirectURI string) string {
	t.Helper()
	issuer, _ := runDex(t, bin, port, redirectURI)
	return issuer
}

// runDex is startDex, also returning a function that stops that Dex.
func runDex(t *testing.T, bin string, port int, redirectURI string) (issuer string, stop func()) {
	t.Helper()
	issuer = fmt.Sprintf("http://127.0.0.1:%d/dex", port)
	var users strings.Builder
	for i, u := range []dexUser{dexAda, dexRoot, dexUnverified} {
		hash, err := bcrypt.GenerateFromPassword([]byte(u.password), 10) // Dex refuses a cost under 10
		require.NoError(t, err)
		fmt.Fprintf(&users, "- email: %q\n  hash: %q\n  username: %q\n  userID: \"user-%d\"\n  emailVerified: %v\n",
			u.email, hash, strings.Split(u.email, "@")[0], i, u.verified)
		if len(u.groups) > 0 {
			fmt.Fprintf(&users, "  groups: [%s]\n", strings.Join(u.groups, ", "))
		}
	}
	cfg := fmt.Sprintf(`issuer: %s
storage:
  type: memory
web:
  http: 127.0.0.1:%d
oauth2:
  skipApprovalScreen: true
enablePasswordDB: true
staticClients:
- id: %s
  secret: %s
  name: ssobridge
  redirectURIs: [%q]
staticPasswords:
%s`, issuer, port, dexClientID, dexClientSecret, redirectURI, users.String())
	path := filepath.Join(t.TempDir(), "dex.yaml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	cmd := exec.CommandContext(t.Context(), bin, "serve", path)
	logs := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("Dex's log:\n%s", logs)
		}
	})
	require.Eventually(t, func() bool {
		resp, err := http.Get(issuer + "/.well-known/openid-configuration")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "Dex did not start:\n%s", logs)
	return issuer, stop
}

// oidcYAML configures the bridge for the test Dex.
func oidcYAML(issuer, extra string) string {
	return fmt.Sprintf("oidc:\n  issuer: %s\n  client_id: %s\n  client_secret: %s\n  display_name: Test IdP\n  admin_group: %s\n%s",
		issuer, dexClientID, dexClientSecret, dexAdminGroup, extra)
}

var dexFormAction = regexp.MustCompile(`<form[^>]*action="([^"]*)"`)

// idpSignIn walks a browser through the bridge's /auth/oidc and Dex's real
// login page to the bridge's callback, and returns the callback's answer
// (not followed) and its URL.
func (b *browser) idpSignIn(t *testing.T, next string, u dexUser) (page, string) {
	t.Helper()
	cb := b.idpCallbackURL(t, next, u)
	req, _ := http.NewRequest("GET", cb, nil)
	return b.do(req), cb
}

// idpCallbackURL walks a browser through the bridge's /auth/oidc and Dex's
// real login page (a form that posts login and password) up to the
// bridge's callback, which it returns without calling it.
func (b *browser) idpCallbackURL(t *testing.T, next string, u dexUser) string {
	t.Helper()
	start := "/auth/oidc"
	if next != "" {
		start += "?next=" + url.QueryEscape(next)
	}
	r := b.get(start)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	loc := r.header.Get("Location")
	var formURL string
	for range 10 { // follow Dex's redirects to its login form
		resp := b.get2(loc)
		if resp.status == http.StatusOK {
			m := dexFormAction.FindStringSubmatch(resp.body)
			require.NotNil(t, m, "no form on Dex's page:\n%s", resp.body)
			base, _ := url.Parse(loc)
			action, _ := url.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
			formURL = base.ResolveReference(action).String()
			break
		}
		require.Contains(t, []int{http.StatusFound, http.StatusSeeOther}, resp.status, resp.body)
		next, _ := url.Parse(resp.header.Get("Location"))
		base, _ := url.Parse(loc)
		loc = base.ResolveReference(next).String()
	}
	require.NotEmpty(t, formURL)
	req, _ := http.NewRequest("POST", formURL, strings.NewReader(url.Values{"login": {u.email}, "password": {u.password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp := b.do(req)
	loc = formURL
	for range 10 { // to the bridge's callback
		require.Contains(t, []int{http.StatusFound, http.StatusSeeOther}, resp.status, "Dex: %s", resp.body)
		next, _ := url.Parse(resp.header.Get("Location"))
		base, _ := url.Parse(loc)
		loc = base.ResolveReference(next).String()
		if strings.HasPrefix(loc, b.base) {
			return loc
		}
		resp = b.get2(loc)
	}
	t.Fatalf("Dex never sent the browser back to the bridge (last %s)", loc)
	return ""
}
