package e2e

import (
	"cmp"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/demo/samplelms"
	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

// localOf is a URL's path and query (the test browser's own base).
func localOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.RequestURI()
}

// LTI Dynamic Registration from outside, on two instances on one
// PostgreSQL: an admin makes a registration URL on A; an LMS whose
// configuration names an issuer on another origin is refused, then the
// LMS registers the tool with the claims the spec asks for; the LMS is
// kept for both instances and a launch from it on B lands in the editor;
// a second use of the URL, a missing code and a registration endpoint
// that refuses each keep nothing; the console lists, disables and removes
// it.
func TestLTIDynamicRegistration(t *testing.T) {
	plat := ltiplatformtest.Start(t, "http://bridge.invalid")
	plat.AddUser("pupil", ltiPupil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	public := "http://" + ln.Addr().String()
	a, b := instancePair(t, testOptions{listener: ln, yaml: "server:\n  public_url: " + public + "\nlti:\n  dynamic_registration: true\n"})
	a.addAccount(t, "root@partner.example", true)
	admin := a.browser(t)
	require.Equal(t, http.StatusSeeOther, admin.login("root@partner.example", testPassword).status)
	console := admin.get("/admin/lti")
	require.Equal(t, http.StatusOK, console.status, console.body)
	assert.Contains(t, console.body, `id="no-registered"`)
	assert.Contains(t, console.body, `href="/admin/lti"`, "the console links its LTI page")

	made := admin.post("/admin/lti/registration-url", url.Values{"_csrf": {admin.csrf("/admin/lti")}, "email_domains": {"school.example"}, "create_accounts": {"1"}})
	require.Equal(t, http.StatusOK, made.status, made.body)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(made.body))
	require.NoError(t, err)
	regURL := doc.Find("#registration-url").Text()
	require.True(t, strings.HasPrefix(regURL, public+"/lti/register?code="), regURL)
	bad := admin.post("/admin/lti/registration-url", url.Values{"_csrf": {admin.csrf("/admin/lti")}, "email_domains": {"not a domain!"}})
	assert.Equal(t, http.StatusBadRequest, bad.status)
	assert.Contains(t, bad.body, "is not an email domain")

	stored := func() []lti.Registered {
		list, err := (&lti.Records{Store: b.store}).Platforms(t.Context())
		require.NoError(t, err)
		return list
	}
	lms := a.browser(t) // the LMS admin's browser, where the LMS opens the URL

	newURL := func() string {
		t.Helper()
		made := admin.post("/admin/lti/registration-url", url.Values{"_csrf": {admin.csrf("/admin/lti")}, "email_domains": {"school.example"}, "create_accounts": {"1"}})
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(made.body))
		require.NoError(t, err)
		return doc.Find("#registration-url").Text()
	}

	plat.SetConfigurationIssuer("https://elsewhere.example")
	r := lms.get(localOf(t, plat.RegistrationURL(regURL)))
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, r.body, `data-class="lti-registration-refused"`)
	assert.Contains(t, r.body, "is not on the origin of the configuration URL")
	assert.Empty(t, stored(), "an issuer on another origin: nothing kept")
	plat.SetConfigurationIssuer("")
	spent := lms.get(localOf(t, plat.RegistrationURL(regURL)))
	assert.Equal(t, http.StatusBadRequest, spent.status, "the code was spent by its first use")
	assert.Contains(t, spent.body, "it was used already")
	assert.Empty(t, stored())

	regURL = newURL()
	r = lms.get(localOf(t, plat.RegistrationURL(regURL)))
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.Contains(t, r.body, `id="lti-registered"`)
	assert.Contains(t, r.body, `src="/static/register-close.js"`)
	assert.Contains(t, r.header.Get("Content-Security-Policy"), "frame-ancestors "+plat.Server.URL, "the LMS may show it in its own page")
	regs, refusal := plat.Registrations()
	require.Empty(t, refusal)
	require.Len(t, regs, 1)
	assertRegisteredAsSpecAsks(t, plat, public, regs[0], stored())

	again := lms.get(localOf(t, plat.RegistrationURL(regURL)))
	assert.Equal(t, http.StatusBadRequest, again.status, "a registration URL works once")
	assert.Contains(t, again.body, "it was used already")
	regs, _ = plat.Registrations()
	assert.Len(t, regs, 1, "the LMS was not asked again")
	assert.Len(t, stored(), 1)
	missing := lms.get("/lti/register?" + url.Values{"openid_configuration": {plat.URL() + "/.well-known/openid-configuration"}}.Encode())
	assert.Equal(t, http.StatusBadRequest, missing.status)
	assert.Contains(t, missing.body, "its code is missing, expired or used")

	// A launch from the registered LMS on B, which never saw the
	// registration, lands in the editor.
	onB := b.browser(t)
	launched, _ := onB.lmsLaunch(t, plat, "pupil")
	path, editor := onB.follow(t, b, launched)
	assert.Equal(t, "/editor", path)
	assert.Contains(t, editor, "Signed in as Pia Pupil")

	// A registration endpoint that refuses: nothing kept.
	plat.SetRegistrationRefused(true)
	refused := lms.get(localOf(t, plat.RegistrationURL(newURL())))
	assert.Equal(t, http.StatusBadRequest, refused.status)
	assert.Contains(t, refused.body, "its registration endpoint refused or could not be reached: it answered with an error")
	assert.Contains(t, a.logs.String(), "it answered 400", "the log keeps the status")
	assert.Len(t, stored(), 1)

	consoleDisablesAndRemoves(t, admin.on(b), plat.Issuer, stored)
	assert.NotEqual(t, http.StatusOK, a.browser(t).get("/admin/lti").status, "the console's LTI page is an admin's")
}

