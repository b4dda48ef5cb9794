// Package samplelms is a small LTI 1.3 platform (an LMS, as far as a tool
// sees one): a course page whose links start the third-party-initiated
// login in a new window or inside a frame, an OIDC authorization endpoint
// that answers with a signed id_token in an auto-submitting form, and its
// key set. The embedded demo serves one beside the bridge, so LTI can be
// tried without an LMS; the tests run it with fault knobs (a key set that
// is down, a rotated key, edited claims).
package samplelms

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// The role URIs of LTI Core's vocabulary the platform grants.
const (
	RoleLearner       = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
	RoleInstructor    = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
	RoleAdministrator = "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator"
)

// The routes, under the platform's base URL.
const (
	CoursePath = "/course"
	JWKSPath   = "/jwks"
	AuthPath   = "/auth"
)

// messageHint is the lti_message_hint of the course's one resource link;
// a launch from the framed course page adds framedSuffix, which the
// authorization endpoint reads back (the login echoes the hint).
const (
	messageHint  = "resource-link-42"
	framedSuffix = ":iframe"
)

// User is someone the platform knows, by login_hint.
type User struct {
	Sub, Email, GivenName, FamilyName string
	Roles                             []string
}

// LMS is the platform. Its exported fields are what a tool registers
// (Issuer, ClientID, DeploymentID) and where it reaches the tool.
type LMS struct {
	Issuer       string
	ClientID     string
	DeploymentID string
	ToolLogin    string // the tool's login initiation URL
	ToolRedirect string // the redirect URI registered for the tool
	// Target is the target_link_uri of the course's link (the tool's
	// launch URL unless set otherwise).
	Target string
	// Course is the course's title, shown on its page and in launches.
	Course string
	// KeepIssued keeps every id_token answered (Issued): tests replay
	// them; the demo keeps none, so a long-running demo does not grow.
	KeepIssued bool

	mu       sync.Mutex
	public   string // how browsers reach the platform
	key      *rsa.PrivateKey
	kid      string
	users    map[string]User
	keysDown bool
	framed   bool
	now      func() time.Time
	edit     func(claims map[string]any) // changes the next id_tokens' claims
	issued   []string                    // with KeepIssued: every id_token answered, in order
	jwksHits int
	dl       deepLinking
	roster   nrps
	reg      registrar
	storage  bool // framed launches offer the platform's storage (lti_storage_target)
}

// New is a platform that launches tool (its login at /lti/login, its
// redirect URI /lti/launch) and signs with key (nil: a new one).
func New(tool string, key *rsa.PrivateKey) *LMS {
	l := &LMS{ClientID: "ssobridge-client", DeploymentID: "deployment-1", Course: "Media studies", users: map[string]User{}, now: time.Now}
	l.SetTool(tool)
	if key == nil {
		l.RotateKey()
	} else {
		l.setKey(key)
	}
	return l
}

// Handler serves the platform's routes.
func (l *LMS) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, CoursePath, http.StatusSeeOther)
	})
	mux.HandleFunc("GET "+CoursePath, l.serveCoursePage)
	mux.HandleFunc("GET "+JWKSPath, l.serveJWKS)
	mux.HandleFunc("GET "+AuthPath, l.serveAuth)
	mux.HandleFunc("GET /course/{user}", l.serveCourse)
	mux.HandleFunc("GET /framed/{user}", l.serveFramedCourse)
	mux.HandleFunc("GET "+DeepLinkPath, l.serveDeepLinkStart)
	mux.HandleFunc("POST "+DeepLinkReturnPath, l.serveDeepLinkReturn)
	mux.HandleFunc("POST "+TokenPath, l.serveToken)
	mux.HandleFunc("GET "+MembershipsPath, l.serveMemberships)
	mux.HandleFunc("GET "+ConfigurationPath, l.serveConfiguration)
	mux.HandleFunc("POST "+RegistrationPath, l.serveRegistration)
	mux.HandleFunc("GET "+RegisterToolPath, l.serveRegisterTool)
	return mux
}

// SetURL is how browsers reach the platform (its course page, its
// authorization endpoint).
func (l *LMS) SetURL(public string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.public = strings.TrimRight(public, "/")
}

// URL is how browsers reach the platform.
func (l *LMS) URL() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.public
}

// AuthURL is the authorization endpoint a tool registers.
func (l *LMS) AuthURL() string { return l.URL() + AuthPath }

// SetTool points the platform at the tool's base URL.
func (l *LMS) SetTool(tool string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	tool = strings.TrimRight(tool, "/")
	l.ToolLogin, l.ToolRedirect, l.Target = tool+"/lti/login", tool+"/lti/launch", tool+"/lti/launch"
}

