// Package ltiplatformtest is an LTI 1.3 platform (an LMS, as far as a
// tool sees one) for tests: a course page whose link starts the
// third-party-initiated login, an OIDC authorization endpoint that answers
// with a signed id_token in an auto-submitting form, and its key set. It
// signs with a key of its own, so the tool under test verifies what it did
// not make.
package ltiplatformtest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// The role URIs of LTI Core's vocabulary the tests use.
const (
	RoleLearner       = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
	RoleInstructor    = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
	RoleAdministrator = "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator"
)

// User is someone the platform knows, by login_hint.
type User struct {
	Sub, Email, GivenName, FamilyName string
	Roles                             []string
}

// Platform is the running platform.
type Platform struct {
	Server       *httptest.Server
	Issuer       string
	public       string // how browsers reach it (Server.URL unless StartTLS named a host)
	ClientID     string
	DeploymentID string
	ToolLogin    string // the tool's login initiation URL
	ToolRedirect string // the redirect URI registered for the tool
	// Target is the target_link_uri of the course's link (the tool's
	// launch URL unless a test sets another).
	Target string

	mu       sync.Mutex
	key      *rsa.PrivateKey
	kid      string
	extra    []jose.JSONWebKey // published beside the signing key
	users    map[string]User
	keysDown bool
	framed   bool
	now      func() time.Time
	edit     func(claims map[string]any) // changes the next id_tokens' claims
	issued   []string                    // every id_token answered, in order
	jwksHits int
}

// Start serves a platform on loopback; tool is the tool's base URL
// (its login at /lti/login, its redirect URI /lti/launch).
func Start(t testing.TB, tool string) *Platform {
	t.Helper()
	p := newPlatform(tool)
	p.Server.Start()
	t.Cleanup(p.Server.Close)
	p.Issuer, p.public = p.Server.URL, p.Server.URL
	return p
}

// StartTLS serves the platform over https (httptest's certificate), as
// browsers reach it at https://<host>:<port> (a name of their own mapped
// to loopback: a site other than the tool's). The tool reads its key set
// at 127.0.0.1 (JWKSURL) with Server.Client().
func StartTLS(t testing.TB, tool, host string) *Platform {
	t.Helper()
	p := newPlatform(tool)
	p.Server.StartTLS()
	t.Cleanup(p.Server.Close)
	_, port, _ := strings.Cut(strings.TrimPrefix(p.Server.URL, "https://"), ":")
	p.public = "https://" + host + ":" + port
	p.Issuer = p.public
	return p
}

func newPlatform(tool string) *Platform {
	p := &Platform{ClientID: "ssobridge-client", DeploymentID: "deployment-1", users: map[string]User{}, now: time.Now}
	p.SetTool(tool)
	p.RotateKey()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks", p.serveJWKS)
	mux.HandleFunc("GET /auth", p.serveAuth)
	mux.HandleFunc("GET /course/{user}", p.serveCourse)
	mux.HandleFunc("GET /framed/{user}", p.serveFramedCourse)
	p.Server = httptest.NewUnstartedServer(mux)
	return p
}

// URL is how browsers reach the platform.
func (p *Platform) URL() string { return p.public }

// SetTool points the platform at the tool's base URL.
func (p *Platform) SetTool(tool string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ToolLogin, p.ToolRedirect, p.Target = tool+"/lti/login", tool+"/lti/launch", tool+"/lti/launch"
}

// AuthURL and JWKSURL are what the tool registers.
func (p *Platform) AuthURL() string { return p.public + "/auth" }

// JWKSURL is the platform's key set.
func (p *Platform) JWKSURL() string { return p.Server.URL + "/jwks" }

// AddUser makes a user known by login_hint.
func (p *Platform) AddUser(hint string, u User) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users[hint] = u
}

// RotateKey signs from now on with a new key, published alone.
func (p *Platform) RotateKey() {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.key, p.kid, p.extra = k, fmt.Sprintf("platform-key-%d", time.Now().UnixNano()), nil
}

// Key is the signing key and its kid (to forge with).
func (p *Platform) Key() (*rsa.PrivateKey, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.key, p.kid
}

// SetKeysDown makes the key set answer 503 (an outage) or serve again.
func (p *Platform) SetKeysDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keysDown = down
}

// SetFramed presents the tool in an iframe (launch_presentation).
func (p *Platform) SetFramed(framed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.framed = framed
}

// SetClock sets the platform's clock (iat, exp).
func (p *Platform) SetClock(now func() time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.now = now
}

// Edit changes the claims of the id_tokens answered from now on (nil: none).
func (p *Platform) Edit(f func(claims map[string]any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.edit = f
}

// Issued is every id_token answered so far.
func (p *Platform) Issued() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.issued...)
}

func (p *Platform) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	p.jwksHits++
	down := p.keysDown
	set := jose.JSONWebKeySet{Keys: append([]jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: p.kid, Algorithm: "RS256", Use: "sig"}}, p.extra...)}
	p.mu.Unlock()
	if down {
		http.Error(w, "key service unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(set)
}

// JWKSHits is how many times the key set was asked for.
func (p *Platform) JWKSHits() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.jwksHits
}

// LoginForm is the form the course page posts to the tool's login URL.
func (p *Platform) LoginForm(hint string) url.Values {
	p.mu.Lock()
	defer p.mu.Unlock()
	return url.Values{"iss": {p.Issuer}, "login_hint": {hint}, "target_link_uri": {p.Target}, "lti_message_hint": {"resource-link-42"},
		"client_id": {p.ClientID}, "lti_deployment_id": {p.DeploymentID}}
}

