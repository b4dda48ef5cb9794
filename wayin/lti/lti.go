// Package lti is the bridge as an LTI 1.3 Tool (IMS LTI Core 1.3 and the
// IMS Security Framework) for resource-link launches: the
// third-party-initiated login (Login) and the id_token the platform's page
// posts back (Launch), checked on go-jose against the platform's key set.
// It knows nothing of routes, cookies or accounts: Login returns where to
// send the browser and the Flow to keep in it; Launch checks the posted
// form against the flows the browser holds and returns who launched.
package lti

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/ssobridge/ssobridge/internal/loopback"
	"github.com/ssobridge/ssobridge/internal/outside"
	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// The paths of the Tool, under the bridge's public URL.
const (
	LoginPath  = "/lti/login"
	LaunchPath = "/lti/launch"
	JWKSPath   = "/lti/jwks"
	ConfigPath = "/lti/config"
)

// FlowTTL is how long a login may take from /lti/login to the posted
// id_token (a platform answers at once: prompt=none).
const FlowTTL = 5 * time.Minute

// NonceKind is the single-use kind under which launch nonces are kept in
// the store (Store.UseOnce), so a replay is refused on every instance.
const NonceKind = "lti-nonce"

// MaxTokenBytes bounds the posted id_token. A launch with its custom
// claims and a long course title is a few KB.
const MaxTokenBytes = 64 << 10

// The LTI claims the Tool reads.
const (
	claimPrefix         = "https://purl.imsglobal.org/spec/lti/claim/"
	claimMessageType    = claimPrefix + "message_type"
	claimVersion        = claimPrefix + "version"
	claimDeploymentID   = claimPrefix + "deployment_id"
	claimTargetLinkURI  = claimPrefix + "target_link_uri"
	claimResourceLink   = claimPrefix + "resource_link"
	claimRoles          = claimPrefix + "roles"
	claimPresentation   = claimPrefix + "launch_presentation"
	messageResourceLink = "LtiResourceLinkRequest"
	// MessageDeepLinking is a teacher placing the tool in a course
	// (Deep Linking 2.0); its answer is a MessageDeepLinkingResponse.
	MessageDeepLinking         = "LtiDeepLinkingRequest"
	MessageDeepLinkingResponse = "LtiDeepLinkingResponse"
	claimDeepLinkingSettings   = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
	version13                  = "1.3.0"
)

// Errors of a login or launch, of the refusal set; each has its wording.
var (
	// ErrUnknownPlatform: the issuer, client id or deployment is not one
	// the configuration registers (400: what the LMS sent).
	ErrUnknownPlatform = wayin.NewRefusal(views.RefusedInvalid, "lti: the platform, client or deployment is not registered")
	// ErrBadRequest: a login or launch form is incomplete or malformed, or
	// its target is not on this bridge (400).
	ErrBadRequest = wayin.NewRefusal(views.RefusedInvalid, "lti: the request is not a valid LTI 1.3 login or launch")
	// ErrBadState: the launch does not belong to a login this browser
	// started (another browser's state, the flow cookie gone, the form
	// posted twice) or its nonce is not the one its login asked for (400).
	ErrBadState = wayin.NewRefusal(views.RefusedBadState, "lti: the launch does not match a login started in this browser")
	// ErrReplayed: the nonce was used before, here or on another instance
	// (400).
	ErrReplayed = wayin.NewRefusal(views.RefusedReplayed, "lti: the launch was used before")
	// ErrFlowExpired: the login is older than FlowTTL (400).
	ErrFlowExpired = wayin.NewRefusal(views.RefusedExpired, "lti: the launch took too long")
	// ErrInvalid: the id_token does not verify (another key, an unknown
	// kid, alg none or HS256, another audience or issuer, malformed) or
	// is not a resource-link launch of LTI 1.3 (400).
	ErrInvalid = wayin.NewRefusal(views.RefusedInvalid, "lti: the id_token is refused")
	// ErrClock: the id_token has expired or was issued in the future, past
	// the skew allowance (400).
	ErrClock = wayin.NewRefusal(views.RefusedClock, "lti: the id_token is outside its validity (expired, or the platform's clock is off)")
	// ErrNoEmail: the launch carries no email claim: the LMS does not
	// share the user's email with the tool (400).
	ErrNoEmail = wayin.NewRefusal(views.RefusedNoAddress, "lti: the launch carries no email address")
	// ErrKeysUnavailable: the platform's key set cannot be read (503).
	ErrKeysUnavailable = wayin.NewRefusal(views.RefusedUnavailable, "lti: the platform's key set cannot be read")
	// ErrKeyChanged: the id_token names a key the platform's key set did
	// not hold when it was read moments ago: the LMS may have just changed
	// its key, and the set is read again within seconds (503, try again).
	ErrKeyChanged = wayin.NewRefusal(views.RefusedUnavailable, "lti: the LMS signed with a key its key set did not hold moments ago (it may have changed its key)")
)

