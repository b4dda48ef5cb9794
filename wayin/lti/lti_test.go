package lti_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/fakeclock"
	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

const base = "https://bridge.test"

var learner = ltiplatformtest.User{Sub: "sub-learner-1", Email: "pupil@school.example", GivenName: "Ada", FamilyName: "Pupil",
	Roles: []string{ltiplatformtest.RoleLearner}}

// usedOnce is store.UseOnce's rule in memory (the store's own is tested in
// its conformance suite).
type usedOnce struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (u *usedOnce) use(_ context.Context, kind, id string, _ time.Time) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.seen[kind+id] {
		return store.ErrUsed
	}
	u.seen[kind+id] = true
	return nil
}

type fixture struct {
	plat  *ltiplatformtest.Platform
	tool  *lti.Tool
	clock *fakeclock.Clock
}

func setup(t testing.TB) fixture {
	t.Helper()
	plat := ltiplatformtest.Start(t, base)
	plat.AddUser("learner", learner)
	clock := fakeclock.New(time.Now())
	plat.SetClock(clock.Now)
	tool := lti.New(lti.Config{
		Platforms: []lti.Platform{{Name: "Test LMS", Issuer: plat.Issuer, ClientID: plat.ClientID, DeploymentIDs: []string{"deployment-0", plat.DeploymentID},
			AuthURL: plat.AuthURL(), JWKSURL: plat.JWKSURL(), AdminRoles: []string{"Administrator"}, CreateAccounts: true}},
		UseOnce: (&usedOnce{seen: map[string]bool{}}).use, Now: clock.Now, HTTPClient: plat.Server.Client(),
	})
	return fixture{plat: plat, tool: tool, clock: clock}
}

// login runs the third-party-initiated login and checks the request sent
// to the platform.
func (f fixture) login(t *testing.T) lti.Flow {
	t.Helper()
	to, flow, err := f.tool.Login(context.Background(), base, f.plat.LoginForm("learner"))
	require.NoError(t, err)
	u, err := url.Parse(to)
	require.NoError(t, err)
	q := u.Query()
	assert.Equal(t, f.plat.AuthURL(), u.Scheme+"://"+u.Host+u.Path)
	for k, v := range map[string]string{"scope": "openid", "response_type": "id_token", "response_mode": "form_post", "prompt": "none",
		"client_id": f.plat.ClientID, "redirect_uri": base + "/lti/launch", "login_hint": "learner", "lti_message_hint": "resource-link-42",
		"state": flow.State, "nonce": flow.Nonce} {
		assert.Equal(t, v, q.Get(k), k)
	}
	assert.NotEqual(t, flow.State, flow.Nonce)
	return flow
}

func TestLaunch(t *testing.T) {
	f := setup(t)
	flow := f.login(t)
	id, err := f.tool.Launch(context.Background(), base, []lti.Flow{flow}, url.Values{"id_token": {f.plat.IDToken(learner, flow.Nonce)}, "state": {flow.State}})
	require.NoError(t, err)
	assert.Equal(t, "sub-learner-1", id.Subject)
	assert.Equal(t, "pupil@school.example", id.Email)
	assert.Equal(t, "Ada", id.GivenName)
	assert.Equal(t, "Pupil", id.FamilyName)
	assert.Equal(t, "resource-link-42", id.ResourceLinkID)
	assert.Equal(t, "deployment-1", id.DeploymentID)
	assert.Equal(t, f.plat.Issuer, id.Platform.Issuer)
	assert.False(t, id.Admin, "a learner is no partner admin")
	assert.False(t, id.Framed())

	t.Run("the same form again is a replay", func(t *testing.T) {
		_, err := f.tool.Launch(context.Background(), base, []lti.Flow{flow}, url.Values{"id_token": {f.plat.Issued()[0]}, "state": {flow.State}})
		assert.ErrorIs(t, err, lti.ErrReplayed)
	})
}