// consoleDisablesAndRemoves: the console lists the registered LMS of
// issuer; disabling and removing it change what stored reads.
func consoleDisablesAndRemoves(t *testing.T, adminB *browser, issuer string, stored func() []lti.Registered) {
	t.Helper()
	listed := adminB.get("/admin/lti")
	assert.Contains(t, listed.body, "registered-client-1")
	assert.Contains(t, listed.body, "root@partner.example")
	form := url.Values{"_csrf": {adminB.csrf("/admin/lti")}, "issuer": {issuer}, "client_id": {"registered-client-1"}}
	require.Equal(t, http.StatusOK, adminB.post("/admin/lti/platforms/disable", form).status)
	assert.True(t, stored()[0].Disabled)
	require.Equal(t, http.StatusOK, adminB.post("/admin/lti/platforms/remove", form).status)
	assert.Empty(t, stored())
	assert.Equal(t, http.StatusNotFound, adminB.post("/admin/lti/platforms/remove", form).status, "removed already")
}

// assertRegisteredAsSpecAsks: the tool registered with the claims LTI
// Dynamic Registration asks for, and the LMS is kept (list) with what its
// configuration and registration answered and the URL's rules.
func assertRegisteredAsSpecAsks(t *testing.T, plat *ltiplatformtest.Platform, public string, reg map[string]any, list []lti.Registered) {
	t.Helper()
	assert.Equal(t, "web", reg["application_type"])
	assert.Equal(t, []any{"id_token"}, reg["response_types"])
	assert.Equal(t, []any{"implicit", "client_credentials"}, reg["grant_types"])
	assert.Equal(t, public+"/lti/login", reg["initiate_login_uri"])
	assert.Equal(t, []any{public + "/lti/launch"}, reg["redirect_uris"])
	assert.Equal(t, public+"/lti/jwks", reg["jwks_uri"])
	assert.Equal(t, "private_key_jwt", reg["token_endpoint_auth_method"])
	assert.Equal(t, "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly", reg["scope"])
	assert.NotEmpty(t, reg["client_name"])
	tc := reg["https://purl.imsglobal.org/spec/lti-tool-configuration"].(map[string]any)
	assert.Equal(t, strings.TrimPrefix(public, "http://"), tc["domain"])
	assert.Equal(t, public+"/lti/launch", tc["target_link_uri"])
	assert.Equal(t, []any{"sub", "email", "given_name", "family_name", "name"}, tc["claims"])
	assert.Equal(t, []any{map[string]any{"type": "LtiResourceLinkRequest"}, map[string]any{"type": "LtiDeepLinkingRequest"}}, tc["messages"])

	require.Len(t, list, 1, "kept once, for both instances")
	p := list[0]
	assert.Equal(t, plat.Issuer, p.Issuer)
	assert.Equal(t, "registered-client-1", p.ClientID)
	assert.Equal(t, "registered-deployment", p.DeploymentID)
	assert.Equal(t, plat.AuthURL(), p.AuthURL)
	assert.Equal(t, plat.JWKSURL(), p.JWKSURL)
	assert.Equal(t, plat.TokenURL(), p.TokenURL)
	assert.Equal(t, "root@partner.example", p.RegisteredBy)
	assert.Equal(t, "school.example", p.EmailDomains)
	assert.True(t, p.CreateAccounts)
}

