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

	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/store"
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

	stored := func() []store.LTIPlatform {
		list, err := b.store.LTIPlatforms(t.Context())
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
	reg := regs[0]
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

	list := stored()
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
	assert.Contains(t, refused.body, "its registration endpoint answered 400")
	assert.Len(t, stored(), 1)

	// The console on B lists it; disabling and removing change the store.
	adminB := admin.on(b)
	listed := adminB.get("/admin/lti")
	assert.Contains(t, listed.body, "registered-client-1")
	assert.Contains(t, listed.body, "root@partner.example")
	form := url.Values{"_csrf": {adminB.csrf("/admin/lti")}, "issuer": {plat.Issuer}, "client_id": {"registered-client-1"}}
	require.Equal(t, http.StatusOK, adminB.post("/admin/lti/platforms/disable", form).status)
	assert.True(t, stored()[0].Disabled)
	require.Equal(t, http.StatusOK, adminB.post("/admin/lti/platforms/remove", form).status)
	assert.Empty(t, stored())
	assert.Equal(t, http.StatusNotFound, adminB.post("/admin/lti/platforms/remove", form).status, "removed already")
	pupil := a.browser(t)
	assert.NotEqual(t, http.StatusOK, pupil.get("/admin/lti").status, "the console's LTI page is an admin's")
}