func TestAdminRoles(t *testing.T) {
	f := setup(t)
	for _, tc := range []struct {
		roles []string
		admin bool
	}{
		{[]string{ltiplatformtest.RoleInstructor}, false},
		{[]string{ltiplatformtest.RoleLearner, ltiplatformtest.RoleAdministrator}, true},
		{[]string{"http://purl.imsglobal.org/vocab/lis/v2/membership#Administrator"}, false}, // a course's administrator
		{[]string{"http://purl.imsglobal.org/vocab/lis/v2/membership/Learner#Administrator"}, false},
		{[]string{"Administrator"}, false}, // no role URI
		{[]string{"http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"}, false},
		{nil, false},
	} {
		flow := f.login(t)
		u := learner
		u.Roles = tc.roles
		id, err := f.tool.Launch(context.Background(), base, []lti.Flow{flow}, url.Values{"id_token": {f.plat.IDToken(u, flow.Nonce)}, "state": {flow.State}})
		require.NoError(t, err)
		assert.Equal(t, tc.admin, id.Admin, "%v", tc.roles)
	}
}

func TestLoginRefusals(t *testing.T) {
	f := setup(t)
	for _, tc := range []struct {
		name string
		edit func(q url.Values)
		want error
	}{
		{"no iss", func(q url.Values) { q.Del("iss") }, lti.ErrBadRequest},
		{"no login_hint", func(q url.Values) { q.Del("login_hint") }, lti.ErrBadRequest},
		{"no target_link_uri", func(q url.Values) { q.Del("target_link_uri") }, lti.ErrBadRequest},
		{"unregistered issuer", func(q url.Values) { q.Set("iss", "https://lms.other.example") }, lti.ErrUnknownPlatform},
		{"unregistered client", func(q url.Values) { q.Set("client_id", "someone-else") }, lti.ErrUnknownPlatform},
		{"unregistered deployment", func(q url.Values) { q.Set("lti_deployment_id", "deployment-9") }, lti.ErrUnknownPlatform},
		{"target on another site", func(q url.Values) { q.Set("target_link_uri", "https://evil.example/lti/launch") }, lti.ErrBadRequest},
		{"target over http", func(q url.Values) { q.Set("target_link_uri", "http://bridge.test/lti/launch") }, lti.ErrBadRequest},
		{"target with credentials", func(q url.Values) { q.Set("target_link_uri", "https://a@bridge.test/lti/launch") }, lti.ErrBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := f.plat.LoginForm("learner")
			tc.edit(q)
			_, _, err := f.tool.Login(context.Background(), base, q)
			assert.ErrorIs(t, err, tc.want)
		})
	}
	t.Run("without client_id or deployment", func(t *testing.T) {
		q := f.plat.LoginForm("learner")
		q.Del("client_id")
		q.Del("lti_deployment_id")
		_, _, err := f.tool.Login(context.Background(), base, q)
		assert.NoError(t, err)
	})
}

// noneToken is an unsigned token (alg none) of claims.
func noneToken(t *testing.T, claims map[string]any) string {
	b, err := json.Marshal(claims)
	require.NoError(t, err)
	return base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + base64.RawURLEncoding.EncodeToString(b) + "."
}

