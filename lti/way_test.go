package lti_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/lti"
	"github.com/ssobridge/ssobridge/signin"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/wayintest"
)

var (
	pupil   = ltiplatformtest.User{Sub: "lms-sub-1", Email: "pupil@school.example", GivenName: "Pia", FamilyName: "Pupil", Roles: []string{ltiplatformtest.RoleLearner}}
	teacher = ltiplatformtest.User{Sub: "lms-sub-2", Email: "teacher@school.example", GivenName: "Tom", Roles: []string{ltiplatformtest.RoleInstructor}}
	head    = ltiplatformtest.User{Sub: "lms-sub-3", Email: "head@school.example", GivenName: "Hana", Roles: []string{ltiplatformtest.RoleAdministrator}}
)

// lms is an LMS of the test's own and the LTI way mounted on a wayintest
// server at the address the LMS launches to.
type lms struct {
	plat *ltiplatformtest.Platform
	kit  *wayintest.Kit
	way  *lti.Way
	base string
	src  signin.Source
}

func startLMS(t *testing.T, tweak ...func(*lti.Platform)) *lms {
	t.Helper()
	srv := wayintest.NewServer(t)
	plat := ltiplatformtest.Start(t, srv.URL)
	for hint, u := range map[string]ltiplatformtest.User{"learner": pupil, "instructor": teacher, "admin": head} {
		plat.AddUser(hint, u)
	}
	p := lti.Platform{Name: "Springfield LMS", Issuer: plat.Issuer, ClientID: plat.ClientID, DeploymentIDs: []string{plat.DeploymentID},
		AuthURL: plat.AuthURL(), JWKSURL: plat.JWKSURL(), AdminRoles: []string{"Administrator"}, CreateAccounts: true, Key: "lti.platforms[0]"}
	for _, fn := range tweak {
		fn(&p)
	}
	k := wayintest.NewKit()
	tool := lti.New(lti.Config{Platforms: []lti.Platform{p}, UseOnce: k.UseOnce, HTTPClient: plat.Server.Client()})
	src := signin.Source{ID: lti.SourceID(p.Issuer, p.ClientID), Name: "LTI: " + p.Name, Key: p.Key, CreateAccounts: true, AdminAuthority: true}
	w := &lti.Way{LMS: tool, KeySet: []byte(`{"keys":[]}`), Sources: map[string]signin.Source{lti.SourceKey(p.Issuer, p.ClientID): src}}
	srv.Mount(w, k)
	return &lms{plat: plat, kit: k, way: w, base: srv.URL, src: src}
}

