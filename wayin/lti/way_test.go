package lti_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/lti"
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

// formOf is the action and fields of the form sel in an HTML page.
func formOf(t *testing.T, body, sel string) (string, url.Values) {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	require.NoError(t, err)
	f := doc.Find(sel)
	require.Equal(t, 1, f.Length(), "no %s in:\n%s", sel, body)
	fields := url.Values{}
	f.Find("input").Each(func(_ int, s *goquery.Selection) {
		if name := s.AttrOr("name", ""); name != "" {
			fields.Set(name, s.AttrOr("value", ""))
		}
	})
	return f.AttrOr("action", ""), fields
}

// A teacher places the editor in a course (Deep Linking): the tool's page
// offers the configured places, and its answer, signed with the tool's
// key, is verified by the LMS; no account is opened.
func TestDeepLinkPlacesTheEditor(t *testing.T) {
	pemKey, err := lti.GenerateKeyPEM()
	require.NoError(t, err)
	key, err := lti.ParseToolKey(pemKey)
	require.NoError(t, err)
	jwks, err := json.Marshal(key.JWKS())
	require.NoError(t, err)
	l := startLMS(t, func(p *lti.Platform) {
		p.DeepLinkItems = []lti.DeepLinkItem{{Title: "Make a trailer", Path: "/editor/templates/trailer"}}
	})
	l.way.Key, l.way.KeySet = key, jwks // read at each request: before the first

	c := wayintest.Browser(t)
	placing := func() url.Values {
		req, _ := http.NewRequest(http.MethodPost, l.base+lti.LoginPath, strings.NewReader(l.plat.DeepLinkForm("instructor").Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		page, body := l.launch(t, c, l.plat.Answer(t, resp.Header.Get("Location")))
		require.Equal(t, http.StatusOK, page.StatusCode, body)
		assert.Contains(t, body, "Make a trailer")
		_, fields := formOf(t, body, "#lti-deep-link form")
		require.NotEmpty(t, fields.Get("context"))
		return fields
	}
	fields := placing()
	assert.Empty(t, l.kit.Admitted(), "placing the tool opens no account")

	post := func(form url.Values) (*http.Response, string) {
		resp, err := c.PostForm(l.base+lti.DeepLinkPath, form)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, bad := range []string{"//evil.example/x", "https://evil.example/", "/editor/../admin", ""} {
		resp, _ := post(url.Values{"context": {fields.Get("context")}, "choice": {"path"}, "path": {bad}})
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, bad)
	}
	resp, body := post(url.Values{"context": {fields.Get("context")}, "choice": {"item-0"}})
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	action, answer := formOf(t, body, "#deep-link-return")
	assert.Equal(t, l.plat.Server.URL+"/deep-link-return", action)
	back, err := l.plat.Server.Client().PostForm(action, answer)
	require.NoError(t, err)
	back.Body.Close()
	require.Empty(t, l.plat.DeepLinkRefusal(), "the LMS verifies the answer against the tool's key set")
	placed := l.plat.Placed()
	require.Len(t, placed, 1)
	assert.Equal(t, "Make a trailer", placed[0].Title)
	assert.Equal(t, l.base+"/open?return_to=%2Feditor%2Ftemplates%2Ftrailer", placed[0].URL)

	resp, _ = post(url.Values{"context": {fields.Get("context")}, "choice": {"editor"}})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "a request is answered once")

	// A typed path of the editor's, with a title of the teacher's.
	fields = placing()
	resp, body = post(url.Values{"context": {fields.Get("context")}, "choice": {"path"}, "path": {"/editor/projects/7"}, "title": {"Our film"}})
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	action, answer = formOf(t, body, "#deep-link-return")
	back, err = l.plat.Server.Client().PostForm(action, answer)
	require.NoError(t, err)
	back.Body.Close()
	require.Empty(t, l.plat.DeepLinkRefusal())
	assert.Equal(t, "Our film", l.plat.Placed()[1].Title)
}

// The admission's refusal of an LMS user is the LTI page, which leads
// back to the course.
func TestAdmissionRefusalLeadsBackToTheCourse(t *testing.T) {
	l := startLMS(t)
	l.kit.Decide = func(signin.Arrival) (store.Account, error) {
		return store.Account{}, fmt.Errorf("%w: school.example is not a domain of this LMS", signin.ErrNotTrusted)
	}
	c := wayintest.Browser(t)
	resp, body := l.launch(t, c, l.plat.Answer(t, l.login(t, c, "learner")))
	assert.GreaterOrEqual(t, resp.StatusCode, 400)
	assert.Empty(t, l.kit.Arrived())
	assert.NotEmpty(t, body)
}

// Watch reads the key sets now and again and logs once when they become
// unreadable and once when they are read again.
func TestWatchLogsKeySetsDownAndBack(t *testing.T) {
	var logs syncBuffer
	calls := 0
	done := make(chan struct{})
	w := &lti.Way{RetryEvery: time.Millisecond, RefreshEvery: time.Millisecond, Refresh: func(context.Context) error {
		calls++
		switch calls {
		case 1, 2:
			return errors.New("jwks: connection refused")
		case 3:
			return nil
		default:
			if calls == 4 {
				close(done)
			}
			return nil
		}
	}}
	ctx, cancel := context.WithCancel(t.Context())
	ended := make(chan struct{})
	go func() { w.Watch(ctx, slog.New(slog.NewTextHandler(&logs, nil))); close(ended) }()
	<-done
	cancel()
	<-ended
	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "key set is unreadable"), out)
	assert.Equal(t, 1, strings.Count(out, "every platform's key set read"), out)
	(&lti.Way{}).Watch(t.Context(), nil) // nothing to read: returns at once
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Dynamic Registration: an admin makes a registration URL in the console
// page; the LMS opens it, the tool reads the LMS's configuration,
// registers with it and keeps the LMS with the rules the URL carried.
// The URL is used once.
func TestDynamicRegistration(t *testing.T) {
	reg := newRecords(t)
	srv := wayintest.NewServer(t)
	plat := ltiplatformtest.Start(t, srv.URL)
	k := wayintest.NewKit()
	k.Admin = true
	tool := lti.New(lti.Config{UseOnce: k.UseOnce, HTTPClient: plat.Server.Client()})
	w := &lti.Way{LMS: tool, KeySet: []byte(`{"keys":[]}`), Registry: reg, HTTPClient: plat.Server.Client(), Sources: map[string]signin.Source{}}
	srv.Mount(w, k)
	admin := wayintest.Browser(t)
	get := func(c *http.Client, u string) (*http.Response, string) {
		resp, err := c.Get(u)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get(admin, srv.URL+lti.ConsolePath)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `id="no-registered"`)

	made := func(domains string) (*http.Response, string) {
		resp, err := admin.PostForm(srv.URL+lti.ConsolePath+"/registration-url", url.Values{"email_domains": {domains}, "create_accounts": {"1"}})
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body = made("not a domain!")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, body, "is not an email domain")
	resp, body = made("school.example")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	require.NoError(t, err)
	regURL := doc.Find("#registration-url").Text()
	require.True(t, strings.HasPrefix(regURL, srv.URL+lti.RegisterPath+"?code="), regURL)
	assert.NotEmpty(t, k.Audited(), "the admin's action is audited")

	lmsAdmin := wayintest.Browser(t)
	resp, body = get(lmsAdmin, plat.RegistrationURL(regURL))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `id="lti-registered"`)
	regs, refusal := plat.Registrations()
	require.Empty(t, refusal)
	require.Len(t, regs, 1)
	assert.Equal(t, srv.URL+lti.LoginPath, regs[0]["initiate_login_uri"])
	kept, _ := reg.Platforms(t.Context())
	require.Len(t, kept, 1)
	assert.Equal(t, plat.Issuer, kept[0].Issuer)
	assert.Equal(t, "school.example", kept[0].EmailDomains)
	assert.True(t, kept[0].CreateAccounts)

	resp, body = get(lmsAdmin, plat.RegistrationURL(regURL))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "the code was spent by its first use")
	assert.Contains(t, body, "it was used already")

	// The console lists it, and turns it off and on again, and removes it.
	resp, body = get(admin, srv.URL+lti.ConsolePath)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, plat.Issuer)
	act := func(action string) int {
		r, err := admin.PostForm(srv.URL+lti.ConsolePath+"/platforms/"+action, url.Values{"issuer": {kept[0].Issuer}, "client_id": {kept[0].ClientID}})
		require.NoError(t, err)
		r.Body.Close()
		return r.StatusCode
	}
	assert.Equal(t, http.StatusOK, act("disable"))
	now, _ := reg.Platforms(t.Context())
	assert.True(t, now[0].Disabled)
	assert.Equal(t, http.StatusOK, act("enable"))
	now, _ = reg.Platforms(t.Context())
	assert.False(t, now[0].Disabled)
	assert.Equal(t, http.StatusNotFound, act("explode"), "no such action")
	assert.Equal(t, http.StatusOK, act("remove"))
	assert.Equal(t, http.StatusNotFound, act("remove"), "removed meanwhile")
	kept, _ = reg.Platforms(t.Context())
	assert.Empty(t, kept, "removed")

	// Not an admin: the console is closed.
	k.Admin = false
	resp, _ = get(admin, srv.URL+lti.ConsolePath)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}