func TestLaunchRefusals(t *testing.T) {
	f := setup(t)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	claim := func(k string, v any) func(map[string]any) { return func(c map[string]any) { c[k] = v } }
	drop := func(k string) func(map[string]any) { return func(c map[string]any) { delete(c, k) } }
	const lti13 = "https://purl.imsglobal.org/spec/lti/claim/"
	for _, tc := range []struct {
		name  string
		edit  func(c map[string]any)
		token func(t *testing.T, c map[string]any) string // nil: the platform signs
		state string                                      // "": the flow's
		flows func(lti.Flow) []lti.Flow                   // nil: the flow alone
		want  error
	}{
		{name: "signed by another key under the platform's kid", token: func(t *testing.T, c map[string]any) string {
			_, kid := f.plat.Key()
			return ltiplatformtest.SignWith(jose.RS256, other, kid, c)
		}, want: lti.ErrInvalid},
		// The set was read moments ago: "try again" (TestKeyRollover: a
		// kid still unknown once it is read again is refused).
		{name: "an unknown kid", token: func(t *testing.T, c map[string]any) string {
			return ltiplatformtest.SignWith(jose.RS256, other, "someone-elses-key", c)
		}, want: lti.ErrKeyChanged},
		{name: "alg none", token: noneToken, want: lti.ErrInvalid},
		{name: "HS256 with the platform's public key as the secret", token: func(t *testing.T, c map[string]any) string {
			k, kid := f.plat.Key()
			der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
			require.NoError(t, err)
			return ltiplatformtest.SignWith(jose.HS256, der, kid, c)
		}, want: lti.ErrInvalid},
		{name: "another audience", edit: claim("aud", "another-tool"), want: lti.ErrInvalid},
		{name: "an audience list without azp", edit: claim("aud", []string{"ssobridge-client", "another-tool"}), want: lti.ErrInvalid},
		{name: "azp of another client", edit: func(c map[string]any) { c["aud"] = []string{"ssobridge-client", "x"}; c["azp"] = "x" }, want: lti.ErrInvalid},
		{name: "another issuer", edit: claim("iss", "https://lms.other.example"), want: lti.ErrInvalid},
		{name: "expired", edit: func(c map[string]any) { c["exp"] = f.clock.Now().Add(-time.Minute).Unix() }, want: lti.ErrClock},
		{name: "issued in the future", edit: func(c map[string]any) { c["iat"] = f.clock.Now().Add(2 * time.Minute).Unix() }, want: lti.ErrClock},
		{name: "no exp", edit: drop("exp"), want: lti.ErrInvalid},
		{name: "a nonce this login did not ask for", edit: claim("nonce", "another-nonce"), want: lti.ErrBadState},
		{name: "no nonce", edit: drop("nonce"), want: lti.ErrBadState},
		{name: "another browser's state", state: "another-browsers-state", want: lti.ErrBadState},
		{name: "no flow in this browser", flows: func(lti.Flow) []lti.Flow { return nil }, want: lti.ErrBadState},
		{name: "the login took too long", flows: func(fl lti.Flow) []lti.Flow { fl.Expires = f.clock.Now().Add(-time.Second); return []lti.Flow{fl} }, want: lti.ErrFlowExpired},
		{name: "an unregistered deployment", edit: claim(lti13+"deployment_id", "deployment-9"), want: lti.ErrUnknownPlatform},
		{name: "no message_type", edit: drop(lti13 + "message_type"), want: lti.ErrInvalid},
		{name: "a deep-linking request", edit: claim(lti13+"message_type", "LtiDeepLinkingRequest"), want: lti.ErrInvalid},
		{name: "no version", edit: drop(lti13 + "version"), want: lti.ErrInvalid},
		{name: "version 1.1", edit: claim(lti13+"version", "1.1"), want: lti.ErrInvalid},
		{name: "no sub", edit: drop("sub"), want: lti.ErrInvalid},
		{name: "no resource link id", edit: claim(lti13+"resource_link", map[string]any{"title": "x"}), want: lti.ErrInvalid},
		{name: "a target on another site", edit: claim(lti13+"target_link_uri", "https://evil.example/"), want: lti.ErrInvalid},
		{name: "no email", edit: drop("email"), want: lti.ErrNoEmail},
		{name: "not a JWT", token: func(*testing.T, map[string]any) string { return "not-a-jwt" }, want: lti.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flow := f.login(t)
			claims := f.plat.Claims(learner, flow.Nonce)
			if tc.edit != nil {
				tc.edit(claims)
			}
			tok := f.plat.Sign(claims)
			if tc.token != nil {
				tok = tc.token(t, claims)
			}
			state := flow.State
			if tc.state != "" {
				state = tc.state
			}
			flows := []lti.Flow{flow}
			if tc.flows != nil {
				flows = tc.flows(flow)
			}
			_, err := f.tool.Launch(context.Background(), base, flows, url.Values{"id_token": {tok}, "state": {state}})
			assert.ErrorIs(t, err, tc.want)
		})
	}
	t.Run("an earlier id_token answered to a new login", func(t *testing.T) {
		first := f.login(t)
		tok := f.plat.IDToken(learner, first.Nonce)
		second := f.login(t)
		_, err := f.tool.Launch(context.Background(), base, []lti.Flow{first, second}, url.Values{"id_token": {tok}, "state": {second.State}})
		assert.ErrorIs(t, err, lti.ErrBadState)
	})
	t.Run("the platform answered an error", func(t *testing.T) {
		flow := f.login(t)
		_, err := f.tool.Launch(context.Background(), base, []lti.Flow{flow}, url.Values{"error": {"login_required"}, "state": {flow.State}})
		assert.ErrorIs(t, err, lti.ErrBadRequest)
	})
}

