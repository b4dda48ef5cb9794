package samplelms

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Deep Linking 2.0, as a platform does it: an instructor's link starts a
// deep-linking launch of the tool; the tool answers with a signed
// LtiDeepLinkingResponse posted to the return URL, which the platform
// verifies against the tool's key set before it places the items in the
// course. A placed item is then a link of the course like the first.
const (
	DeepLinkPath       = "/deep-link/{user}"
	DeepLinkReturnPath = "/deep-link-return"
	deepLinkHint       = "deep-link"
	placedHint         = "placed-"
)

// Placed is an item the tool placed in the course.
type Placed struct{ Title, URL string }

// deepLinking is the platform's deep-linking state.
type deepLinking struct {
	data        map[string]bool // the data of each request not answered yet
	placed      []Placed
	refusal     string         // why the last answer was refused
	answer      map[string]any // the last answer's verified claims
	acceptTypes []string       // nil: ltiResourceLink
	client      *http.Client
}

// placedIndex reads a placed item's message hint.
func placedIndex(hint string) (int, bool) {
	n, ok := strings.CutPrefix(hint, placedHint)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(n)
	return i, err == nil && i >= 0
}

// DeepLinkForm is the login form of an instructor's "place the tool"
// link.
func (l *LMS) DeepLinkForm(hint string) url.Values { return l.linkLogin(hint, deepLinkHint, false) }

// SetAcceptTypes sets the content item types deep-linking requests
// accept (nil: ltiResourceLink).
func (l *LMS) SetAcceptTypes(types []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dl.acceptTypes = types
}

// Placed are the items placed in the course, in order.
func (l *LMS) Placed() []Placed {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.dl.placed)
}

// DeepLinkRefusal is why the last deep-linking answer was refused ("" if
// it was accepted).
func (l *LMS) DeepLinkRefusal() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dl.refusal
}

// DeepLinkAnswer is the last accepted answer's claims.
func (l *LMS) DeepLinkAnswer() map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dl.answer
}

// serveDeepLinkStart is an instructor's "place the tool" link: it posts
// the deep-linking login to the tool (framed with ?in=frame).
func (l *LMS) serveDeepLinkStart(w http.ResponseWriter, r *http.Request) {
	l.postLogin(w, l.linkLogin(r.PathValue("user"), deepLinkHint, r.URL.Query().Get("in") == "frame"))
}

// deepLinkClaims turn a launch's claims into a deep-linking request's
// (called with the launch's claims, before they are signed).
func (l *LMS) deepLinkClaims(c map[string]any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	data := "request-" + strconv.FormatInt(l.now().UnixNano(), 36)
	if l.dl.data == nil {
		l.dl.data = map[string]bool{}
	}
	l.dl.data[data] = true
	types := l.dl.acceptTypes
	if types == nil {
		types = []string{"ltiResourceLink"}
	}
	delete(c, "https://purl.imsglobal.org/spec/lti/claim/resource_link")
	c["https://purl.imsglobal.org/spec/lti/claim/message_type"] = "LtiDeepLinkingRequest"
	c["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"] = map[string]any{
		"deep_link_return_url": l.public + DeepLinkReturnPath, "accept_types": types,
		"accept_presentation_document_targets": []string{"iframe", "window"}, "accept_multiple": false, "data": data,
		"title": "Video editor",
	}
}

// placedClaims make a launch one of the placed items'.
func (l *LMS) placedClaims(c map[string]any, i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i >= len(l.dl.placed) {
		return
	}
	c["https://purl.imsglobal.org/spec/lti/claim/target_link_uri"] = l.dl.placed[i].URL
	c["https://purl.imsglobal.org/spec/lti/claim/resource_link"] = map[string]any{"id": placedHint + strconv.Itoa(i), "title": l.dl.placed[i].Title}
}

// serveDeepLinkReturn takes the tool's answer: verified against the
// tool's key set (its /lti/jwks) and checked as the spec asks, its items
// are placed in the course; a refused answer is a 400 that says why.
func (l *LMS) serveDeepLinkReturn(w http.ResponseWriter, r *http.Request) {
	claims, err := l.verifyAnswer(r.Context(), r.PostFormValue("JWT"))
	l.mu.Lock()
	if err != nil {
		l.dl.refusal = err.Error()
		l.mu.Unlock()
		http.Error(w, "deep-linking answer refused: "+err.Error(), http.StatusBadRequest)
		return
	}
	l.dl.refusal, l.dl.answer = "", claims
	items, _ := claims["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		title, _ := m["title"].(string)
		u, _ := m["url"].(string)
		l.dl.placed = append(l.dl.placed, Placed{Title: title, URL: u})
	}
	l.mu.Unlock()
	http.Redirect(w, r, CoursePath, http.StatusSeeOther)
}