// Platform is one LMS registration: the values the LMS shows once the tool
// is added.
type Platform struct {
	Name           string   // shown on pages
	Issuer         string   // iss
	ClientID       string   // the LMS's client id of this tool
	DeploymentIDs  []string // at least one
	AuthURL        string   // the platform's OIDC authorization endpoint
	JWKSURL        string   // the platform's key set
	AdminRoles     []string // role URIs or short names whose holders become partner admins
	CreateAccounts bool     // create the account on a first launch
	// FrameOrigins are the origins whose pages may frame a launch's
	// new-tab page; empty: the origin of AuthURL and that of the launch's
	// signed return_url (an LMS's course pages may be on another host
	// than its authorization endpoint: Canvas, Blackboard, Schoology).
	FrameOrigins []string
	// Key is its configuration key (lti.platforms[0]), named where a
	// refusal asks for a setting; "" in tests.
	Key string
	// DeepLinkItems are the places of the editor an instructor may place
	// in a course besides the editor itself.
	DeepLinkItems []DeepLinkItem
	// TokenURL is the platform's OAuth 2.0 token endpoint (its LTI
	// Advantage services: the course roster); "": none are read.
	TokenURL string
	// Registered: it registered itself (Dynamic Registration); its
	// admission rules are EmailDomains and CreateAccounts.
	Registered   bool
	EmailDomains []string
	// RosterMax is how many members one read of a course's roster admits
	// (0: the roster's default, lti.roster_max).
	RosterMax int
}

// Config is the Tool's.
type Config struct {
	Platforms []Platform
	// HTTPClient reads the key sets; nil: its own with a 10 s timeout.
	HTTPClient *http.Client
	// UseOnce spends a nonce (store.Store.UseOnce).
	UseOnce func(ctx context.Context, kind, id string, until time.Time) error
	// Skew is the clock allowance on exp and iat (30 s unless set).
	Skew time.Duration
	// RefetchEvery bounds how often an unknown kid fetches a platform's
	// key set again (10 s unless set); RetryEvery how often a key set
	// never read is tried again on demand (5 s unless set).
	RefetchEvery, RetryEvery time.Duration
	Now                      func() time.Time
	// Stored reads the LMSs registered by Dynamic Registration, kept for
	// every instance (nil: none); they are read again when StoredEvery
	// has passed (5 s unless set), and at once for an issuer not known.
	Stored      func(ctx context.Context) ([]Platform, error)
	StoredEvery time.Duration
}

// Tool is the LTI 1.3 Tool. It is safe for concurrent use.
type Tool struct {
	cfg Config

	mu       sync.Mutex
	keys     map[string]*keySet // by key set URL
	stored   []Platform         // the registered LMSs, as last read
	storedAt time.Time
}

