package e2e

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outsiderParams are every parameter a route of the bridge reads.
var outsiderParams = []string{"RelayState", "SAMLResponse", "SigAlg", "Signature", "account", "admin", "client_id", "code", "confirm",
	"continuation", "csv", "email", "error", "error_description", "expired", "filter", "first_name", "grant", "id_token", "iss", "jwt",
	"kind", "last_name", "local", "login_hint", "lti_deployment_id", "lti_message_hint", "m", "next", "outcome", "page", "password", "q",
	"reauth", "redirect_uri", "return_to", "signed_out", "state", "target_link_uri", "token"}

// Whatever an outsider sends, no request to any route makes the bridge
// write a log line over 4 KB or answer a page over 64 KB: each route of
// a bridge with every way in on (the portal, SAML, LTI, SCIM) gets each
// parameter at 500 KB (in the query of a GET, the form of a POST),
// anonymously and, for the console, as an admin.
func TestOutsiderInputIsBounded(t *testing.T) {
	plat := startLMS(t)
	idp := samlIdP(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	plat.SetTool("http://" + ln.Addr().String())
	ta := samlBridge(t, idp, testOptions{listener: ln, yaml: ltiYAML(plat, plat.JWKSURL()) + "scim:\n  enabled: true\n",
		env: []string{"SSOBRIDGE_SCIM_TOKEN=" + scimToken}}, "", "")
	ta.addAccount(t, "boss@example.com", true)
	admin := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, admin.login("boss@example.com", testPassword).status)

	e, ok := ta.srv.Config.Handler.(*echo.Echo)
	require.True(t, ok, "the app's handler is Echo's")
	big := strings.Repeat("A", 500*1024)
	type call struct{ method, path, param string }
	var calls []call
	for _, r := range e.Routes() {
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			continue
		}
		path := strings.NewReplacer(":id", "1", ":ticket", "t", ":action", "disable", "*", "x").Replace(r.Path)
		for _, p := range outsiderParams {
			calls = append(calls, call{r.Method, path, p})
		}
	}
	require.Greater(t, len(calls), 500)

	// A route whose checks stop at a missing parameter gets the others it
	// needs, so that the big one is read: the LMS's login.
	base := map[string]url.Values{"/lti/login": plat.LoginForm("pupil")}

	before := len(ta.logs.String())
	var mu sync.Mutex
	var pages []string
	var wg sync.WaitGroup
	work := make(chan call)
	for range 4 {
		wg.Go(func() {
			for c := range work {
				b := ta.browser(t)
				if strings.HasPrefix(c.path, "/admin") {
					b = admin
				}
				v := url.Values{}
				for k, vs := range base[c.path] {
					v[k] = vs
				}
				v.Set(c.param, big)
				var body string
				var status int
				if c.method == http.MethodGet {
					p := b.get(c.path + "?" + v.Encode())
					status, body = p.status, p.body
				} else {
					v.Set("_csrf", "x")
					p := b.post(c.path, v, "Sec-Fetch-Site", "cross-site")
					status, body = p.status, p.body
				}
				// The audit page lists a page of events whatever it is asked,
				// each detail bounded (300 bytes): its size follows the log
				// these very requests fill, not their input.
				if len(body) > 64*1024 && c.path != "/admin/audit" {
					mu.Lock()
					pages = append(pages, c.method+" "+c.path+" "+c.param+": "+http.StatusText(status))
					mu.Unlock()
				}
			}
		})
	}
	for _, c := range calls {
		work <- c
	}
	close(work)
	wg.Wait()
	assert.Empty(t, pages, "pages over 64 KB")
	for _, line := range strings.Split(ta.logs.String()[before:], "\n") {
		if len(line) > 4*1024 {
			t.Errorf("a log line of %d bytes: %.300s", len(line), line)
		}
	}
	t.Logf("%d requests of 500 KB to %d routes", len(calls), len(calls)/len(outsiderParams))
}
