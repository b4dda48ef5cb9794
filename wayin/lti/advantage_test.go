package lti_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

const dlSettings = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"

// deepLinkingClaims makes the platform's next launch a deep-linking
// request with settings (nil: none).
func deepLinkingClaims(settings map[string]any) func(map[string]any) {
	return func(c map[string]any) {
		c["https://purl.imsglobal.org/spec/lti/claim/message_type"] = "LtiDeepLinkingRequest"
		delete(c, "https://purl.imsglobal.org/spec/lti/claim/resource_link")
		if settings != nil {
			c[dlSettings] = settings
		}
	}
}

func TestDeepLinkingRequests(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings map[string]any
		want     error
	}{
		{"a request", map[string]any{"deep_link_return_url": "https://lms.example/return", "accept_types": []string{"ltiResourceLink"}, "data": "opaque"}, nil},
		{"no settings", nil, lti.ErrInvalid},
		{"a return URL over plain http", map[string]any{"deep_link_return_url": "http://lms.example/return"}, lti.ErrInvalid},
		{"a return URL that is no URL", map[string]any{"deep_link_return_url": "javascript:alert(1)"}, lti.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			f.plat.Edit(deepLinkingClaims(tc.settings))
			flow := f.login(t)
			learnerNoMail := learner
			learnerNoMail.Email = ""
			id, err := f.tool.Launch(context.Background(), base, []lti.Flow{flow}, url.Values{"id_token": {f.plat.IDToken(learnerNoMail, flow.Nonce)}, "state": {flow.State}})
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want)
				return
			}
			require.NoError(t, err, "placing needs no email: it opens no account")
			require.NotNil(t, id.DeepLinking)
			assert.Equal(t, "https://lms.example/return", id.DeepLinking.ReturnURL)
			assert.Equal(t, "opaque", id.DeepLinking.Data)
			assert.True(t, id.DeepLinking.Accepts(lti.ResourceLinkType))
		})
	}
}

func TestMayPlace(t *testing.T) {
	for _, tc := range []struct {
		roles []string
		want  bool
	}{
		{[]string{ltiplatformtest.RoleInstructor}, true},
		{[]string{"http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"}, true},
		{[]string{"http://purl.imsglobal.org/vocab/lis/v2/membership#ContentDeveloper"}, true},
		{[]string{ltiplatformtest.RoleAdministrator}, true},
		{[]string{ltiplatformtest.RoleLearner}, false},
		{[]string{"http://purl.imsglobal.org/vocab/lis/v2/membership/Learner#Instructor"}, false},
		{[]string{"Instructor"}, false},
		{nil, false},
	} {
		assert.Equal(t, tc.want, lti.MayPlace(tc.roles), "%v", tc.roles)
	}
}

// The answer is signed with the tool's key under its kid, with the
// claims Deep Linking 2.0 asks for, and verifies against the tool's key
// set alone.
func TestDeepLinkResponse(t *testing.T) {
	pemKey, err := lti.GenerateKeyPEM()
	require.NoError(t, err)
	k, err := lti.ParseToolKey(pemKey)
	require.NoError(t, err)
	now := time.Unix(1_800_000_000, 0)
	raw, err := k.SignDeepLinkResponse(lti.DeepLinkAnswer{Issuer: "https://lms.example", ClientID: "client-1", DeploymentID: "dep-1", Data: "opaque",
		Items: []lti.ContentItem{{Title: "Trailer", URL: lti.ItemURL(base, "/editor/templates/trailer")}}}, now)
	require.NoError(t, err)
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
	require.NoError(t, err)
	assert.Equal(t, k.KeyID(), tok.Headers[0].KeyID)
	set := k.JWKS()
	var std jwt.Claims
	var all map[string]any
	require.NoError(t, tok.Claims(set.Keys[0].Key, &std, &all))
	assert.Equal(t, "client-1", std.Issuer)
	assert.Equal(t, jwt.Audience{"https://lms.example"}, std.Audience)
	assert.Equal(t, now.Add(5*time.Minute), std.Expiry.Time())
	assert.NotEmpty(t, all["nonce"])
	assert.Equal(t, "dep-1", all["https://purl.imsglobal.org/spec/lti/claim/deployment_id"])
	assert.Equal(t, "LtiDeepLinkingResponse", all["https://purl.imsglobal.org/spec/lti/claim/message_type"])
	assert.Equal(t, "1.3.0", all["https://purl.imsglobal.org/spec/lti/claim/version"])
	assert.Equal(t, "opaque", all["https://purl.imsglobal.org/spec/lti-dl/claim/data"])
	assert.Equal(t, []any{map[string]any{"type": "ltiResourceLink", "title": "Trailer", "url": base + "/open?return_to=%2Feditor%2Ftemplates%2Ftrailer"}},
		all["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"])
	assert.Equal(t, base+"/lti/launch", lti.ItemURL(base, ""), "the editor's start: the tool's launch URL")
	assert.Equal(t, "/editor/templates/trailer", lti.ReturnTo(lti.ItemURL(base, "/editor/templates/trailer")), "a later launch lands at the path")
}

func TestNextLink(t *testing.T) {
	const page = "https://lms.example/nrps/members?page=1"
	for _, tc := range []struct {
		name   string
		values []string
		want   string
	}{
		{"none", nil, ""},
		{"next", []string{`<https://lms.example/nrps/members?page=2>; rel="next"`}, "https://lms.example/nrps/members?page=2"},
		{"among others", []string{`<https://lms.example/a>; rel="prev", <https://lms.example/b>; rel="next"`}, "https://lms.example/b"},
		{"two headers", []string{`<https://lms.example/a>; rel="first"`, `<https://lms.example/c>; rel=next`}, "https://lms.example/c"},
		{"several rels", []string{`<https://lms.example/d>; rel="last next"`}, "https://lms.example/d"},
		{"relative", []string{`</nrps/members?page=3>; rel="next"`}, "https://lms.example/nrps/members?page=3"},
		{"a comma in the URL", []string{`<https://lms.example/e?a=1,2>; rel="next"`}, "https://lms.example/e?a=1,2"},
		{"no next", []string{`<https://lms.example/a>; rel="prev"`}, ""},
		{"no brackets", []string{`https://lms.example/a; rel="next"`}, ""},
	} {
		got, err := lti.NextLink(tc.values, page)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
}

func FuzzNextLink(f *testing.F) {
	f.Add(`<https://lms.example/b>; rel="next"`)
	f.Add(`<a>; rel="prev", <b>; rel=next, <"c,>"; rel="x"`)
	f.Fuzz(func(t *testing.T, v string) {
		got, err := lti.NextLink([]string{v}, "https://lms.example/p")
		if err == nil && got != "" {
			if _, perr := url.Parse(got); perr != nil {
				t.Fatalf("NextLink gave %q, which is not a URL", got)
			}
		}
	})
}
