package lti

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/ssobridge/ssobridge/internal/randid"
)

// ResourceLinkType is the one content item type the bridge places: a link
// that launches the editor.
const ResourceLinkType = "ltiResourceLink"

// DeepLinkItem is a place in the editor an instructor may put in a course
// (lti.platforms[i].deep_link_items): a project or a template.
type DeepLinkItem struct {
	Title string `yaml:"title"`
	Path  string `yaml:"path"` // an editor path, as /open's return_to
}

// ContentItem is one item of a deep-linking answer.
type ContentItem struct {
	Title string
	URL   string // the launch URL on this bridge
}

// ItemURL is the launch URL of a content item that opens the editor at
// path ("": the editor's start), on the bridge at base: /open with its
// return_to, which a later launch's target_link_uri carries back
// (ReturnTo).
func ItemURL(base, path string) string {
	base = strings.TrimRight(base, "/")
	if path == "" {
		return base + LaunchPath
	}
	return base + "/open?" + url.Values{"return_to": {path}}.Encode()
}

// placingRoles are the course roles that may place the tool: an
// instructor, a content developer, the course's administrator, and their
// sub-roles (membership/Instructor#TeachingAssistant is an instructor).
var placingRoles = []string{
	"http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor",
	"http://purl.imsglobal.org/vocab/lis/v2/membership#ContentDeveloper",
	"http://purl.imsglobal.org/vocab/lis/v2/membership#Administrator",
	"http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator",
	"http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor",
	"http://purl.imsglobal.org/vocab/lis/v2/institution/person#Faculty",
}

// MayPlace reports whether the roles may place the tool in a course: a
// learner may not (nor anyone with no role the list names).
func MayPlace(roles []string) bool {
	for _, r := range roles {
		if slices.Contains(placingRoles, r) ||
			strings.HasPrefix(r, "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#") ||
			strings.HasPrefix(r, "http://purl.imsglobal.org/vocab/lis/v2/membership/ContentDeveloper#") {
			return true
		}
	}
	return false
}

// DeepLinkAnswer is what a deep-linking response answers: the request's
// platform, deployment and data, and the items placed (none: cancelled).
type DeepLinkAnswer struct {
	Issuer, ClientID, DeploymentID string
	Data                           string
	Items                          []ContentItem
}

// DeepLinkResponseTTL is the life of a deep-linking response.
const DeepLinkResponseTTL = 5 * time.Minute

// SignDeepLinkResponse is the LtiDeepLinkingResponse JWT (RS256, the
// tool's key and kid): iss the client id, aud the platform's issuer, a
// fresh nonce, iat and exp 5 minutes apart, the deployment, the request's
// data unchanged, and the items as ltiResourceLink content items.
func (k ToolKey) SignDeepLinkResponse(a DeepLinkAnswer, now time.Time) (string, error) {
	items := make([]map[string]any, 0, len(a.Items))
	for _, it := range a.Items {
		items = append(items, map[string]any{"type": ResourceLinkType, "title": it.Title, "url": it.URL})
	}
	claims := map[string]any{
		"iss": a.ClientID, "aud": a.Issuer, "iat": now.Unix(), "exp": now.Add(DeepLinkResponseTTL).Unix(), "nonce": randid.Token(16),
		claimDeploymentID: a.DeploymentID, claimMessageType: MessageDeepLinkingResponse, claimVersion: version13,
		"https://purl.imsglobal.org/spec/lti-dl/claim/content_items": items,
	}
	if a.Data != "" {
		claims["https://purl.imsglobal.org/spec/lti-dl/claim/data"] = a.Data
	}
	return k.sign(claims)
}

// sign signs claims as a JWT with the tool's key (RS256, its kid).
func (k ToolKey) sign(claims any) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: k.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", k.kid))
	if err != nil {
		return "", fmt.Errorf("lti: signer: %w", err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("lti: sign: %w", err)
	}
	return tok, nil
}