// login posts the course page's login form to the tool, cross-site, and
// returns the authorization request the browser is sent to.
func (l *lms) login(t *testing.T, c *http.Client, hint string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, l.base+lti.LoginPath, strings.NewReader(l.plat.LoginForm(hint).Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	return resp.Header.Get("Location")
}

// launch posts the platform's answer to the tool, as the LMS's page does.
func (l *lms) launch(t *testing.T, c *http.Client, form url.Values) (*http.Response, string) {
	t.Helper()
	resp, err := c.PostForm(l.base+lti.LaunchPath, form)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

func TestLaunchHandsTheLMSUserToTheAdmission(t *testing.T) {
	l := startLMS(t)
	c := wayintest.Browser(t)
	auth := l.login(t, c, "learner")
	to, err := url.Parse(auth)
	require.NoError(t, err)
	assert.Equal(t, l.plat.AuthURL(), to.Scheme+"://"+to.Host+to.Path)
	assert.Equal(t, l.base+lti.LaunchPath, to.Query().Get("redirect_uri"))

	resp, _ := l.launch(t, c, l.plat.Answer(t, auth))
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Len(t, l.kit.Admitted(), 1)
	a := l.kit.Admitted()[0]
	assert.Equal(t, l.src, a.Source)
	assert.Equal(t, "lms-sub-1", a.Subject)
	assert.Equal(t, "pupil@school.example", a.Email)
	assert.Equal(t, "Pia", a.Names.Given)
	assert.False(t, a.Admin, "a learner is no partner admin")
	landing := l.kit.Arrived()[0].Landing
	assert.Equal(t, wayin.Landing{How: "LTI: Springfield LMS", Via: "Springfield LMS", Launch: true, ReturnTo: landing.ReturnTo}, landing, "into the editor")

	// The same answer again, from another browser: its flow is not there.
	other := wayintest.Browser(t)
	resp, _ = l.launch(t, other, url.Values{"id_token": {l.plat.Issued()[0]}, "state": {to.Query().Get("state")}})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("X-Refusal"))
	assert.Len(t, l.kit.Admitted(), 1)
}

func TestLaunchRolesAsAdmin(t *testing.T) {
	l := startLMS(t)
	for hint, admin := range map[string]bool{"instructor": false, "admin": true} {
		c := wayintest.Browser(t)
		resp, _ := l.launch(t, c, l.plat.Answer(t, l.login(t, c, hint)))
		require.Equal(t, http.StatusSeeOther, resp.StatusCode, hint)
		got := l.kit.Admitted()[len(l.kit.Admitted())-1]
		assert.Equal(t, admin, got.Admin, "%s: only admin_roles make a partner admin", hint)
	}
}

// A launch that no login of this browser started is refused with the
// LTI page, which leads back to the course; nothing reaches the admission.
func TestLaunchFromAnotherBrowserRefused(t *testing.T) {
	l := startLMS(t)
	c := wayintest.Browser(t)
	auth := l.login(t, c, "learner")
	form := l.plat.Answer(t, auth)

	stranger := wayintest.Browser(t)
	resp, body := l.launch(t, stranger, form)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Len(t, l.kit.Refused(), 1)
	assert.ErrorIs(t, l.kit.Refused()[0].Refusal, lti.ErrBadState)
	assert.Contains(t, l.kit.Refused()[0].Refusal.Info.Detail, "plain http", "on plain http the page says why the cookie may be missing")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	require.NoError(t, err)
	assert.NotEmpty(t, doc.Text())

	// A form that is not a launch at all.
	resp, _ = l.launch(t, c, url.Values{"id_token": {"not-a-token"}, "state": {"x"}})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Empty(t, l.kit.Admitted())
}

// A framed launch (the LMS shows the tool in its page) opens no session
// in the frame: a page that only the LMS may frame offers a button, whose
// post resumes the held arrival in a new tab.
func TestFramedLaunchHoldsTheArrival(t *testing.T) {
	l := startLMS(t)
	l.plat.SetFramed(true)
	c := wayintest.Browser(t)
	resp, body := l.launch(t, c, l.plat.Answer(t, l.login(t, c, "learner")))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Empty(t, l.kit.Arrived(), "no session in the frame")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	require.NoError(t, err)
	f := doc.Find("form[action='" + lti.ContinuePath + "']")
	require.Equal(t, 1, f.Length(), "the button's form")
	form := url.Values{}
	f.Find("input").Each(func(_ int, s *goquery.Selection) { form.Set(s.AttrOr("name", ""), s.AttrOr("value", "")) })

	next, err := c.PostForm(l.base+lti.ContinuePath, form)
	require.NoError(t, err)
	next.Body.Close()
	require.Equal(t, http.StatusSeeOther, next.StatusCode)
	require.Len(t, l.kit.Arrived(), 1)
	assert.True(t, l.kit.Arrived()[0].Landing.Launch)
}

// The tool's own documents: its key set and its configuration (for an
// LMS administrator), and how the way describes itself.
func TestToolDocumentsAndDescription(t *testing.T) {
	l := startLMS(t)
	resp, err := http.Get(l.base + lti.JWKSPath)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{"keys":[]}`, string(b))

	resp, err = http.Get(l.base + lti.ConfigPath)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	assert.Equal(t, "lti", l.way.Name())
	assert.False(t, l.way.Essential(), "sign-in does not need an LMS")
	name, href := l.way.Button("/")
	assert.Empty(t, name+href, "launches start at the LMS")
	paths := map[string]bool{}
	for _, x := range l.way.Exempt() {
		paths[x.Path] = x.KeepOrigin
	}
	assert.Equal(t, map[string]bool{lti.LoginPath: false, lti.LaunchPath: false, lti.ContinuePath: true, lti.DeepLinkPath: true}, paths)
	assert.Error(t, l.way.Ready(t.Context()), "no key set read yet")
	c := wayintest.Browser(t)
	resp, _ = l.launch(t, c, l.plat.Answer(t, l.login(t, c, "learner")))
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.NoError(t, l.way.Ready(t.Context()), "ready once the platform's key set is read")
}