// New builds the Tool. Its key sets are read on first use (or Refresh).
func New(cfg Config) *Tool {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Skew <= 0 {
		cfg.Skew = 30 * time.Second
	}
	if cfg.RefetchEvery <= 0 {
		cfg.RefetchEvery = 10 * time.Second
	}
	if cfg.RetryEvery <= 0 {
		cfg.RetryEvery = 5 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StoredEvery <= 0 {
		cfg.StoredEvery = 5 * time.Second
	}
	return &Tool{cfg: cfg, keys: map[string]*keySet{}}
}

// Platforms are the registered platforms: the configuration's, then
// those registered by Dynamic Registration (as last read).
func (t *Tool) Platforms() []Platform { return t.known() }

// known is every platform as last read, without reading the store.
func (t *Tool) known() []Platform {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append(slices.Clone(t.cfg.Platforms), t.stored...)
}

// all is every platform, the stored ones read again when they are older
// than StoredEvery (or when fresh is set: an issuer not known may have
// registered on another instance). A store that does not answer keeps
// the list read before.
func (t *Tool) all(ctx context.Context, fresh ...bool) []Platform {
	if t.cfg.Stored == nil {
		return t.cfg.Platforms
	}
	t.mu.Lock()
	stale := t.cfg.Now().Sub(t.storedAt) >= t.cfg.StoredEvery || (len(fresh) > 0 && fresh[0])
	t.mu.Unlock()
	if stale {
		if list, err := t.cfg.Stored(ctx); err == nil {
			t.mu.Lock()
			t.stored, t.storedAt = list, t.cfg.Now()
			t.mu.Unlock()
		}
	}
	return t.known()
}

// keySet is the platform's key set reader (one per key set URL).
func (t *Tool) keySet(p Platform) *keySet {
	t.mu.Lock()
	defer t.mu.Unlock()
	ks, ok := t.keys[p.JWKSURL]
	if !ok {
		ks = newKeySet(p.JWKSURL, t.cfg.HTTPClient, t.cfg.Now, t.cfg.RefetchEvery, t.cfg.RetryEvery)
		t.keys[p.JWKSURL] = ks
	}
	return ks
}

// CourseURL is where a refused launch's page sends the person back: the
// launch_presentation.return_url of the posted id_token when it is on an
// origin of the platform its iss names (its frame_origins, else its
// auth_url's and issuer's); "" otherwise. The token may be unverified
// (the page of a refused launch): the origin rule is what keeps the link
// from pointing anywhere an attacker likes.
func (t *Tool) CourseURL(form url.Values) string {
	raw := form.Get("id_token")
	if raw == "" || len(raw) > MaxTokenBytes {
		return ""
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return ""
	}
	var std jwt.Claims
	var c launchClaims
	if tok.UnsafeClaimsWithoutVerification(&std, &c) != nil {
		return ""
	}
	back := c.Presentation.ReturnURL
	o := Origin(back)
	if o == "" {
		return ""
	}
	for _, p := range t.known() {
		if p.Issuer != std.Issuer {
			continue
		}
		if slices.Contains(p.frameOrigins(), o) {
			return back
		}
	}
	return ""
}

// Flow is a login in progress, kept in the browser that started it.
type Flow struct {
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Issuer   string    `json:"i"`
	ClientID string    `json:"c"`
	Expires  time.Time `json:"e"`
}

// Login answers a third-party-initiated login (iss, login_hint,
// target_link_uri, lti_message_hint, client_id, lti_deployment_id): the
// URL of the platform's authorization endpoint to send the browser to,
// and the flow to keep. base is the bridge's public URL.
func (t *Tool) Login(ctx context.Context, base string, q url.Values) (string, Flow, error) {
	iss, hint, target := q.Get("iss"), q.Get("login_hint"), q.Get("target_link_uri")
	if iss == "" || hint == "" || target == "" {
		return "", Flow{}, fmt.Errorf("%w: a login needs iss, login_hint and target_link_uri", ErrBadRequest)
	}
	p, err := t.platform(ctx, iss, q.Get("client_id"))
	if err != nil {
		return "", Flow{}, err
	}
	if d := q.Get("lti_deployment_id"); d != "" && !p.deploys(d) {
		return "", Flow{}, fmt.Errorf("%w: deployment %s of %s (the deployment ids in %s)", ErrUnknownPlatform, outside.Quote(d), p.Name, p.settingKey("deployment_ids"))
	}
	if !OnBridge(base, target) {
		return "", Flow{}, fmt.Errorf("%w: target_link_uri %s is not on this bridge (%s)", ErrBadRequest, outside.Quote(target), base)
	}
	f := Flow{State: randid.Token(24), Nonce: randid.Token(24), Issuer: p.Issuer, ClientID: p.ClientID, Expires: t.cfg.Now().Add(FlowTTL)}
	u, err := url.Parse(p.AuthURL)
	if err != nil {
		return "", Flow{}, fmt.Errorf("lti: %s's auth_url: %w", p.Name, err)
	}
	v := u.Query()
	v.Set("scope", "openid")
	v.Set("response_type", "id_token")
	v.Set("response_mode", "form_post")
	v.Set("prompt", "none")
	v.Set("client_id", p.ClientID)
	v.Set("redirect_uri", strings.TrimRight(base, "/")+LaunchPath)
	v.Set("login_hint", hint)
	if mh := q.Get("lti_message_hint"); mh != "" {
		v.Set("lti_message_hint", mh)
	}
	v.Set("state", f.State)
	v.Set("nonce", f.Nonce)
	u.RawQuery = v.Encode()
	return u.String(), f, nil
}

// platform finds the registration of an issuer (and client id, when the
// login names one; an issuer registered twice needs it), among the
// configured and the stored ones (read again at once when none is found:
// it may have registered on another instance moments ago).
func (t *Tool) platform(ctx context.Context, iss, clientID string) (Platform, error) {
	p, err := findPlatform(t.all(ctx), iss, clientID)
	if errors.Is(err, ErrUnknownPlatform) && t.cfg.Stored != nil {
		p, err = findPlatform(t.all(ctx, true), iss, clientID)
	}
	return p, err
}

func findPlatform(list []Platform, iss, clientID string) (Platform, error) {
	found := -1
	for i, p := range list {
		if p.Issuer != iss || (clientID != "" && p.ClientID != clientID) {
			continue
		}
		if found >= 0 {
			return Platform{}, fmt.Errorf("%w: issuer %s is registered more than once; the login must name its client_id", ErrUnknownPlatform, outside.Quote(iss))
		}
		found = i
	}
	if found < 0 {
		if clientID != "" {
			return Platform{}, fmt.Errorf("%w: issuer %s with client_id %s", ErrUnknownPlatform, outside.Quote(iss), outside.Quote(clientID))
		}
		return Platform{}, fmt.Errorf("%w: issuer %s", ErrUnknownPlatform, outside.Quote(iss))
	}
	return list[found], nil
}

// OnBridge reports whether target is a URL on the bridge at base (same
// scheme and host).
func OnBridge(base, target string) bool {
	b, err1 := url.Parse(base)
	u, err2 := url.Parse(target)
	return err1 == nil && err2 == nil && b.Scheme != "" && u.Scheme == b.Scheme && u.Host == b.Host && u.User == nil
}

// Identity is who launched, from a verified id_token.
type Identity struct {
	Platform       Platform
	Subject        string // sub: the user at the platform, stable
	Email          string
	GivenName      string
	FamilyName     string
	Name           string
	Roles          []string
	Admin          bool   // holds one of the platform's admin_roles
	DeploymentID   string // registered
	ResourceLinkID string
	TargetLinkURI  string // on this bridge
	// DeepLinking is set on a deep-linking request (a teacher placing the
	// tool in the course): where the answer goes and what it may hold.
	DeepLinking *DeepLinking
	// Course is the launch's course (its context) and where its roster
	// is read (NRPS), when the platform offers it.
	ContextID, ContextTitle, MembershipsURL string
	DocumentTarget                          string // launch_presentation.document_target: iframe, frame, window or empty
	ReturnURL                               string // launch_presentation.return_url, if any
}

// Framed reports whether the platform shows the tool inside its own page.
func (id Identity) Framed() bool {
	return id.DocumentTarget == "iframe" || id.DocumentTarget == "frame"
}

// FrameAncestors are the origins that may frame this launch's page: the
// platform's frame_origins, else the origin of its auth_url and, when it
// is https (or http on loopback), that of the launch's return_url, which
// the platform signed.
func (id Identity) FrameAncestors() []string {
	if len(id.Platform.FrameOrigins) > 0 {
		return id.Platform.FrameOrigins
	}
	var out []string
	for _, raw := range []string{id.Platform.AuthURL, id.ReturnURL} {
		if o := Origin(raw); o != "" && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// Origin is the scheme, host and port of an https URL (http only on
// loopback), as a CSP source; "" for anything else. Only an exact origin
// is one: a host of letters, digits, dots and hyphens (or an IP address),
// a numeric port; never a wildcard (https://*.evil.example would let
// every subdomain frame the page) or anything that could break the
// header.
func Origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !loopback.SecureURL(u) || u.User != nil || !exactHost(u.Hostname()) || (u.Port() != "" && strings.Trim(u.Port(), "0123456789") != "") {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// deploys reports whether the deployment is one of the platform's: one of
// its DeploymentIDs; any, for an LMS that registered itself without
// naming one (its launches are signed by its own key all the same).
func (p Platform) deploys(id string) bool {
	return slices.Contains(p.DeploymentIDs, id) || (p.Registered && len(p.DeploymentIDs) == 0)
}

// settingKey is the configuration key of the platform's setting name.
func (p Platform) settingKey(name string) string {
	if p.Key == "" {
		return "lti.platforms[i]." + name
	}
	return p.Key + "." + name
}

// exactHost reports whether h names one host: an IP address, or labels
// of letters, digits and hyphens.
func exactHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || strings.Trim(strings.ToLower(label), "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return false
		}
	}
	return true
}

// platformError is the LMS's answer to the login with an OIDC error
// (login_required: the user's LMS session ended). The bridge says what it
// knows in its own words; the LMS's code and description are shown only
// quoted, bounded and labelled as the LMS's, never as the bridge's text.
func platformError(code, description string) error {
	err := fmt.Errorf("%w: the LMS answered with the error code %s", ErrBadRequest, outside.Quote(code))
	if description != "" {
		err = fmt.Errorf("%w; the LMS's own description: %s", err, outside.Quote(description))
	}
	return err
}

// DeepLinking is a deep-linking request's deep_linking_settings.
type DeepLinking struct {
	ReturnURL      string   `json:"deep_link_return_url"`
	AcceptTypes    []string `json:"accept_types"`
	AcceptMultiple bool     `json:"accept_multiple"`
	Title          string   `json:"title"`
	Text           string   `json:"text"`
	// Data is the platform's own value, echoed unchanged in the answer.
	Data string `json:"data,omitempty"`
}

// Accepts reports whether the platform takes content items of type typ.
func (d DeepLinking) Accepts(typ string) bool { return slices.Contains(d.AcceptTypes, typ) }

// launchClaims are the id_token's claims beyond the registered ones.
type launchClaims struct {
	Nonce         string   `json:"nonce"`
	AZP           string   `json:"azp"`
	Email         string   `json:"email"`
	GivenName     string   `json:"given_name"`
	FamilyName    string   `json:"family_name"`
	Name          string   `json:"name"`
	MessageType   string   `json:"https://purl.imsglobal.org/spec/lti/claim/message_type"`
	Version       string   `json:"https://purl.imsglobal.org/spec/lti/claim/version"`
	DeploymentID  string   `json:"https://purl.imsglobal.org/spec/lti/claim/deployment_id"`
	TargetLinkURI string   `json:"https://purl.imsglobal.org/spec/lti/claim/target_link_uri"`
	Roles         []string `json:"https://purl.imsglobal.org/spec/lti/claim/roles"`
	ResourceLink  struct {
		ID string `json:"id"`
	} `json:"https://purl.imsglobal.org/spec/lti/claim/resource_link"`
	Presentation struct {
		DocumentTarget string `json:"document_target"`
		ReturnURL      string `json:"return_url"`
	} `json:"https://purl.imsglobal.org/spec/lti/claim/launch_presentation"`
	DeepLinking *DeepLinking `json:"https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"`
	NRPS        struct {
		MembershipsURL string `json:"context_memberships_url"`
	} `json:"https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"`
	Context struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	} `json:"https://purl.imsglobal.org/spec/lti/claim/context"`
}

// Launch checks a posted launch (id_token and state) against the flows
// this browser holds, and returns who launched and the flow it used (the
// caller drops it: a flow is used once, whatever the outcome). base is the
// bridge's public URL.
func (t *Tool) Launch(ctx context.Context, base string, flows []Flow, form url.Values) (Identity, error) {
	if e := form.Get("error"); e != "" {
		// The platform answered the login with an OIDC error (login_required,
		// say: the user's LMS session ended).
		return Identity{}, platformError(e, form.Get("error_description"))
	}
	raw, state := form.Get("id_token"), form.Get("state")
	if raw == "" || state == "" {
		return Identity{}, fmt.Errorf("%w: a launch needs id_token and state", ErrBadRequest)
	}
	if len(raw) > MaxTokenBytes {
		return Identity{}, fmt.Errorf("%w: the id_token is over %d bytes", ErrBadRequest, MaxTokenBytes)
	}
	i := slices.IndexFunc(flows, func(f Flow) bool { return f.State == state })
	if i < 0 {
		return Identity{}, fmt.Errorf("%w: no login with this state was started in this browser (or its cookie expired)", ErrBadState)
	}
	flow := flows[i]
	now := t.cfg.Now()
	if !now.Before(flow.Expires) {
		return Identity{}, ErrFlowExpired
	}
	p, err := t.platform(ctx, flow.Issuer, flow.ClientID)
	if err != nil {
		return Identity{}, err // the registration went away during the login
	}
	// RS256 only: alg none, HS256 (a key set's public key used as an HMAC
	// secret) and every other algorithm are refused before any key is read.
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return Identity{Platform: p}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	key, err := t.keySet(p).key(ctx, tok.Headers[0].KeyID)
	if err != nil {
		return Identity{Platform: p}, err
	}
	var std jwt.Claims
	var c launchClaims
	if err := tok.Claims(key, &std, &c); err != nil {
		return Identity{Platform: p}, fmt.Errorf("%w: the signature does not verify against %s's key %s: %v", ErrInvalid, p.Name, outside.Quote(tok.Headers[0].KeyID), err)
	}
	if err := checkClaims(std, c, p, flow, now, t.cfg.Skew); err != nil {
		return Identity{Platform: p}, err
	}
	if !p.deploys(c.DeploymentID) {
		return Identity{Platform: p}, fmt.Errorf("%w: deployment %s of %s (the deployment ids in %s)", ErrUnknownPlatform, outside.Quote(c.DeploymentID), p.Name, p.settingKey("deployment_ids"))
	}
	if !OnBridge(base, c.TargetLinkURI) {
		return Identity{Platform: p}, fmt.Errorf("%w: target_link_uri %s is not on this bridge", ErrInvalid, outside.Quote(c.TargetLinkURI))
	}
	// Spent last: a refused token leaves the nonce unspent, but its flow is
	// gone from the browser, so it cannot be posted again through it.
	sum := sha256.Sum256([]byte(p.Issuer + "\x00" + c.Nonce))
	switch err := t.cfg.UseOnce(ctx, NonceKind, hex.EncodeToString(sum[:]), std.Expiry.Time().Add(t.cfg.Skew)); {
	case errors.Is(err, store.ErrUsed):
		return Identity{Platform: p}, ErrReplayed
	case err != nil:
		return Identity{Platform: p}, err
	}
	if c.Email == "" && c.MessageType != MessageDeepLinking { // placing the tool opens no account
		return Identity{Platform: p, Subject: std.Subject}, ErrNoEmail
	}
	id := Identity{
		Platform: p, Subject: std.Subject, Email: c.Email, GivenName: c.GivenName, FamilyName: c.FamilyName, Name: c.Name,
		Roles: c.Roles, Admin: holdsAny(c.Roles, p.AdminRoles), DeploymentID: c.DeploymentID, ResourceLinkID: c.ResourceLink.ID,
		TargetLinkURI: c.TargetLinkURI, DocumentTarget: c.Presentation.DocumentTarget, ReturnURL: c.Presentation.ReturnURL,
		ContextID: c.Context.ID, ContextTitle: c.Context.Title, MembershipsURL: c.NRPS.MembershipsURL,
	}
	if c.MessageType == MessageDeepLinking {
		id.DeepLinking = c.DeepLinking
	}
	return id, nil
}

// checkClaims applies the Security Framework's and LTI Core's rules to a
// verified token.
func checkClaims(std jwt.Claims, c launchClaims, p Platform, flow Flow, now time.Time, skew time.Duration) error {
	if std.Issuer != p.Issuer {
		return fmt.Errorf("%w: issuer %s, not %s's %q", ErrInvalid, outside.Quote(std.Issuer), p.Name, p.Issuer)
	}
	if !std.Audience.Contains(p.ClientID) {
		return fmt.Errorf("%w: the audience %s does not hold the client id %q", ErrInvalid, outside.Quote(strings.Join(std.Audience, " ")), p.ClientID)
	}
	if (len(std.Audience) > 1 || c.AZP != "") && c.AZP != p.ClientID {
		return fmt.Errorf("%w: azp %s is not the client id %q", ErrInvalid, outside.Quote(c.AZP), p.ClientID)
	}
	if std.Expiry == nil || std.IssuedAt == nil {
		return fmt.Errorf("%w: exp and iat are required", ErrInvalid)
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Time: now}, skew); err != nil {
		return fmt.Errorf("%w: %v (exp %s, iat %s, now %s)", ErrClock, err, std.Expiry.Time().UTC().Format(time.RFC3339),
			std.IssuedAt.Time().UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if c.Nonce == "" || c.Nonce != flow.Nonce {
		return fmt.Errorf("%w: the nonce is not the one this browser's login asked for", ErrBadState)
	}
	switch {
	case c.MessageType != messageResourceLink && c.MessageType != MessageDeepLinking:
		return fmt.Errorf("%w: message_type %s, not %s or %s", ErrInvalid, outside.Quote(c.MessageType), messageResourceLink, MessageDeepLinking)
	case c.Version != version13:
		return fmt.Errorf("%w: version %s, not %s", ErrInvalid, outside.Quote(c.Version), version13)
	case std.Subject == "":
		return fmt.Errorf("%w: no sub (an anonymous launch cannot open an editor)", ErrInvalid)
	case c.MessageType == messageResourceLink && c.ResourceLink.ID == "":
		return fmt.Errorf("%w: no resource_link.id", ErrInvalid)
	case c.MessageType == MessageDeepLinking && c.DeepLinking == nil:
		return fmt.Errorf("%w: a deep-linking request without deep_linking_settings", ErrInvalid)
	case c.MessageType == MessageDeepLinking && Origin(c.DeepLinking.ReturnURL) == "":
		return fmt.Errorf("%w: deep_link_return_url %s is not an https URL", ErrInvalid, outside.Quote(c.DeepLinking.ReturnURL))
	}
	return nil
}

// InstitutionRole is the LIS vocabulary of institution roles: a short
// name in admin_roles (Administrator) means the institution role of that
// name.
const InstitutionRole = "http://purl.imsglobal.org/vocab/lis/v2/institution/person#"

// RoleURI is the role an admin_roles entry names: a whole URI as it is, a
// short name the institution role of that name.
func RoleURI(entry string) string {
	if strings.ContainsAny(entry, "/:#") {
		return entry
	}
	return InstitutionRole + entry
}

// holdsAny reports whether roles hold one of want, each compared whole
// (RoleURI): a course's administrator (membership#Administrator), a
// sub-role (membership/Learner#Administrator) or another vocabulary's
// role ending in #Administrator holds no institution role.
func holdsAny(roles, want []string) bool {
	for _, w := range want {
		if slices.Contains(roles, RoleURI(w)) {
			return true
		}
	}
	return false
}
