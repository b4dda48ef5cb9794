package lti

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/internal/poll"
	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// LMS is the tool's side of the registered platforms (a *Tool).
type LMS interface {
	Login(ctx context.Context, base string, q url.Values) (string, Flow, error)
	Launch(ctx context.Context, base string, flows []Flow, form url.Values) (Identity, error)
	Platforms() []Platform
	Ready() error
	// CourseURL is a refused launch's way back to the course ("" if none).
	CourseURL(form url.Values) string
}

// The way's routes besides the protocol's own. The login and the launch
// arrive as cross-site requests from the LMS (a form post, a redirect):
// they are exempt from the cross-origin and anti-forgery guards; the
// launch's signed id_token, bound to this browser's login by state and
// nonce and used once, protects it. The continuation of a framed launch
// comes from the bridge's own page inside the LMS's frame, where the
// anti-forgery cookie may be a third-party cookie the browser drops: it
// keeps the cross-origin guard and needs no token, its sealed one-time
// value is the proof.
const (
	ContinuePath = "/lti/continue"
	// FlowCookie holds this browser's key, to which each login's state is
	// bound (partitioned: inside the LMS's frame too).
	FlowCookie = "ssobridge_lti"
)

// SourceKey keys Way.Sources: one registration of an LMS.
func SourceKey(issuer, clientID string) string { return issuer + "\x00" + clientID }

// SourceID is the admission's source of one registration of an LMS: an
// LMS is its (issuer, client_id), since a hosted LMS gives all its
// customers one issuer (Canvas cloud's https://canvas.instructure.com),
// and two schools registered separately must not share their learners'
// links. LegacySourceID is what it was before: the issuer alone.
func SourceID(issuer, clientID string) string { return LegacySourceID(issuer) + "|" + clientID }

// LegacySourceID is the source of an LMS's identities kept before an LMS
// was its (issuer, client_id) (MigrateIdentities moves them).
func LegacySourceID(issuer string) string { return "lti:" + issuer }

// Way is launching from a school's LMS as a way in (wayin.Way).
type Way struct {
	LMS LMS
	// Sources are the registered LMSs as the admission sees them (their
	// email_domains, create_accounts, admin_roles), by SourceKey.
	Sources map[string]signin.Source
	// KeySet is the tool's public key set (JSON), served at JWKSPath.
	KeySet []byte
	// Key is the tool's key: it signs deep-linking answers.
	Key ToolKey
	// Roster provisions the course of an instructor's launch ahead of its
	// members' first launches (nil: never).
	Roster *Roster
	// Registry keeps the LMSs registered by Dynamic Registration (nil: no
	// registration, and no console page).
	Registry *Records
	// IssuerAt allows an issuer whose origin is not its configuration
	// URL's (nil: none): the embedded demo's sample LMS, whose issuer is
	// a name while it is served on a loopback port, registers from the
	// console as a real LMS would.
	IssuerAt func(configOrigin, issuer string) bool
	// Zone is the time zone of the times its console page shows
	// (server.time_zone; nil: UTC).
	Zone *time.Location
	// HTTPClient reaches LMSs that register (nil: its own, 10 s timeout).
	HTTPClient *http.Client
	// Logger: nil, none.
	Logger *slog.Logger
	// Refresh reads the key sets (a *Tool's); nil: Watch does nothing.
	Refresh func(ctx context.Context) error
	// RefreshEvery and RetryEvery: how often Watch reads the key sets
	// (0: an hour), and while one is unreadable (0: 15 s).
	RefreshEvery, RetryEvery time.Duration

	k      wayin.Kit
	sealer wayin.Sealer
}

// heldFlow is a login's flow as its state carries it, sealed: the state
// the platform echoes back is the whole flow, bound to the browser that
// started it. No list of pending logins is kept that another site's
// logins could push the person's out of.
type heldFlow struct {
	Flow    Flow   `json:"f"`
	Browser string `json:"b"` // the SHA-256 of the browser's key (FlowCookie)
	// Storage is set when the platform keeps the browser's key too
	// (lti_storage_target): where, and under which key.
	Storage *platformStorage `json:"p,omitempty"`
}

// Name is its key on /readyz.
func (w *Way) Name() string { return "lti" }

