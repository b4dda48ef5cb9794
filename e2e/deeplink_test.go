package e2e

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/demo/samplelms"
	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
)

// formOf reads a page's form (its action and fields) by the form's CSS
// selector.
func formOf(t *testing.T, body, sel string) (string, url.Values) {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	require.NoError(t, err)
	f := doc.Find(sel)
	require.Equal(t, 1, f.Length(), "the page has the form %s: %s", sel, body)
	fields := url.Values{}
	f.Find("input[type=hidden]").Each(func(_ int, s *goquery.Selection) { fields.Set(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	return f.AttrOr("action", ""), fields
}

// deepLinkLaunch is an instructor's (or anyone's) "place the tool" link
// followed as the LMS's pages drive it: the bridge's answer to the
// deep-linking id_token.
func (b *browser) deepLinkLaunch(t *testing.T, plat *ltiplatformtest.Platform, hint string) page {
	t.Helper()
	r := b.post("/lti/login", plat.DeepLinkForm(hint), "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	return b.post("/lti/launch", plat.Answer(t, r.header.Get("Location")), "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
}

// Deep Linking 2.0 from outside: a teacher's request opens the choosing
// page (framable by the LMS); a path outside the editor is refused with
// the form again; the choice comes back to the LMS as a response JWT the
// LMS verifies against /lti/jwks, with the request's data unchanged; a
// pupil's launch of the placed link lands at its path; the answer is
// given once; a cancel places nothing; a pupil's request is refused.
func TestLTIDeepLinkingPlacesTheEditor(t *testing.T) {
	plat := startLMS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	plat.SetTool("http://" + ln.Addr().String())
	ta := startTestApp(t, testOptions{listener: ln, yaml: ltiYAML(plat, plat.JWKSURL()) +
		"      deep_link_items:\n        - title: Make a trailer\n          path: /editor/templates/trailer\n"})
	same := []string{"Origin", ta.srv.URL, "Sec-Fetch-Site", "same-origin"}

	teacher := ta.browser(t)
	p := teacher.deepLinkLaunch(t, plat, "teacher")
	require.Equal(t, http.StatusOK, p.status, p.body)
	assert.Contains(t, p.body, `id="lti-deep-link"`)
	assert.Contains(t, p.body, "Make a trailer")
	assert.Contains(t, p.header.Get("Content-Security-Policy"), "frame-ancestors "+plat.Server.URL, "framable by the LMS, as a framed launch")
	_, fields := formOf(t, p.body, "#lti-deep-link form")
	ctx := fields.Get("context")
	require.NotEmpty(t, ctx)
	assert.Empty(t, ta.calls(), "placing the tool makes no platform call")

	for _, bad := range []string{"//evil.example/x", "https://evil.example/", "/editor/../admin", ""} {
		r := teacher.post("/lti/deep-link", url.Values{"context": {ctx}, "choice": {"path"}, "path": {bad}}, same...)
		assert.Equal(t, http.StatusBadRequest, r.status, bad)
		assert.Contains(t, r.body, `id="error-summary"`, bad)
		assert.Contains(t, r.body, `aria-invalid="true"`, bad)
	}
	r := teacher.post("/lti/deep-link", url.Values{"context": {ctx}, "choice": {"item-0"}}, same...)
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.Contains(t, r.header.Get("Content-Security-Policy"), "form-action 'self'")
	assert.Contains(t, r.header.Get("Content-Security-Policy"), plat.Server.URL, "the answer may be posted to the LMS")
	action, answer := formOf(t, r.body, "#deep-link-return")
	assert.Equal(t, plat.Server.URL+"/deep-link-return", action)
	resp, err := plat.Server.Client().PostForm(action, answer)
	require.NoError(t, err)
	resp.Body.Close()
	require.Empty(t, plat.DeepLinkRefusal(), "the LMS verifies the answer against the tool's key set")
	require.Equal(t, http.StatusOK, resp.StatusCode, "back on the course page")
	assertDeepLinkAnswer(t, plat)
	placed := plat.Placed()
	require.Len(t, placed, 1)
	assert.Equal(t, "Make a trailer", placed[0].Title)
	assert.Equal(t, ta.srv.URL+"/open?return_to=%2Feditor%2Ftemplates%2Ftrailer", placed[0].URL)

	again := teacher.post("/lti/deep-link", url.Values{"context": {ctx}, "choice": {"editor"}}, same...)
	assert.Equal(t, http.StatusBadRequest, again.status, "a request is answered once")
	assert.Contains(t, again.body, "lti-stale")

	// A pupil's click on the placed link lands in the pupil's editor at
	// its path.
	pupil := ta.browser(t)
	lr := pupil.post("/lti/login", plat.PlacedForm("pupil", 0), "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
	require.Equal(t, http.StatusSeeOther, lr.status, lr.body)
	launched := pupil.post("/lti/launch", plat.Answer(t, lr.header.Get("Location")), "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
	path, editor := pupil.follow(t, ta, launched)
	assert.Equal(t, "/editor/templates/trailer", path)
	assert.Contains(t, editor, "Signed in as Pia Pupil")

	// A typed path, then a cancel: the cancel answers an empty list.
	p = teacher.deepLinkLaunch(t, plat, "teacher")
	_, fields = formOf(t, p.body, "#lti-deep-link form")
	r = teacher.post("/lti/deep-link", url.Values{"context": {fields.Get("context")}, "choice": {"path"}, "path": {"/editor/projects/7"}, "title": {"Our film"}}, same...)
	action, answer = formOf(t, r.body, "#deep-link-return")
	resp, err = plat.Server.Client().PostForm(action, answer)
	require.NoError(t, err)
	resp.Body.Close()
	require.Empty(t, plat.DeepLinkRefusal())
	require.Len(t, plat.Placed(), 2)
	assert.Equal(t, samplelms.Placed{Title: "Our film", URL: ta.srv.URL + "/open?return_to=%2Feditor%2Fprojects%2F7"}, plat.Placed()[1])
	p = teacher.deepLinkLaunch(t, plat, "teacher")
	_, fields = formOf(t, p.body, "#lti-deep-link form")
	r = teacher.post("/lti/deep-link", url.Values{"context": {fields.Get("context")}, "cancel": {"1"}}, same...)
	action, answer = formOf(t, r.body, "#deep-link-return")
	resp, err = plat.Server.Client().PostForm(action, answer)
	require.NoError(t, err)
	resp.Body.Close()
	require.Empty(t, plat.DeepLinkRefusal())
	assert.Empty(t, plat.DeepLinkAnswer()["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"], "cancelled: no items")
	assert.Len(t, plat.Placed(), 2)

	// Only the types the request accepts: none of the tool's, nothing
	// to choose.
	plat.SetAcceptTypes([]string{"file"})
	p = teacher.deepLinkLaunch(t, plat, "teacher")
	assert.Contains(t, p.body, `id="deep-link-none"`)
	assert.NotContains(t, p.body, `id="deep-link-place"`)
	plat.SetAcceptTypes(nil)

	// A pupil's deep-linking request: refused, nothing placed.
	refused := ta.browser(t).deepLinkLaunch(t, plat, "pupil")
	assert.Equal(t, http.StatusForbidden, refused.status)
	assert.Contains(t, refused.body, "lti-instructors-only")
	assert.NotContains(t, refused.body, `name="context"`)
	assert.Contains(t, ta.logs.String(), "LTI deep linking refused")
}

// assertDeepLinkAnswer: the answer the LMS verified is a Deep Linking
// response of the tool's (its client id the issuer, the LMS's issuer the
// audience), living 5 minutes, carrying the request's data unchanged.
func assertDeepLinkAnswer(t *testing.T, plat *ltiplatformtest.Platform) {
	t.Helper()
	claims := plat.DeepLinkAnswer()
	assert.Equal(t, plat.ClientID, claims["iss"])
	assert.Equal(t, plat.Issuer, claims["aud"])
	assert.Equal(t, plat.DeploymentID, claims["https://purl.imsglobal.org/spec/lti/claim/deployment_id"])
	assert.Equal(t, "LtiDeepLinkingResponse", claims["https://purl.imsglobal.org/spec/lti/claim/message_type"])
	assert.Equal(t, "1.3.0", claims["https://purl.imsglobal.org/spec/lti/claim/version"])
	assert.NotEmpty(t, claims["nonce"])
	assert.InDelta(t, 300, claims["exp"].(float64)-claims["iat"].(float64), 1)
	assert.Contains(t, claims["https://purl.imsglobal.org/spec/lti-dl/claim/data"], "request-", "the request's data, unchanged")
}

// Platform storage from outside, without a browser's scripts: a login
// with lti_storage_target keeps the browser's key in a page for the LMS's
// frame; a launch without the cookie gets the page that reads it back; a
// launch posted again with another key is refused, with the key the LMS
// kept it lands.
// storageApp is a bridge and an LMS that keeps the browser's key in its
// own frame (platform storage).
func storageApp(t *testing.T) (*testApp, *ltiplatformtest.Platform) {
	t.Helper()
	plat := startLMS(t)
	plat.SetStorage(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	plat.SetTool("http://" + ln.Addr().String())
	return startTestApp(t, testOptions{listener: ln, yaml: ltiYAML(plat, plat.JWKSURL())}), plat
}

func TestLTIPlatformStorageHoldsTheBrowsersKey(t *testing.T) {
	ta, plat := storageApp(t)

	login := ta.browser(t)
	form := plat.LoginForm("pupil")
	form.Set("lti_storage_target", "_parent")
	p := login.post("/lti/login", form, "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
	require.Equal(t, http.StatusOK, p.status, p.body)
	assert.Contains(t, p.header.Get("Content-Security-Policy"), "frame-ancestors "+plat.Server.URL)
	assert.Contains(t, p.header.Get("Content-Security-Policy"), "script-src 'self'")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(p.body))
	require.NoError(t, err)
	page := doc.Find("#lti-storage")
	assert.Equal(t, "put", page.AttrOr("data-mode", ""))
	assert.Equal(t, plat.Server.URL, page.AttrOr("data-origin", ""), "messages go to the LMS's origin only")
	key, next := page.AttrOr("data-value", ""), page.AttrOr("data-next", "")
	require.NotEmpty(t, key)
	answer := plat.Answer(t, next)

	// The launch comes without the cookie (another jar: the frame's).
	frame := ta.browser(t)
	again := frame.post("/lti/launch", answer, "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
	require.Equal(t, http.StatusOK, again.status, again.body)
	action, fields := formOf(t, again.body, "#lti-storage-form")
	assert.Equal(t, "/lti/launch", action)
	assert.Equal(t, answer.Get("id_token"), fields.Get("id_token"))

	fields.Set("lti_storage_value", "another browser's key, or none")
	refused := frame.post("/lti/launch", fields, "Sec-Fetch-Site", "same-origin", "Origin", ta.srv.URL)
	assert.Equal(t, http.StatusBadRequest, refused.status)
	assert.Contains(t, refused.body, `data-class="lti-stale"`)

	// A fresh login (the refused one spent nothing, but its flow is the
	// same: try the right key on a new one).
	p = login.post("/lti/login", form, "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
	doc, err = goquery.NewDocumentFromReader(strings.NewReader(p.body))
	require.NoError(t, err)
	answer = plat.Answer(t, doc.Find("#lti-storage").AttrOr("data-next", ""))
	again = frame.post("/lti/launch", answer, "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
	_, fields = formOf(t, again.body, "#lti-storage-form")
	fields.Set("lti_storage_value", doc.Find("#lti-storage").AttrOr("data-value", ""))
	landed := frame.post("/lti/launch", fields, "Sec-Fetch-Site", "same-origin", "Origin", ta.srv.URL)
	path, editor := frame.follow(t, ta, landed)
	assert.Equal(t, "/editor", path)
	assert.Contains(t, editor, "Signed in as Pia Pupil")
}

// The attack on platform storage, as an outsider runs it: a learner of a
// registered LMS starts a login with lti_storage_target in their own
// browser, keeps the id_token and state the LMS answers without posting
// them, and reads their browser's key from the login page. Another site
// then makes a signed-out victim's browser post all three to the launch
// (cross-site: the browser says so, and sends none of the bridge's
// SameSite cookies). The key is the attacker's own, so it proves nothing:
// the victim gets the stale-launch page and no session, and the same post
// from the bridge's own page in the attacker's frame still lands.
func TestLTIPlatformStorageKeyIsNoPassFromAnotherSite(t *testing.T) {
	ta, plat := storageApp(t)

	attacker := ta.browser(t)
	form := plat.LoginForm("pupil")
	form.Set("lti_storage_target", "_parent")
	p := attacker.post("/lti/login", form, "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
	require.Equal(t, http.StatusOK, p.status, p.body)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(p.body))
	require.NoError(t, err)
	key := doc.Find("#lti-storage").AttrOr("data-value", "")
	require.NotEmpty(t, key)
	answer := plat.Answer(t, doc.Find("#lti-storage").AttrOr("data-next", ""))
	forged := url.Values{"id_token": {answer.Get("id_token")}, "state": {answer.Get("state")}, "lti_storage_value": {key}}

	for name, header := range map[string][]string{
		"a browser that names the site":      {"Sec-Fetch-Site", "cross-site", "Origin", "https://attacker.example"},
		"a browser that sends only Origin":   {"Origin", "https://attacker.example"},
		"a post that names no origin at all": nil,
	} {
		t.Run(name, func(t *testing.T) {
			victim := ta.browser(t)
			got := victim.post("/lti/launch", forged, header...)
			assert.Equal(t, http.StatusBadRequest, got.status, got.body)
			assert.Contains(t, got.body, `data-class="lti-stale"`)
			assert.NotContains(t, got.header.Get("Location"), "/arrive")
			home := victim.get("/")
			assert.Equal(t, http.StatusSeeOther, home.status, "the victim has no session")
			assert.True(t, strings.HasPrefix(home.header.Get("Location"), "/login"), home.header.Get("Location"))
		})
	}

	// The same values from the bridge's own page (same origin) still land:
	// the check is the posting page, not the key.
	landed := attacker.post("/lti/launch", forged, "Sec-Fetch-Site", "same-origin", "Origin", ta.srv.URL)
	path, editor := attacker.follow(t, ta, landed)
	assert.Equal(t, "/editor", path)
	assert.Contains(t, editor, "Signed in as Pia Pupil")
}

// switchForm is a page's language switch for tag as a form that posts the
// page's own state again (its action and fields, the language included).
func switchForm(t *testing.T, body, tag string) (string, url.Values) {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	require.NoError(t, err)
	b := doc.Find("#language-switch #lang-" + tag)
	require.Equal(t, 1, b.Length(), "the switch is a form's button for %s", tag)
	f := b.Closest("form")
	fields := url.Values{}
	f.Find("input[type=hidden]").Each(func(_ int, s *goquery.Selection) { fields.Set(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	fields.Set(b.AttrOr("name", ""), b.AttrOr("value", ""))
	return f.AttrOr("action", ""), fields
}

// Inside the LMS's frame the language switch keeps the person where they
// were: on the framed launch's page and the Deep Linking page it posts
// the page's own sealed state again and the same page comes back in the
// language chosen, still framable by the LMS alone (never a link to a
// page that refuses framing); the framed page's button and the placing
// still work after it. A refused launch's page has no switch (no state to
// keep).
func TestLTILanguageSwitchInsideTheFrame(t *testing.T) {
	plat := startLMS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	plat.SetTool("http://" + ln.Addr().String())
	ta := startTestApp(t, testOptions{listener: ln, yaml: ltiYAML(plat, plat.JWKSURL())})
	same := []string{"Origin", ta.srv.URL, "Sec-Fetch-Site", "same-origin"}

	t.Run("the framed launch's page", func(t *testing.T) {
		plat.SetFramed(true)
		defer plat.SetFramed(false)
		frame := ta.browser(t)
		p, _ := frame.lmsLaunch(t, plat, "pupil")
		require.Equal(t, http.StatusOK, p.status, p.body)
		_, button := formOf(t, p.body, "#lti-framed form")
		action, fields := switchForm(t, p.body, "de")
		assert.Equal(t, "/lti/continue", action)
		de := frame.post(action, fields, same...)
		require.Equal(t, http.StatusOK, de.status, de.body)
		assert.Contains(t, de.body, `<html lang="de">`)
		assert.Contains(t, de.header.Get("Content-Security-Policy"), "frame-ancestors "+plat.Server.URL, "still the LMS's to frame")
		_, again := formOf(t, de.body, "#lti-framed form")
		assert.Equal(t, button.Get("continuation"), again.Get("continuation"), "the same continuation, unused")
		// The button, in its new tab, opens the editor.
		tab := ta.browser(t)
		landed := tab.post("/lti/continue", again, same...)
		path, editor := tab.follow(t, ta, landed)
		assert.Equal(t, "/editor", path)
		assert.Contains(t, editor, "Signed in as Pia Pupil")
	})

	t.Run("the Deep Linking page", func(t *testing.T) {
		teacher := ta.browser(t)
		p := teacher.deepLinkLaunch(t, plat, "teacher")
		require.Equal(t, http.StatusOK, p.status, p.body)
		action, fields := switchForm(t, p.body, "fr")
		assert.Equal(t, "/lti/deep-link", action)
		fr := teacher.post(action, fields, same...)
		require.Equal(t, http.StatusOK, fr.status, fr.body)
		assert.Contains(t, fr.body, `<html lang="fr">`)
		assert.Contains(t, fr.body, `id="lti-deep-link"`, "the same page, nothing placed")
		assert.Empty(t, plat.Placed())
		_, place := formOf(t, fr.body, "#lti-deep-link form")
		assert.Equal(t, "fr", place.Get("lang"), "the page's form carries its language on")
		place.Set("choice", "editor")
		answered := teacher.post("/lti/deep-link", place, same...)
		assert.Equal(t, http.StatusOK, answered.status, answered.body)
		assert.Contains(t, answered.body, `<html lang="fr">`)
	})

	t.Run("a refused launch", func(t *testing.T) {
		r := ta.browser(t).post("/lti/launch", url.Values{"id_token": {"x.y.z"}, "state": {"nope"}}, "Sec-Fetch-Site", "cross-site", "Origin", plat.Server.URL)
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.NotContains(t, r.body, `id="language-switch"`, "no state to keep: no switch that would leave the frame")
	})
}