// An unknown kid reads the key set again at most once per 10 s; a
// platform's key rollover is found by the first launch signed by the new
// key, and within 10 s of a read it is "try again" (ErrKeyChanged), not a
// refusal.
func TestKeyRollover(t *testing.T) {
	f := setup(t)
	launch := func() error {
		flow := f.login(t)
		_, err := f.tool.Launch(context.Background(), base, []lti.Flow{flow}, url.Values{"id_token": {f.plat.IDToken(learner, flow.Nonce)}, "state": {flow.State}})
		return err
	}
	require.NoError(t, launch())
	assert.Equal(t, 1, f.plat.JWKSHits())
	f.clock.Advance(2 * time.Minute)
	f.plat.RotateKey()
	require.NoError(t, launch(), "the new kid fetched the set again")
	assert.Equal(t, 2, f.plat.JWKSHits())

	other, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	for range 5 {
		flow := f.login(t)
		tok := ltiplatformtest.SignWith(jose.RS256, other, "unknown-kid", f.plat.Claims(learner, flow.Nonce))
		_, err := f.tool.Launch(context.Background(), base, []lti.Flow{flow}, url.Values{"id_token": {tok}, "state": {flow.State}})
		assert.ErrorIs(t, err, lti.ErrKeyChanged, "read moments ago: try again")
		assert.NotErrorIs(t, err, lti.ErrInvalid)
	}
	assert.Equal(t, 2, f.plat.JWKSHits(), "unknown kids within 10 s fetch nothing")
	f.clock.Advance(11 * time.Second)
	flow := f.login(t)
	tok := ltiplatformtest.SignWith(jose.RS256, other, "unknown-kid", f.plat.Claims(learner, flow.Nonce))
	_, err = f.tool.Launch(context.Background(), base, []lti.Flow{flow}, url.Values{"id_token": {tok}, "state": {flow.State}})
	assert.ErrorIs(t, err, lti.ErrInvalid)
	assert.Equal(t, 3, f.plat.JWKSHits(), "10 s later the set is read again, and a kid still unknown is refused")

	// The LMS rolls its key right after a read: the first launch is told
	// to try again; 10 s later the same kind of launch works.
	f.plat.RotateKey()
	flow = f.login(t)
	_, err = f.tool.Launch(context.Background(), base, []lti.Flow{flow}, url.Values{"id_token": {f.plat.IDToken(learner, flow.Nonce)}, "state": {flow.State}})
	assert.ErrorIs(t, err, lti.ErrKeyChanged)
	f.clock.Advance(11 * time.Second)
	require.NoError(t, launch(), "the set read again finds the new key")
	assert.Equal(t, 4, f.plat.JWKSHits())
}

// A key set unreadable at start: launches are refused as unavailable,
// Ready says so, and the first launch after the set is back works.
func TestKeySetOutage(t *testing.T) {
	f := setup(t)
	f.plat.SetKeysDown(true)
	assert.Error(t, f.tool.Refresh(context.Background()))
	assert.ErrorContains(t, f.tool.Ready(), "Test LMS")
	launch := func() error {
		flow := f.login(t)
		_, err := f.tool.Launch(context.Background(), base, []lti.Flow{flow}, url.Values{"id_token": {f.plat.IDToken(learner, flow.Nonce)}, "state": {flow.State}})
		return err
	}
	f.clock.Advance(6 * time.Second)
	assert.ErrorIs(t, launch(), lti.ErrKeysUnavailable)
	f.plat.SetKeysDown(false)
	assert.ErrorIs(t, launch(), lti.ErrKeysUnavailable, "tried again at most every 5 s")
	f.clock.Advance(6 * time.Second)
	require.NoError(t, launch())
	assert.NoError(t, f.tool.Ready())

	// Down again after a read: the keys read before stay in use.
	f.plat.SetKeysDown(true)
	assert.Error(t, f.tool.Refresh(context.Background()))
	assert.Error(t, f.tool.Ready())
	assert.NoError(t, launch())
}