// Exempt: the login and the launch; the framed page's button keeps the
// cross-origin check.
func (w *Way) Exempt() []wayin.Exemption {
	return []wayin.Exemption{{Path: LoginPath}, {Path: LaunchPath}, {Path: ContinuePath, KeepOrigin: true}, {Path: DeepLinkPath, KeepOrigin: true}}
}

// Ready: every platform's key set is read.
func (w *Way) Ready(context.Context) error { return w.LMS.Ready() }

// Essential: no; one platform's unreadable key set leaves the others
// (and every other way in) working: /readyz says degraded.
func (w *Way) Essential() bool { return false }

// Button: none; launches start in the LMS.
func (w *Way) Button(string) (string, string) { return "", "" }

// Mount adds its routes.
func (w *Way) Mount(r wayin.Router, k wayin.Kit) {
	w.k = k
	w.sealer = k.Sealer("lti flow")
	r.GET(LoginPath, w.login)
	r.POST(LoginPath, w.login)
	r.POST(LaunchPath, w.launch)
	r.POST(ContinuePath, w.continueFramed)
	r.POST(DeepLinkPath, w.deepLink)
	r.GET(JWKSPath, w.jwks)
	r.GET(ConfigPath, w.config)
	if w.Registry != nil {
		r.GET(RegisterPath, w.register)
		r.GET(ConsolePath, k.Console(w.consolePage))
		r.POST(ConsolePath+"/registration-url", k.Console(w.consoleRegistrationURL))
		r.POST(ConsolePath+"/platforms/:action", k.Console(w.consolePlatform))
		if w.Roster != nil {
			r.POST(ConsolePath+"/courses/provision", k.Console(w.consoleProvisionCourse))
		}
	}
}

// Watch reads the platforms' key sets now and again (every RetryEvery
// while one is unreadable, every RefreshEvery otherwise: a platform's new
// key is found before a launch needs it) until ctx ends, logging once
// when reads start failing and once when they work again.
func (w *Way) Watch(ctx context.Context, logger *slog.Logger) {
	if w.Refresh == nil {
		return
	}
	every, retry := w.RefreshEvery, w.RetryEvery
	if every <= 0 {
		every = time.Hour
	}
	if retry <= 0 {
		retry = 15 * time.Second
	}
	poll.Run(ctx, poll.Schedule{Every: every, Retry: retry, Timeout: 15 * time.Second, AtOnce: true}, nil, w.Refresh, func(_, err error) {
		if err != nil {
			logger.Error("LTI: a platform's key set is unreadable: its launches get the unavailable page (or use the keys read before) until it is read", "err", err)
		} else {
			logger.Info("LTI: every platform's key set read")
		}
	})
}

// login is GET|POST /lti/login: the LMS's third-party-initiated login.
// The browser goes on to the platform's authorization endpoint with a new
// flow kept in this browser.
func (w *Way) login(c echo.Context) error {
	if err := c.Request().ParseForm(); err != nil {
		return w.refused(c, fmt.Errorf("%w: the form could not be read", ErrBadRequest), "")
	}
	q := c.Request().Form // the query of a GET, the body of a POST
	u, flow, err := w.LMS.Login(c.Request().Context(), w.k.BaseURL(c), q)
	if err != nil {
		return w.refused(c, err, w.platformName(q.Get("iss")))
	}
	flow.State = "" // the sealed flow is the state
	key := w.browserKey(c)
	held := heldFlow{Flow: flow, Browser: keyHash(key)}
	to, err := url.Parse(u)
	if err != nil {
		return err
	}
	target := q.Get("lti_storage_target")
	if target != "" && Origin(u) != "" {
		// The platform offers to keep the state in its own frame (LTI
		// client-side postMessage storage): for a browser that drops the
		// tool's cookie inside the LMS's page, the browser's key is kept
		// there as well.
		held.Storage = &platformStorage{Target: target, Key: "ssobridge-" + randid.Token(12), Origin: Origin(u)}
	}
	state, err := w.sealer.SealJSON("state", held)
	if err != nil {
		return err
	}
	aq := to.Query()
	aq.Set("state", state)
	to.RawQuery = aq.Encode()
	wayin.NoStore(c)
	if held.Storage != nil {
		return w.storageLogin(c, held.Storage, key, to.String(), q.Get("iss"))
	}
	return c.Redirect(http.StatusSeeOther, to.String())
}