// AddUser makes a user known by login_hint; the course page lists it.
func (l *LMS) AddUser(hint string, u User) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.users[hint] = u
}

// RotateKey signs from now on with a new key, published alone.
func (l *LMS) RotateKey() {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	l.setKey(k)
}

func (l *LMS) setKey(k *rsa.PrivateKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.key, l.kid = k, keyID(&k.PublicKey)
}

// keyID names a public key by its RFC 7638 thumbprint: the same key gets
// the same kid across restarts, a new key another.
func keyID(pub *rsa.PublicKey) string {
	sum, _ := (&jose.JSONWebKey{Key: pub}).Thumbprint(crypto.SHA256) // fails only for a key type it does not know
	return fmt.Sprintf("platform-%x", sum[:8])
}

// Key is the signing key and its kid.
func (l *LMS) Key() (*rsa.PrivateKey, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.key, l.kid
}

// SetKeysDown makes the key set answer 503 (an outage) or serve again.
func (l *LMS) SetKeysDown(down bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keysDown = down
}

// SetFramed presents every launch in an iframe (launch_presentation), as
// the framed course page's launches are.
func (l *LMS) SetFramed(framed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.framed = framed
}

// SetClock sets the platform's clock (iat, exp).
func (l *LMS) SetClock(now func() time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.now = now
}

// Edit changes the claims of the id_tokens answered from now on (nil: none).
func (l *LMS) Edit(f func(claims map[string]any)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.edit = f
}

// Issued is every id_token answered so far (with KeepIssued).
func (l *LMS) Issued() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.issued...)
}

// JWKSHits is how many times the key set was asked for.
func (l *LMS) JWKSHits() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.jwksHits
}

func (l *LMS) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	l.mu.Lock()
	l.jwksHits++
	down := l.keysDown
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &l.key.PublicKey, KeyID: l.kid, Algorithm: "RS256", Use: "sig"}}}
	l.mu.Unlock()
	if down {
		http.Error(w, "key service unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(set)
}

// LoginForm is the form the course page posts to the tool's login URL.
func (l *LMS) LoginForm(hint string) url.Values { return l.loginForm(hint, false) }

func (l *LMS) loginForm(hint string, framed bool) url.Values {
	return l.linkLogin(hint, messageHint, framed)
}

// linkLogin is the login form of one of the course's links (msg: its
// lti_message_hint, which the authorization endpoint reads back).
func (l *LMS) linkLogin(hint, msg string, framed bool) url.Values {
	l.mu.Lock()
	defer l.mu.Unlock()
	target := l.Target
	if i, ok := placedIndex(msg); ok && i < len(l.dl.placed) {
		target = l.dl.placed[i].URL
	}
	if framed {
		msg += framedSuffix
	}
	form := url.Values{"iss": {l.Issuer}, "login_hint": {hint}, "target_link_uri": {target}, "lti_message_hint": {msg},
		"client_id": {l.ClientID}, "lti_deployment_id": {l.DeploymentID}}
	if framed && l.storage {
		form.Set("lti_storage_target", "_parent")
	}
	return form
}

// SetStorage makes framed launches offer the platform's storage
// (lti_storage_target=_parent): the framed course page keeps what the
// tool's frame asks it to (lti.put_data, lti.get_data), for the tool's
// origin only.
func (l *LMS) SetStorage(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.storage = on
}

var autoPost = template.Must(template.New("post").Parse(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body onload="document.forms[0].submit()"><form method="post" action="{{.Action}}">
{{range $k, $v := .Fields}}<input type="hidden" name="{{$k}}" value="{{$v}}">
{{end}}<noscript><button type="submit">Continue</button></noscript></form></body></html>`))

// serveCourse is the course's link for a user (/course/{hint}): it posts
// the third-party-initiated login to the tool, as an LMS page does.
// ?in=frame marks a launch from the framed course page.
func (l *LMS) serveCourse(w http.ResponseWriter, r *http.Request) {
	msg := messageHint
	if item := r.URL.Query().Get("item"); item != "" {
		msg = placedHint + item // a link the teacher placed
	}
	l.postLogin(w, l.linkLogin(r.PathValue("user"), msg, r.URL.Query().Get("in") == "frame"))
}

// postLogin answers a page that posts a login to the tool by itself.
func (l *LMS) postLogin(w http.ResponseWriter, form url.Values) {
	fields := map[string]string{}
	for k := range form {
		fields[k] = form.Get(k)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = autoPost.Execute(w, map[string]any{"Title": "Opening the tool", "Action": l.ToolLogin, "Fields": fields})
}

// serveFramedCourse is a course page that shows the tool inside an iframe
// (/framed/{hint}), as many LMSs do.
func (l *LMS) serveFramedCourse(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	l.mu.Lock()
	tool := ""
	if u, err := url.Parse(l.ToolLogin); err == nil {
		tool = u.Scheme + "://" + u.Host
	}
	l.mu.Unlock()
	_ = framedCourse.Execute(w, map[string]string{"Course": l.courseTitle(), "Src": "/course/" + url.PathEscape(r.PathValue("user")) + "?in=frame", "Tool": tool})
}

var framedCourse = template.Must(template.New("framed").Parse(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{{.Course}}: the tool, framed</title>
<style>body{font-family:system-ui,sans-serif;margin:1rem}#tool{width:100%;max-width:900px;height:600px;border:1px solid #767676}</style></head>
<body><h1>{{.Course}}</h1><p><a href="/course">Back to the course page</a></p>
<iframe id="tool" title="The video editor, inside the course" src="{{.Src}}"></iframe>
<p id="storage-log"></p>
<script>
const kept = new Map(), tool = {{.Tool}};
window.addEventListener("message", (e) => {
  const m = e.data || {};
  if (e.origin !== tool || !m.subject) return;
  const answer = (a) => e.source.postMessage(Object.assign({ message_id: m.message_id, key: m.key }, a), e.origin);
  if (m.subject === "lti.put_data") { kept.set(m.key, m.value); answer({ subject: "lti.put_data.response", value: m.value }); document.getElementById("storage-log").textContent += "put " + m.key + "; "; }
  if (m.subject === "lti.get_data") { answer({ subject: "lti.get_data.response", value: kept.get(m.key) }); document.getElementById("storage-log").textContent += "get " + m.key + "; "; }
});
</script></body></html>`))

func (l *LMS) courseTitle() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.Course
}

