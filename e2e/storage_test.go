package e2e

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

// A launch inside the LMS's page in a browser that keeps no cookie of the
// bridge there: the LMS (http://localhost) frames the bridge
// (http://127.0.0.1), another site, whose SameSite=Lax flow cookie the
// browser neither sets nor sends in that frame, as a browser that drops
// even partitioned cookies does. Without the LMS's storage the launch is
// refused (the test's control); with lti_storage_target the login page
// keeps the browser's key in the LMS's frame and the launch page reads it
// back: the launch completes (the framed page answers, not the refusal).
func TestBrowserLTIPlatformStorage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	bridge := "http://" + ln.Addr().String()
	plat := ltiplatformtest.Start(t, bridge)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(plat.Server.URL, "http://"))
	plat.SetURL("http://localhost:" + port)
	plat.Issuer = plat.URL()
	plat.AddUser("pupil", ltiPupil)
	plat.SetFramed(true)
	ta := startTestApp(t, testOptions{listener: ln, yaml: "server:\n  public_url: " + bridge + "\n" + ltiYAML(plat, plat.JWKSURL())})

	tab := newTab(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(ta.logs.String())
		}
	})
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(plat.URL()+"/framed/pupil"), chromedp.WaitVisible(chromedp.ID("tool"))))
	require.Eventually(t, func() bool {
		return strings.Contains(ta.logs.String(), "no login with this state was started in this browser")
	}, 20*time.Second, 20*time.Millisecond,
		"without the LMS's storage the cookie-less launch is refused: the frame drops the cookie")

	plat.SetStorage(true)
	tab = newTab(t)
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(plat.URL()+"/framed/pupil"), chromedp.WaitVisible(chromedp.ID("tool"))))
	var log string
	require.Eventually(t, func() bool {
		l, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("storage-log").textContent`))
		log = l
		return err == nil && strings.Contains(l, "get ")
	}, 20*time.Second, 20*time.Millisecond, "the LMS's storage was read back: %q", log)
	assert.Contains(t, log, "put ssobridge-", "the login page kept the browser's key in the LMS's frame")
	assert.Contains(t, log, "get ssobridge-", "the launch page read it back")
	require.Eventually(t, func() bool { return strings.Count(ta.logs.String(), "path=/lti/launch status=200") == 2 }, 20*time.Second, 20*time.Millisecond,
		"the launch posted again with the LMS's key answers the framed page")
	assert.Equal(t, 1, strings.Count(ta.logs.String(), "LTI launch refused"), "only the control's launch was refused")

	// The launch then answered the framed page, whose button opens the
	// editor in a new tab as every framed launch's does
	// (TestBrowserLTIAcrossSites); the same launch without a browser goes
	// on into the editor in TestLTIPlatformStorageHoldsTheBrowsersKey.
	assert.Contains(t, ta.logs.String(), "path=/static/lti-storage.js status=200", "the storage pages ran the bridge's script")
}

// In Chromium: an instructor places the editor from the LMS's course page
// with the keyboard (the choosing page, its answer posted back to the LMS
// by its script), and the LMS's page that frames a Dynamic Registration
// hears the tool's close message.
func TestBrowserLTIDeepLinkingAndRegistration(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	bridge := "http://" + ln.Addr().String()
	plat := startLMS(t)
	plat.SetTool(bridge)
	ta := startTestApp(t, testOptions{listener: ln, yaml: "server:\n  public_url: " + bridge + "\n" + ltiYAML(plat, plat.JWKSURL()) +
		"      deep_link_items:\n        - title: Make a trailer\n          path: /editor/templates/trailer\n"})
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(ta.logs.String())
		}
	})

	tab := newTab(t)
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(plat.URL()+"/deep-link/teacher"), chromedp.WaitVisible(chromedp.ID("deep-link-place"))))
	screenshot(t, tab, "17-lti-deep-linking")
	assert.Empty(t, axeViolations(t, tab), "the choosing page")
	require.NoError(t, chromedp.Do(tab, chromedp.Focus(chromedp.ID("choice-editor"))))
	require.NoError(t, chromedp.Do(tab, chromedp.KeyEvent(kb.ArrowDown))) // the radio group: the next choice, "Make a trailer"
	checked, err := chromedp.Run(tab, chromedp.Evaluate[bool](`document.getElementById("choice-item-0").checked`))
	require.NoError(t, err)
	assert.True(t, checked, "the keyboard chooses")
	require.NoError(t, chromedp.Do(tab, chromedp.Focus(chromedp.ID("deep-link-place")), chromedp.KeyEvent(kb.Enter)))
	require.NoError(t, chromedp.Do(tab, chromedp.WaitVisible(chromedp.ID("placed-0"))), "the answer's page posts it back to the LMS by itself")
	placed, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("placed-0").textContent`))
	require.NoError(t, err)
	assert.Contains(t, placed, "Make a trailer")
	assert.Empty(t, plat.DeepLinkRefusal())

	// Dynamic Registration inside the LMS's page: the tool's last page
	// tells the LMS it is done.
	ta.addAccount(t, "root@partner.example", true)
	admin := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, admin.login("root@partner.example", testPassword).status)
	made := admin.post("/admin/lti/registration-url", url.Values{"_csrf": {admin.csrf("/admin/lti")}, "create_accounts": {"1"}})
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(made.body))
	require.NoError(t, err)
	regURL := doc.Find("#registration-url").Text()
	require.NotEmpty(t, regURL, made.body)
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(plat.URL()+"/register-tool?"+url.Values{"url": {regURL}}.Encode())))
	require.Eventually(t, func() bool {
		s, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("state").textContent`))
		return err == nil && s == "closed by the tool"
	}, 20*time.Second, 20*time.Millisecond, "the tool's page posts org.imsglobal.lti.close to the LMS's page")
	list, err := (&lti.Records{Store: ta.store}).Platforms(t.Context())
	require.NoError(t, err)
	assert.Len(t, list, 1)
}