// browserKey is this browser's key, made and kept in FlowCookie on its
// first login (a login's state holds its SHA-256). Another site can make the browser log in
// as often as it likes: the key stays, and so does every login the person
// started.
func (w *Way) browserKey(c echo.Context) string {
	if v, ok := w.keyCookie().Value(c); ok && len(v) >= 22 && len(v) <= 64 {
		return v
	}
	key := randid.Token(16)
	w.keyCookie().Set(c, key, keyCookieAge)
	return key
}

// keyHash is what a login's state holds of the browser's key.
func keyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// keyCookie is FlowCookie, the browser's key: the launch is a cross-site
// POST, which carries a cookie only with SameSite=None (and so Secure),
// partitioned to survive inside the LMS's frame; over plain http
// (development, on loopback) Lax.
func (w *Way) keyCookie() wayin.FlowCookie {
	return wayin.NewFlowCookie(FlowCookie, "/", w.k.Secure()).CrossSite(true)
}

// keyCookieAge is how long a browser keeps its key between launches.
const keyCookieAge = 30 * 24 * time.Hour

// pending is the flow the posted state carries when it was started in
// this browser (none otherwise: the launch is refused as not this
// browser's).
func (w *Way) pending(c echo.Context, state string) []Flow {
	var h heldFlow
	if w.sealer.OpenJSON("state", state, &h) != nil {
		return nil
	}
	key, _ := w.keyCookie().Value(c)
	if h.Browser != keyHash(key) && (h.Storage == nil || !w.fromOwnPage(c) || h.Browser != keyHash(c.Request().PostFormValue(storedKeyField))) {
		return nil
	}
	h.Flow.State = state
	return []Flow{h.Flow}
}

// fromOwnPage reports whether a launch posted again with the key the
// platform kept comes from the bridge's own page (the one storageLaunch
// answered, inside the LMS's frame): the key is secret to nobody (whoever
// started the login holds it in their own browser), so it proves the
// browser only when another site cannot post it. A browser names the
// posting page's site in Sec-Fetch-Site, else its origin in Origin; a
// post with neither is refused.
func (w *Way) fromOwnPage(c echo.Context) bool {
	r := c.Request()
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	o := r.Header.Get("Origin")
	return o != "" && o == Origin(w.k.BaseURL(c))
}

// launch is POST /lti/launch: the id_token the platform's page posts,
// checked against this browser's logins (the one it answers is used up,
// whatever happens), then the admission, and the editor: at once in a
// window of its own, through a button in a new tab when the LMS frames
// the tool.
func (w *Way) launch(c echo.Context) error {
	if err := c.Request().ParseForm(); err != nil {
		return w.refused(c, fmt.Errorf("%w: the form could not be read", ErrBadRequest), "")
	}
	form := c.Request().PostForm // never the query string
	flows := w.pending(c, form.Get("state"))
	if len(flows) == 0 && !form.Has(storedKeyField) { // posted again: whatever the platform kept, it is judged below
		if s := w.storedIn(form.Get("state")); s != nil {
			// No cookie came with the launch, but the platform keeps the
			// browser's key: the page reads it there and posts again.
			return w.storageLaunch(c, s, form)
		}
	}
	id, err := w.LMS.Launch(c.Request().Context(), w.k.BaseURL(c), flows, form)
	if err != nil {
		r := page(err, id.Platform.Name)
		r.Info.WayBack = backToCourse(w.LMS.CourseURL(form)) // its own page's too (the store's)
		if _, none := c.Cookie(w.keyCookie().Name()); errors.Is(err, ErrBadState) && none != nil {
			switch {
			case !w.k.Secure():
				r.Info.Detail += "; " + plainHTTPHint
			case c.Request().TLS == nil && c.Scheme() == "http":
				r.Info.Detail += "; " + secureOverHTTPHint
			}
		}
		noSwitch(c)
		return w.k.Refuse(c, "LTI launch refused", refusedSource(id.Platform.Name), "", r)
	}
	if id.DeepLinking != nil {
		// A teacher placing the tool: no account is opened, and nothing
		// but a signed link goes back to the LMS.
		return w.deepLinkPage(c, id)
	}
	// Framed, the editor's cookie would be a third-party cookie in the
	// LMS's page: the arrival is held, and a page that the platform's
	// origins alone may frame offers one button, which opens the editor
	// in a new tab (used once, while the account's sessions stand). No
	// session starts in the frame, so no sign-in is recorded: the new
	// tab's records it.
	l := wayin.Landing{How: "LTI: " + id.Platform.Name, Via: id.Platform.Name, Launch: true, ReturnTo: ReturnTo(id.TargetLinkURI), Hold: id.Framed()}
	held, err := w.k.Enter(c, w.arrival(id), l)
	if err != nil {
		noSwitch(c)
		return admissionPage(err, id.Platform.Name, w.LMS.CourseURL(form))
	}
	if w.Roster != nil && id.MembershipsURL != "" && id.ContextID != "" && id.Platform.TokenURL != "" && MayPlace(id.Roles) {
		w.Roster.Start(id, w.arrival(id).Source)
	}
	if !l.Hold {
		return nil
	}
	return w.framedPage(c, framedState{Token: held, LMS: id.Platform.Name, Frame: id.FrameAncestors(), Expires: w.k.Now().Add(framedTTL)})
}