// hostileLMS is an LMS that registers by Dynamic Registration and then
// does what an attacker's LMS would: its behaviour is switched per test.
type hostileLMS struct {
	srv *httptest.Server
	// config answers the OpenID configuration (nil: a valid one).
	config http.HandlerFunc
	// register answers the registration (nil: a valid one).
	register http.HandlerFunc
	// product is its product_family_code.
	product string
}

func startHostileLMS(t *testing.T) *hostileLMS {
	h := &hostileLMS{product: "moodle"}
	mux := http.NewServeMux()
	mux.HandleFunc("/config", func(w http.ResponseWriter, r *http.Request) {
		if h.config != nil {
			h.config(w, r)
			return
		}
		u := h.srv.URL
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": u, "authorization_endpoint": u + "/auth", "jwks_uri": u + "/jwks",
			"token_endpoint": u + "/token", "registration_endpoint": u + "/register",
			"https://purl.imsglobal.org/spec/lti-platform-configuration": map[string]any{"product_family_code": h.product}})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		if h.register != nil {
			h.register(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "client-" + randid.Token(4)})
	})
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	return h
}

// hostileRegistration is an LMS's answer a registration refuses: what
// its configuration or registration endpoint answers (nil: the
// well-behaved one), what the page says and what it never quotes.
type hostileRegistration struct {
	name            string
	config, reg     http.HandlerFunc
	configURL, said string
	never           []string
}

// hostileRegistrations are the refused answers; metadata stands in for an
// internal address (169.254.169.254).
func hostileRegistrations(metadata string) []hostileRegistration {
	return []hostileRegistration{
		{name: "the configuration redirects to an internal address",
			config: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, metadata+"/latest/meta-data/iam", http.StatusFound)
			}, said: "it redirected elsewhere"},
		{name: "the registration endpoint redirects a POST to an internal address",
			reg: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, metadata+"/register", http.StatusTemporaryRedirect)
			}, said: "it redirected elsewhere"},
		{name: "the configuration is not JSON",
			config: func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("#!secret-banner 9f3a")) },
			said:   "its answer is not the JSON expected", never: []string{"invalid character", "secret-banner"}},
		{name: "the configuration answers an error",
			config: func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "internal-hostname-7 says no", http.StatusTeapot)
			},
			said: "it answered with an error", never: []string{"418", "internal-hostname-7"}},
		{name: "the client id holds a line break",
			reg: func(w http.ResponseWriter, _ *http.Request) {
				_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "client\nsecond-line"})
			}, said: "its answer holds no usable client_id", never: []string{"second-line"}},
		{name: "nothing listens there", configURL: "http://127.0.0.1:1/config",
			said: "it could not be read", never: []string{"connection refused", "dial tcp"}},
	}
}

