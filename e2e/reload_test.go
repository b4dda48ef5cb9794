package e2e

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/wayin/portal"
)

// A launch that must wait answers with its waiting page's own address
// (/launch/wait/<ticket>), for the start page's button, the portal's
// handoff and an LMS launch alike: reloading it shows the same place in
// line (never the request that made it again: a spent handoff token, a
// used launch), a second tab of the same browser too, another browser
// nothing; once the platform's turn comes the page leads into the editor.
func TestWaitingPageSurvivesReload(t *testing.T) {
	plat := startLMS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	plat.SetTool("http://" + ln.Addr().String())
	ta := startTestApp(t, testOptions{listener: ln, realPacing: true, yaml: portalYAML + ltiYAML(plat, plat.JWKSURL())})
	ta.addAccount(t, "ada@example.com", false)

	// waits asks for the waiting page of first (a 303 there), reloads it
	// twice and opens it in a second tab, then lets the line move and
	// follows the page into the editor.
	waits := func(t *testing.T, b *browser, first page) {
		t.Helper()
		require.Equal(t, http.StatusSeeOther, first.status, first.body)
		wait := first.header.Get("Location")
		require.True(t, strings.HasPrefix(wait, "/launch/wait/"), wait)
		assert.Equal(t, "no-store", first.header.Get("Cache-Control"))
		for i := range 2 {
			req, _ := http.NewRequest("GET", b.base+wait, nil)
			reload := b.doOnce(req)
			require.Equal(t, http.StatusOK, reload.status, "reload %d", i)
			assert.Contains(t, reload.body, `id="launch-waiting"`)
		}
		other := ta.browser(t)
		req, _ := http.NewRequest("GET", other.base+wait, nil)
		assert.NotEqual(t, http.StatusOK, other.doOnce(req).status, "another browser gets nothing from the ticket")
		landed := b.get(wait) // the page's own reloads, until the platform's turn

		path, _ := b.follow(t, ta, landed)
		assert.Equal(t, "/editor", path)
	}
	hold := func() { ta.budget.Pause(4 * time.Second) } // as a 429 would: a line forms

	t.Run("the start page's button", func(t *testing.T) {
		b := ta.browser(t)
		require.Equal(t, http.StatusSeeOther, b.login("ada@example.com", testPassword).status)
		tok := b.csrf("/")
		hold()
		req, _ := http.NewRequest("POST", b.base+"/launch", strings.NewReader(url.Values{"_csrf": {tok}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		waits(t, b, b.doOnce(req))
	})
	t.Run("the portal's handoff", func(t *testing.T) {
		b := ta.browser(t)
		hold()
		req, _ := http.NewRequest("GET", b.base+"/sso/jwt?jwt="+portalToken(t, portal.Claims{Email: "ben@example.com", GivenName: "Ben", FamilyName: "B"}), nil)
		waits(t, b, b.doOnce(req))
	})
	t.Run("an LMS launch", func(t *testing.T) {
		b := ta.browser(t)
		r := b.post("/lti/login", plat.LoginForm("pupil"), "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		form := plat.Answer(t, r.header.Get("Location"))
		hold()
		req, _ := http.NewRequest("POST", b.base+"/lti/launch", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.Header.Set("Origin", plat.Server.URL)
		arrive := b.doOnce(req)
		require.Equal(t, http.StatusSeeOther, arrive.status, arrive.body)
		req, _ = http.NewRequest("GET", b.base+arrive.header.Get("Location"), nil)
		waits(t, b, b.doOnce(req))
	})
}