// framedState is what the framed page holds, sealed: its language switch
// posts it again to show the page in another language.
type framedState struct {
	Token   string    `json:"t"`
	LMS     string    `json:"l"`
	Frame   []string  `json:"f"`
	Expires time.Time `json:"e"`
}

// framedTTL is how long the framed page can be shown again (its button's
// continuation works as long).
const framedTTL = 10 * time.Minute

// framedPage answers the framed launch's page, which only the platform's
// origins may frame.
func (w *Way) framedPage(c echo.Context, s framedState) error {
	sealed, err := w.sealer.SealJSON("framed page", s)
	if err != nil {
		return err
	}
	frameable(c, s.Frame)
	wayin.NoStore(c)
	rePostSwitch(c, ContinuePath, map[string]string{"framed": sealed})
	return w.k.Render(c, http.StatusOK, locale.Msg("Video editor"), func(p views.Page) templ.Component {
		return framedPage(p, framedData{LMS: s.LMS, Token: s.Token})
	})
}

// continueFramed is POST /lti/continue: the framed page's button, in a
// new tab: the held arrival is used once, then the account signs in here,
// first-party (asking first when another account is signed in), and the
// editor opens.
func (w *Way) continueFramed(c echo.Context) error {
	if switching(c) {
		// The framed page again, in the language its switch chose: the
		// continuation is not used.
		var s framedState
		if w.sealer.OpenJSON("framed page", c.Request().PostFormValue("framed"), &s) != nil || !w.k.Now().Before(s.Expires) {
			return w.refused(c, fmt.Errorf("%w: the framed page's language switch", ErrBadState), "")
		}
		w.postedLanguage(c)
		return w.framedPage(c, s)
	}
	err := w.k.Resume(c, c.Request().PostFormValue("continuation"))
	if errors.Is(err, wayin.ErrHoldGone) {
		return w.refused(c, fmt.Errorf("%w: the new-tab button: %w", ErrBadState, err), "")
	}
	return err
}

// ReturnTo is where in the editor a target_link_uri of the /open form
// (<public_url>/open?return_to=/editor/...) lands; any other target opens
// the editor's start.
func ReturnTo(target string) string {
	u, err := url.Parse(target)
	if err != nil || u.Path != "/open" {
		return ""
	}
	return u.Query().Get("return_to")
}

// arrival is who launched, for the admission: the platform's registration
// is the source (its email_domains, create_accounts and admin_roles), the
// LMS's sub the subject.
func (w *Way) arrival(id Identity) signin.Arrival {
	p := id.Platform
	src, ok := w.Sources[SourceKey(p.Issuer, p.ClientID)]
	if !ok && p.Registered {
		// An LMS registered by Dynamic Registration: the rules its
		// registration URL carried.
		src, ok = signin.Source{ID: SourceID(p.Issuer, p.ClientID), Name: "LTI: " + p.Name, Title: p.Name, Noun: lmsNoun(), Key: p.Key, EmailDomains: p.EmailDomains,
			CreateAccounts: p.CreateAccounts}, true
	}
	if !ok {
		// A platform the wiring did not describe: it creates and adopts
		// nothing it did not link, and grants no admin.
		src = signin.Source{ID: SourceID(p.Issuer, p.ClientID), Name: "LTI: " + p.Name, Title: p.Name, Noun: lmsNoun(), Key: "lti.platforms"}
	}
	return signin.Arrival{Source: src, Subject: id.Subject, Email: id.Email,
		Names: accounts.Names{Given: id.GivenName, Family: id.FamilyName, Full: id.Name}, Admin: id.Admin}
}