// Dynamic Registration under the outbound policy, as an attacker's LMS
// would try it: a configuration or a registration that redirects to an
// internal address is refused and the internal address is never asked
// (GET or POST); the refusal page says what the bridge knows and never
// the LMS's bytes or the transport's words; plain http is refused
// without the development switch; a name of 600,000 characters is kept
// bounded, and then neither an anonymous login naming its issuer nor the
// console's LTI page grows with it.
func TestLTIRegistrationUnderTheOutboundPolicy(t *testing.T) {
	var internal atomic.Int32
	metadata := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { internal.Add(1) }))
	defer metadata.Close() // a stand-in for 169.254.169.254
	lms := startHostileLMS(t)
	ta := startTestApp(t, testOptions{yaml: "lti:\n  dynamic_registration: true\n"})
	ta.addAccount(t, "root@partner.example", true)
	admin := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, admin.login("root@partner.example", testPassword).status)
	register := func(configURL string) page {
		t.Helper()
		made := admin.post("/admin/lti/registration-url", url.Values{"_csrf": {admin.csrf("/admin/lti")}, "create_accounts": {"1"}})
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(made.body))
		require.NoError(t, err)
		reg := doc.Find("#registration-url").Text()
		require.NotEmpty(t, reg)
		return ta.browser(t).get(localOf(t, reg) + "&" + url.Values{"openid_configuration": {configURL}, "registration_token": {"tok"}}.Encode())
	}
	stored := func() []lti.Registered {
		list, err := (&lti.Records{Store: ta.store}).Platforms(t.Context())
		require.NoError(t, err)
		return list
	}

	for _, tc := range hostileRegistrations(metadata.URL) {
		t.Run(tc.name, func(t *testing.T) {
			lms.config, lms.register = tc.config, tc.reg
			defer func() { lms.config, lms.register = nil, nil }()
			got := register(cmp.Or(tc.configURL, lms.srv.URL+"/config"))
			assert.Equal(t, http.StatusBadRequest, got.status)
			assert.Contains(t, got.body, `data-class="lti-registration-refused"`)
			assert.Contains(t, got.body, tc.said)
			for _, s := range tc.never {
				assert.NotContains(t, got.body, s, "the page never quotes the LMS's bytes or the transport's words")
			}
			assert.Empty(t, stored(), "nothing kept")
		})
	}
	assert.Zero(t, internal.Load(), "the internal address was never asked")

	t.Run("plain http without the development switch", func(t *testing.T) {
		prod := startTestApp(t, testOptions{yaml: "lti:\n  dynamic_registration: true\noutbound:\n  allow_local: \"false\"\n"})
		prod.addAccount(t, "root@partner.example", true)
		b := prod.browser(t)
		require.Equal(t, http.StatusSeeOther, b.login("root@partner.example", testPassword).status)
		made := b.post("/admin/lti/registration-url", url.Values{"_csrf": {b.csrf("/admin/lti")}, "create_accounts": {"1"}})
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(made.body))
		require.NoError(t, err)
		reg := doc.Find("#registration-url").Text()
		got := prod.browser(t).get(localOf(t, reg) + "&" + url.Values{"openid_configuration": {lms.srv.URL + "/config"}}.Encode())
		assert.Equal(t, http.StatusBadRequest, got.status)
		assert.Contains(t, got.body, "it is not https")
		list, err := (&lti.Records{Store: prod.store}).Platforms(t.Context())
		require.NoError(t, err)
		assert.Empty(t, list)
	})

	t.Run("a name of 600,000 characters", func(t *testing.T) {
		lms.product = strings.Repeat("N", 600_000)
		defer func() { lms.product = "moodle" }()
		got := register(lms.srv.URL + "/config")
		require.Equal(t, http.StatusOK, got.status, got.body)
		assert.Less(t, len(got.body), 20_000)
		list := stored()
		require.Len(t, list, 1)
		assert.LessOrEqual(t, len(list[0].Name), store.MaxName)

		before := len(ta.logs.String())
		login := ta.browser(t).get("/lti/login?" + url.Values{"iss": {lms.srv.URL}, "login_hint": {"x"}, "target_link_uri": {"https://elsewhere.example/"}}.Encode())
		assert.Less(t, len(login.body), 20_000, "the page does not grow with the stored name")
		assert.Less(t, len(ta.logs.String())-before, 5_000, "nor the log")
		console := admin.get("/admin/lti")
		require.Equal(t, http.StatusOK, console.status)
		assert.Less(t, len(console.body), 60_000, "nor the console's LTI page")
	})
}