func TestToolKey(t *testing.T) {
	pemKey, err := lti.GenerateKeyPEM()
	require.NoError(t, err)
	k, err := lti.ParseToolKey(pemKey)
	require.NoError(t, err)
	again, err := lti.ParseToolKey(pemKey)
	require.NoError(t, err)
	assert.Equal(t, k.KeyID(), again.KeyID(), "the kid follows from the key")
	set := k.JWKS()
	require.Len(t, set.Keys, 1)
	assert.True(t, set.Keys[0].IsPublic())
	assert.Equal(t, "RS256", set.Keys[0].Algorithm)
	b, err := json.Marshal(set)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"d"`, "no private part")

	small, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	for name, data := range map[string][]byte{
		"not PEM":             []byte("hello"),
		"1024 bits":           pemOf(t, small),
		"a certificate block": []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
	} {
		_, err := lti.ParseToolKey(data)
		assert.Error(t, err, name)
	}
	_, err = lti.ParseToolKey(pemOf(t, small))
	assert.ErrorContains(t, err, "1024-bit")
}

func pemOf(t *testing.T, k *rsa.PrivateKey) []byte {
	t.Helper()
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}

func TestFrameAncestors(t *testing.T) {
	p := lti.Platform{AuthURL: "https://sso.canvaslms.com/api/lti/authorize_redirect"}
	for _, tc := range []struct {
		name      string
		platform  lti.Platform
		returnURL string
		want      []string
	}{
		{"the auth_url's origin and the signed return_url's", p, "https://springfield.instructure.com/courses/7/external_content/success", []string{"https://sso.canvaslms.com", "https://springfield.instructure.com"}},
		{"one origin once", p, "https://sso.canvaslms.com/x", []string{"https://sso.canvaslms.com"}},
		{"no return_url", p, "", []string{"https://sso.canvaslms.com"}},
		{"a return_url over http elsewhere is not taken", p, "http://springfield.example/courses", []string{"https://sso.canvaslms.com"}},
		{"http on loopback is", p, "http://127.0.0.1:8000/course", []string{"https://sso.canvaslms.com", "http://127.0.0.1:8000"}},
		{"a return_url that would break the header is not taken", p, "https://a.example;script-src/x", []string{"https://sso.canvaslms.com"}},
		{"a wildcard return_url is not taken", p, "https://*.evil.example/courses", []string{"https://sso.canvaslms.com"}},
		{"a wildcard port is not taken", p, "https://lms.example:*/courses", []string{"https://sso.canvaslms.com"}},
		{"an IPv6 loopback is", p, "http://[::1]:8000/c", []string{"https://sso.canvaslms.com", "http://[::1]:8000"}},
		{"frame_origins set: those alone", lti.Platform{AuthURL: p.AuthURL, FrameOrigins: []string{"https://lms.school.example"}},
			"https://springfield.instructure.com/", []string{"https://lms.school.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, lti.Identity{Platform: tc.platform, ReturnURL: tc.returnURL}.FrameAncestors())
		})
	}
}

// A refused launch's page links back to the course only when the token's
// return_url is on the origin of the platform its iss names.
func TestCourseURL(t *testing.T) {
	f := setup(t)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	course := f.plat.URL() + "/course"
	token := func(iss, back string, forged bool) string {
		c := f.plat.Claims(learner, "n")
		c["iss"] = iss
		c["https://purl.imsglobal.org/spec/lti/claim/launch_presentation"] = map[string]any{"return_url": back}
		if forged {
			return ltiplatformtest.SignWith(jose.RS256, other, "forged", c)
		}
		return f.plat.Sign(c)
	}
	for _, tt := range []struct {
		name, token, want string
	}{
		{"the platform's course page", token(f.plat.Issuer, course, false), course},
		{"unverified, but on the platform's origin: still its course", token(f.plat.Issuer, course, true), course},
		{"another origin", token(f.plat.Issuer, "https://evil.example/course", false), ""},
		{"an unregistered issuer", token("https://other-lms.example", course, false), ""},
		{"a script URL", token(f.plat.Issuer, "javascript:alert(1)", false), ""},
		{"no return_url", token(f.plat.Issuer, "", false), ""},
		{"no token", "", ""},
		{"not a token", "not.a.token", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, f.tool.CourseURL(url.Values{"id_token": {tt.token}}))
		})
	}
}