// serveCoursePage lists the platform's users, each with a launch in a new
// window and one inside the course page's frame.
func (l *LMS) serveCoursePage(w http.ResponseWriter, _ *http.Request) {
	type row struct {
		Hint, Name, Email, Role string
	}
	l.mu.Lock()
	var rows []row
	for hint, u := range l.users {
		role := "Learner"
		for _, r := range u.Roles {
			if r == RoleInstructor {
				role = "Instructor"
			}
		}
		rows = append(rows, row{Hint: hint, Name: strings.TrimSpace(u.GivenName + " " + u.FamilyName), Email: u.Email, Role: role})
	}
	course, issuer := l.Course, l.Issuer
	var placed []map[string]any
	for i, p := range l.dl.placed {
		placed = append(placed, map[string]any{"I": i, "Title": p.Title, "URL": p.URL})
	}
	l.mu.Unlock()
	sort.Slice(rows, func(i, j int) bool { return rows[i].Hint < rows[j].Hint })
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = coursePage.Execute(w, map[string]any{"Course": course, "Issuer": issuer, "Rows": rows, "Placed": placed})
}

var coursePage = template.Must(template.New("course").Parse(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{{.Course}}: sample LMS</title>
<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
table{border-collapse:collapse;width:100%;display:block;overflow-x:auto}th,td{text-align:left;padding:.4rem;border-bottom:1px solid #767676}
a{color:#0b57d0}a:focus{outline:3px solid #0b57d0;outline-offset:2px}</style></head>
<body><main><h1>{{.Course}}</h1>
<p>This is a sample LMS, built into the demo. It launches the bridge with LTI 1.3, as Moodle or Canvas would.
It signs in whoever you choose, without a password: it is for trying things out only.</p>
<p>Platform issuer: <code>{{.Issuer}}</code></p>
<h2>Activity: make a video</h2>
<table><thead><tr><th scope="col">Person</th><th scope="col">Role</th><th scope="col">Open the video editor</th></tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Name}}<br><small>{{.Email}}</small></td><td>{{.Role}}</td>
<td><a id="window-{{.Hint}}" href="/course/{{.Hint}}" target="_blank" rel="opener">as {{.Name}}, in a new window</a><br>
<a id="framed-{{.Hint}}" href="/framed/{{.Hint}}">as {{.Name}}, inside the course page</a>
{{if eq .Role "Instructor"}}<br><a id="deep-link-{{.Hint}}" href="/deep-link/{{.Hint}}">as {{.Name}}: place the video editor in the course</a>{{end}}</td></tr>
{{end}}</tbody></table>
{{if .Placed}}<h2>Placed by the teacher</h2><ul>{{range $p := .Placed}}<li id="placed-{{$p.I}}">{{$p.Title}} ({{$p.URL}}):
{{range $.Rows}}<a id="placed-{{$p.I}}-{{.Hint}}" href="/course/{{.Hint}}?item={{$p.I}}" target="_blank" rel="opener">as {{.Name}}</a> {{end}}</li>{{end}}</ul>{{end}}
</main></body></html>`))

// serveAuth is the authorization endpoint: the tool's authentication
// request checked as a platform does, answered by an auto-submitting form
// that posts the id_token and state to the registered redirect URI.
func (l *LMS) serveAuth(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	l.mu.Lock()
	u, known := l.users[q.Get("login_hint")]
	redirect := l.ToolRedirect
	l.mu.Unlock()
	switch {
	case q.Get("scope") != "openid", q.Get("response_type") != "id_token", q.Get("response_mode") != "form_post",
		q.Get("prompt") != "none", q.Get("client_id") != l.ClientID, q.Get("nonce") == "", q.Get("state") == "":
		http.Error(w, "invalid_request", http.StatusBadRequest)
		return
	case q.Get("redirect_uri") != redirect:
		http.Error(w, "redirect_uri is not registered", http.StatusBadRequest)
		return
	case !known:
		http.Error(w, "login_required", http.StatusBadRequest)
		return
	}
	hint := q.Get("lti_message_hint")
	framed := strings.HasSuffix(hint, framedSuffix)
	hint = strings.TrimSuffix(hint, framedSuffix)
	claims := l.claims(u, q.Get("nonce"), framed)
	l.nrpsClaims(claims)
	switch i, placed := placedIndex(hint); {
	case hint == deepLinkHint:
		l.deepLinkClaims(claims)
	case placed:
		l.placedClaims(claims, i)
	}
	tok := l.sign(claims, true)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = autoPost.Execute(w, map[string]any{"Title": "Launching", "Action": redirect, "Fields": map[string]string{"id_token": tok, "state": q.Get("state")}})
}

// Claims are the claims of a resource-link launch of u with nonce.
func (l *LMS) Claims(u User, nonce string) map[string]any { return l.claims(u, nonce, false) }

func (l *LMS) claims(u User, nonce string, framed bool) map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	c := map[string]any{
		"iss": l.Issuer, "aud": l.ClientID, "sub": u.Sub, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "nonce": nonce,
		"https://purl.imsglobal.org/spec/lti/claim/message_type":    "LtiResourceLinkRequest",
		"https://purl.imsglobal.org/spec/lti/claim/version":         "1.3.0",
		"https://purl.imsglobal.org/spec/lti/claim/deployment_id":   l.DeploymentID,
		"https://purl.imsglobal.org/spec/lti/claim/target_link_uri": l.Target,
		"https://purl.imsglobal.org/spec/lti/claim/resource_link":   map[string]any{"id": messageHint, "title": "Make a video"},
		"https://purl.imsglobal.org/spec/lti/claim/roles":           u.Roles,
		"https://purl.imsglobal.org/spec/lti/claim/context":         map[string]any{"id": "course-7", "title": l.Course},
	}
	if u.Email != "" {
		c["email"] = u.Email
	}
	if u.GivenName != "" {
		c["given_name"], c["family_name"] = u.GivenName, u.FamilyName
	}
	target := "window"
	if l.framed || framed {
		target = "iframe"
	}
	c["https://purl.imsglobal.org/spec/lti/claim/launch_presentation"] = map[string]any{"document_target": target, "return_url": l.public + CoursePath}
	if l.edit != nil {
		l.edit(c)
	}
	return c
}

// IDToken signs a launch of u with nonce, as the authorization endpoint
// answers it.
func (l *LMS) IDToken(u User, nonce string) string { return l.sign(l.Claims(u, nonce), true) }

// Sign signs claims with the platform's key (RS256, its kid).
func (l *LMS) Sign(claims map[string]any) string { return l.sign(claims, false) }

func (l *LMS) sign(claims map[string]any, keep bool) string {
	k, kid := l.Key()
	tok := SignWith(jose.RS256, k, kid, claims)
	l.mu.Lock()
	if keep && l.KeepIssued {
		l.issued = append(l.issued, tok)
	}
	l.mu.Unlock()
	return tok
}

// SignWith signs claims with any key and algorithm (a forgery's, in tests).
func SignWith(alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		panic(err) // an unusable key is a programming error
	}
	out, err := jwt.Signed(s).Claims(maps.Clone(claims)).Serialize()
	if err != nil {
		panic(err)
	}
	return out
}

// Running is a platform served on a listener.
type Running struct {
	*LMS
	srv *http.Server
}

// Start serves l on addr (127.0.0.1:0: a free port) and sets its URL.
func Start(l *LMS, addr string) (*Running, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sample LMS: %w", err)
	}
	l.SetURL("http://" + ln.Addr().String())
	srv := &http.Server{Handler: l.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &Running{LMS: l, srv: srv}, nil
}

// Close stops serving.
func (r *Running) Close() error { return r.srv.Close() }