// Dynamic Registration tried with the demo alone, as docs/lti.md tells a
// newcomer: an admin makes a registration URL on the console's LTI page,
// the demo's sample LMS opens it from its "add a tool" page, the bridge
// registers it (its issuer is a name, its configuration on a loopback
// port: allowed for the sample LMS alone), and a learner's launch from
// it lands in the editor through the new registration.
func TestDemoSampleLMSRegistersFromTheConsole(t *testing.T) {
	ta := startTestApp(t, testOptions{sampleLMS: true})
	require.NotNil(t, ta.lms)
	ta.lms.SetTool(ta.srv.URL)
	ta.addAccount(t, "root@partner.example", true)
	admin := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, admin.login("root@partner.example", testPassword).status)
	made := admin.post("/admin/lti/registration-url", url.Values{"_csrf": {admin.csrf("/admin/lti")}, "email_domains": {"school.example"}, "create_accounts": {"1"}})
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(made.body))
	require.NoError(t, err)
	regURL := doc.Find("#registration-url").Text()
	require.NotEmpty(t, regURL)

	// The sample LMS's "add a tool" page frames the registration URL.
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get(ta.lms.URL() + samplelms.RegisterToolPath + "?" + url.Values{"url": {regURL}}.Encode())
	require.NoError(t, err)
	page, err := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	src := page.Find("#registration").AttrOr("src", "")
	require.True(t, strings.HasPrefix(src, ta.srv.URL+"/lti/register?"), src)
	r := ta.browser(t).get(localOf(t, src))
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.Contains(t, r.body, `id="lti-registered"`)
	list, err := (&lti.Records{Store: ta.store}).Platforms(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "https://sample-lms.ssobridge.invalid", list[0].Issuer)
	assert.Equal(t, "registered-client-1", list[0].ClientID)

	// A launch from the sample LMS now goes through its registration.
	b := ta.browser(t)
	login := b.post("/lti/login", ta.lms.LoginForm("ada"), "Sec-Fetch-Site", "cross-site", "Origin", ta.lms.URL())
	require.Equal(t, http.StatusSeeOther, login.status, login.body)
	resp, err = hc.Get(login.header.Get("Location"))
	require.NoError(t, err)
	answer, err := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	form := url.Values{}
	answer.Find("form input").Each(func(_ int, s *goquery.Selection) { form.Set(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	launched := b.post("/lti/launch", form, "Sec-Fetch-Site", "cross-site", "Origin", ta.lms.URL())
	path, editor := b.follow(t, ta, launched)
	assert.Equal(t, "/editor", path)
	assert.Contains(t, editor, "Signed in as Ada Lovelace")
	acct, err := ta.store.AccountByEmail(t.Context(), "ada.lovelace@school.example")
	require.NoError(t, err)
	ids, err := ta.store.IdentitiesOf(t.Context(), acct.ID)
	require.NoError(t, err)
	require.Len(t, ids, 1)
	assert.Equal(t, "lti:https://sample-lms.ssobridge.invalid|registered-client-1", ids[0].Source)
}