var autoPost = template.Must(template.New("post").Parse(`<!doctype html><html><head><title>{{.Title}}</title></head>
<body onload="document.forms[0].submit()"><form method="post" action="{{.Action}}">
{{range $k, $v := .Fields}}<input type="hidden" name="{{$k}}" value="{{$v}}">
{{end}}<noscript><button type="submit">Continue</button></noscript></form></body></html>`))

// serveCourse is the course page's link for a user (/course/{hint}): it
// posts the third-party-initiated login to the tool, as an LMS page does.
func (p *Platform) serveCourse(w http.ResponseWriter, r *http.Request) {
	form := p.LoginForm(r.PathValue("user"))
	fields := map[string]string{}
	for k := range form {
		fields[k] = form.Get(k)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = autoPost.Execute(w, map[string]any{"Title": "Course", "Action": p.ToolLogin, "Fields": fields})
}

// Answer is what the platform's page posts back to the tool for an
// authorization request (the URL the tool sent the browser to): the
// fields of the form it submits by itself, as a browser would post them.
func (p *Platform) Answer(t testing.TB, authRequest string) url.Values {
	t.Helper()
	resp, err := p.Server.Client().Get(authRequest)
	if err != nil {
		t.Fatalf("the platform's authorization endpoint: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the platform's authorization endpoint answered %d", resp.StatusCode)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatalf("the platform's page: %v", err)
	}
	form := url.Values{}
	doc.Find("form input").Each(func(_ int, s *goquery.Selection) { form.Set(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	if form.Get("id_token") == "" {
		t.Fatalf("the platform's page posts no id_token")
	}
	return form
}

// serveFramedCourse is a course page that shows the tool inside an
// iframe (/framed/{hint}), as many LMSs do.
func (p *Platform) serveFramedCourse(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = framedCourse.Execute(w, "/course/"+r.PathValue("user"))
}

var framedCourse = template.Must(template.New("framed").Parse(`<!doctype html><html><head><title>Course</title></head>
<body><h1>Media studies</h1><iframe id="tool" src="{{.}}" width="900" height="600"></iframe></body></html>`))

// serveAuth is the authorization endpoint: the tool's authentication
// request checked as a platform does, answered by an auto-submitting form
// that posts the id_token and state to the registered redirect URI.
func (p *Platform) serveAuth(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p.mu.Lock()
	u, known := p.users[q.Get("login_hint")]
	redirect := p.ToolRedirect
	p.mu.Unlock()
	switch {
	case q.Get("scope") != "openid", q.Get("response_type") != "id_token", q.Get("response_mode") != "form_post",
		q.Get("prompt") != "none", q.Get("client_id") != p.ClientID, q.Get("nonce") == "", q.Get("state") == "":
		http.Error(w, "invalid_request", http.StatusBadRequest)
		return
	case q.Get("redirect_uri") != redirect:
		http.Error(w, "redirect_uri is not registered", http.StatusBadRequest)
		return
	case !known:
		http.Error(w, "login_required", http.StatusBadRequest)
		return
	}
	tok := p.IDToken(u, q.Get("nonce"))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = autoPost.Execute(w, map[string]any{"Title": "Launching", "Action": redirect, "Fields": map[string]string{"id_token": tok, "state": q.Get("state")}})
}

// Claims are the claims of a resource-link launch of u with nonce.
func (p *Platform) Claims(u User, nonce string) map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	c := map[string]any{
		"iss": p.Issuer, "aud": p.ClientID, "sub": u.Sub, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "nonce": nonce,
		"https://purl.imsglobal.org/spec/lti/claim/message_type":    "LtiResourceLinkRequest",
		"https://purl.imsglobal.org/spec/lti/claim/version":         "1.3.0",
		"https://purl.imsglobal.org/spec/lti/claim/deployment_id":   p.DeploymentID,
		"https://purl.imsglobal.org/spec/lti/claim/target_link_uri": p.Target,
		"https://purl.imsglobal.org/spec/lti/claim/resource_link":   map[string]any{"id": "resource-link-42", "title": "Make a video"},
		"https://purl.imsglobal.org/spec/lti/claim/roles":           u.Roles,
		"https://purl.imsglobal.org/spec/lti/claim/context":         map[string]any{"id": "course-7", "title": "Media studies"},
	}
	if u.Email != "" {
		c["email"] = u.Email
	}
	if u.GivenName != "" {
		c["given_name"], c["family_name"] = u.GivenName, u.FamilyName
	}
	target := "window"
	if p.framed {
		target = "iframe"
	}
	c["https://purl.imsglobal.org/spec/lti/claim/launch_presentation"] = map[string]any{"document_target": target, "return_url": p.public + "/course"}
	if p.edit != nil {
		p.edit(c)
	}
	return c
}

// IDToken signs a launch of u with nonce, as the authorization endpoint
// answers it.
func (p *Platform) IDToken(u User, nonce string) string {
	tok := p.Sign(p.Claims(u, nonce))
	p.mu.Lock()
	p.issued = append(p.issued, tok)
	p.mu.Unlock()
	return tok
}

// Sign signs claims with the platform's key (RS256, its kid).
func (p *Platform) Sign(claims map[string]any) string {
	k, kid := p.Key()
	return SignWith(jose.RS256, k, kid, claims)
}

// SignWith signs claims with any key and algorithm (a forgery's).
func SignWith(alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		panic(err)
	}
	out, err := jwt.Signed(s).Claims(maps.Clone(claims)).Serialize()
	if err != nil {
		panic(err)
	}
	return out
}