// platformName is the registered name of an issuer, for a page ("" if
// none is registered).
func (w *Way) platformName(iss string) string {
	for _, p := range w.LMS.Platforms() {
		if p.Issuer == iss {
			return p.Name
		}
	}
	return ""
}

// refused records a refused launch (one log line and the audit say why)
// and answers its page. It never starts a session.
func (w *Way) refused(c echo.Context, err error, lms string) error {
	noSwitch(c)
	return w.k.Refuse(c, "LTI launch refused", refusedSource(lms), "", page(err, lms))
}

// refusedSource names the way in of a refused launch for the log and the
// audit.
func refusedSource(lms string) string {
	if lms == "" {
		return "LTI (unknown platform)"
	}
	return "LTI: " + lms
}

// plainHTTPHint is added to the detail of a launch that came without the
// browser's LTI cookie over plain http: the likely cause is not the
// browser but the scheme.
const plainHTTPHint = "no LTI login cookie came with this launch. The bridge runs over plain http here, where its cookie " +
	"cannot be SameSite=None (browsers require Secure, that is https), so a launch posted from the LMS's site arrives without it: " +
	"set server.public_url to the https URL the LMS reaches"

// secureOverHTTPHint is added when the cookie is marked Secure (the public
// URL is https) but the launch came over plain http: browsers never send
// a Secure cookie over http.
const secureOverHTTPHint = "no LTI login cookie came with this launch. The bridge's cookies are marked Secure (server.public_url is https), " +
	"and browsers do not send Secure cookies over plain http, as this launch came: give the LMS the bridge's https URLs (the page /lti/config lists them), " +
	"and behind a proxy that ends TLS, let it set X-Forwarded-Proto: https"

// httpClient reaches the LMSs that register.
func (w *Way) httpClient() *http.Client {
	if w.HTTPClient != nil {
		return w.HTTPClient
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// logger is the Way's logger (one that discards, if none).
func (w *Way) logger() *slog.Logger {
	if w.Logger != nil {
		return w.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// jwks is GET /lti/jwks: the tool's public key set.
func (w *Way) jwks(c echo.Context) error {
	c.Response().Header()["Cache-Control"] = []string{"public, max-age=300"}
	return c.Blob(http.StatusOK, "application/json", w.KeySet)
}

// config is GET /lti/config: what the LMS's "add a tool" form asks for,
// as a page, or as JSON when asked with Accept: application/json.
func (w *Way) config(c echo.Context) error {
	base := w.k.BaseURL(c)
	cfg := configData{LoginURL: base + LoginPath, RedirectURI: base + LaunchPath, TargetLinkURI: base + LaunchPath,
		JWKSURL: base + JWKSPath, DeepLinkExample: base + "/open?return_to=/editor/projects"}
	// The URLs are anyone's (an LMS admin copies them); which schools are
	// registered is the partner admin's to know.
	if acct, ok := w.k.SignedIn(c); ok && acct.Admin {
		for _, p := range w.LMS.Platforms() {
			cfg.Platforms = append(cfg.Platforms, p.Name)
		}
	}
	if strings.Contains(c.Request().Header.Get("Accept"), "application/json") {
		out := map[string]any{"login_url": cfg.LoginURL, "redirect_uri": cfg.RedirectURI, "target_link_uri": cfg.TargetLinkURI, "jwks_url": cfg.JWKSURL}
		if cfg.Platforms != nil {
			out["platforms"] = cfg.Platforms
		}
		return c.JSON(http.StatusOK, out)
	}
	return w.k.Render(c, http.StatusOK, locale.Msg("LTI 1.3 tool settings"), func(p views.Page) templ.Component { return configPage(p, cfg) })
}

// ConsolePage is its page of the admin console (wayin.ConsolePage).
func (w *Way) ConsolePage() (string, string) {
	if w.Registry == nil {
		return "", ""
	}
	return ConsolePath, "LTI"
}