// verifyAnswer checks a LtiDeepLinkingResponse: RS256 by a key of the
// tool's key set, iss the client id, aud the platform, a nonce, iat and
// exp within 5 minutes of now, the deployment, the message type and
// version, the data of a request not answered before, and items of
// accepted types with a URL on the tool.
func (l *LMS) verifyAnswer(ctx context.Context, raw string) (map[string]any, error) {
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return nil, fmt.Errorf("not an RS256 JWT: %w", err)
	}
	set, err := l.toolKeys(ctx)
	if err != nil {
		return nil, err
	}
	keys := set.Key(tok.Headers[0].KeyID)
	if len(keys) == 0 {
		return nil, fmt.Errorf("kid %q is not in the tool's key set", tok.Headers[0].KeyID)
	}
	var std jwt.Claims
	var all map[string]any
	if err := tok.Claims(keys[0].Key, &std, &all); err != nil {
		return nil, fmt.Errorf("the signature does not verify: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	types := l.dl.acceptTypes
	if types == nil {
		types = []string{"ltiResourceLink"}
	}
	data, _ := all["https://purl.imsglobal.org/spec/lti-dl/claim/data"].(string)
	switch {
	case std.Issuer != l.ClientID:
		return nil, fmt.Errorf("iss %q is not the client id", std.Issuer)
	case !std.Audience.Contains(l.Issuer):
		return nil, fmt.Errorf("aud %v is not the platform", std.Audience)
	case all["nonce"] == nil || all["nonce"] == "":
		return nil, fmt.Errorf("no nonce")
	case std.IssuedAt == nil || std.Expiry == nil || std.Expiry.Time().Sub(std.IssuedAt.Time()) > 5*time.Minute:
		return nil, fmt.Errorf("iat and exp must be within 5 minutes")
	case std.ValidateWithLeeway(jwt.Expected{Time: now}, 30*time.Second) != nil:
		return nil, fmt.Errorf("outside its time")
	case all["https://purl.imsglobal.org/spec/lti/claim/deployment_id"] != l.DeploymentID:
		return nil, fmt.Errorf("deployment_id %v", all["https://purl.imsglobal.org/spec/lti/claim/deployment_id"])
	case all["https://purl.imsglobal.org/spec/lti/claim/message_type"] != "LtiDeepLinkingResponse":
		return nil, fmt.Errorf("message_type %v", all["https://purl.imsglobal.org/spec/lti/claim/message_type"])
	case all["https://purl.imsglobal.org/spec/lti/claim/version"] != "1.3.0":
		return nil, fmt.Errorf("version %v", all["https://purl.imsglobal.org/spec/lti/claim/version"])
	case !l.dl.data[data]:
		return nil, fmt.Errorf("data %q is not a request's of this platform that is still open", data)
	}
	items, ok := all["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"].([]any)
	if !ok {
		return nil, fmt.Errorf("no content_items")
	}
	for _, it := range items {
		m, _ := it.(map[string]any)
		typ, _ := m["type"].(string)
		u, _ := m["url"].(string)
		if !slices.Contains(types, typ) {
			return nil, fmt.Errorf("an item of type %q, which the request did not accept", typ)
		}
		if !strings.HasPrefix(u, strings.TrimSuffix(l.ToolLogin, "/lti/login")+"/") {
			return nil, fmt.Errorf("an item's url %q is not on the tool", u)
		}
	}
	delete(l.dl.data, data) // answered once
	return all, nil
}

// toolKeys reads the tool's key set (its /lti/jwks).
func (l *LMS) toolKeys(ctx context.Context) (jose.JSONWebKeySet, error) {
	l.mu.Lock()
	u := strings.TrimSuffix(l.ToolLogin, "/lti/login") + "/lti/jwks"
	hc := l.dl.client
	l.mu.Unlock()
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return jose.JSONWebKeySet{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return jose.JSONWebKeySet{}, fmt.Errorf("the tool's key set: %w", err)
	}
	defer resp.Body.Close()
	var set jose.JSONWebKeySet
	if resp.StatusCode != http.StatusOK {
		return set, fmt.Errorf("the tool's key set answered %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		return set, fmt.Errorf("the tool's key set: %w", err)
	}
	return set, nil
}

// SetHTTPClient is how the platform reaches the tool (its key set; the
// httptest server's client for a tool on https).
func (l *LMS) SetHTTPClient(hc *http.Client) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dl.client = hc
}

// PlacedForm is the login form of the ith placed item's link, for the
// user hint.
func (l *LMS) PlacedForm(hint string, i int) url.Values {
	return l.linkLogin(hint, placedHint+strconv.Itoa(i), false)
}
