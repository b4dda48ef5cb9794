package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/lti"
	"github.com/ssobridge/ssobridge/signin"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// LTI is launching from a school's LMS (lti.Tool).
type LTI interface {
	Login(base string, q url.Values) (string, lti.Flow, error)
	Launch(ctx context.Context, base string, flows []lti.Flow, form url.Values) (lti.Identity, error)
	Platforms() []lti.Platform
	Ready() error
}

// The LTI routes besides lti's own. The login and the launch arrive as
// cross-site requests from the LMS (a form post, a redirect): they are
// exempt from the cross-origin and anti-forgery guards, as /saml/acs is;
// the launch's signed id_token, bound to this browser's login by state
// and nonce and used once, protects it. The continuation of a framed
// launch comes from the bridge's own page inside the LMS's frame, where
// the anti-forgery cookie may be a third-party cookie the browser drops:
// it keeps the cross-origin guard and needs no token, its sealed one-time
// value is the proof.
const (
	ltiContinuePath = "/lti/continue"
	ltiFlowCookie   = "ssobridge_lti"
)

func newLTIFlows(cfg SessionConfig, now func() time.Time) *flowJar[lti.Flow] {
	j := newFlowJar(cfg, purposeLTIFlow, ltiFlowCookie, lti.FlowTTL, now, func(f lti.Flow) time.Time { return f.Expires })
	j.partitioned = true
	return j
}

// ltiLogin is GET|POST /lti/login: the LMS's third-party-initiated login.
// The browser goes on to the platform's authorization endpoint with a new
// flow kept in this browser.
func (h *server) ltiLogin(c echo.Context) error {
	if h.LTI == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	if err := c.Request().ParseForm(); err != nil {
		return h.ltiRefused(c, fmt.Errorf("%w: the form could not be read", lti.ErrBadRequest), "")
	}
	q := c.Request().Form // the query of a GET, the body of a POST
	u, flow, err := h.LTI.Login(h.baseURL(c), q)
	if err != nil {
		return h.ltiRefused(c, err, h.ltiPlatformName(q.Get("iss")))
	}
	if err := h.ltiFlows.write(c, append(h.ltiFlows.read(c), pendingFlow[lti.Flow]{Flow: flow, Own: ownRequest(c.Request())})); err != nil {
		return err
	}
	noStore(c)
	return c.Redirect(http.StatusSeeOther, u)
}

// ltiLaunch is POST /lti/launch: the id_token the platform's page posts,
// checked against this browser's logins (the one it answers is used up,
// whatever happens), then the account rules every way in shares, and the
// editor: at once in a window of its own, through a button in a new tab
// when the LMS frames the tool.
func (h *server) ltiLaunch(c echo.Context) error {
	if h.LTI == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	ctx := c.Request().Context()
	if err := c.Request().ParseForm(); err != nil {
		return h.ltiRefused(c, fmt.Errorf("%w: the form could not be read", lti.ErrBadRequest), "")
	}
	form := c.Request().PostForm // never the query string
	state := form.Get("state")
	pending, err := h.ltiFlows.take(c, func(f lti.Flow) bool { return f.State == state })
	if err != nil {
		return err
	}
	id, err := h.LTI.Launch(ctx, h.baseURL(c), pending, form)
	if err != nil {
		return h.ltiRefused(c, err, id.Platform.Name)
	}
	acct, err := h.admit(c, h.ltiArrival(id))
	if err != nil {
		return err
	}
	g := grant{How: "LTI: " + id.Platform.Name, Via: id.Platform.Name, Launch: true, ReturnTo: ltiReturnTo(id.TargetLinkURI)}
	if id.Framed() {
		return h.ltiFramed(c, acct, id, g)
	}
	return h.arrived(c, acct, g)
}

// ltiReturnTo is where in the editor a target_link_uri of the /open form
// (<public_url>/open?return_to=/editor/...) lands; any other target opens
// the editor's start.
func ltiReturnTo(target string) string {
	u, err := url.Parse(target)
	if err != nil || u.Path != "/open" {
		return ""
	}
	return u.Query().Get("return_to")
}

// ltiFramed answers a launch inside the LMS's page: the editor's cookie
// would be a third-party cookie there, so a page that the platform's
// origins alone may frame (Identity.FrameAncestors) offers one button,
// which opens the editor in a new tab through a grant (grant.go): used
// once, within 10 minutes, by a browser of the same user agent, while the
// account's sessions stand.
func (h *server) ltiFramed(c echo.Context, acct store.Account, id lti.Identity, g grant) error {
	g.AccountID, g.Epoch = acct.ID, acct.SessionEpoch
	tok, err := h.sealGrant(c, g, "") // the frame holds no session of this site's
	if err != nil {
		return err
	}
	hd := c.Response().Header()
	if origins := id.FrameAncestors(); len(origins) > 0 {
		hd["Content-Security-Policy"] = []string{strings.Replace(hd.Get("Content-Security-Policy"), "frame-ancestors 'none'", "frame-ancestors "+strings.Join(origins, " "), 1)}
		delete(hd, "X-Frame-Options") // frame-ancestors says who may frame it
	}
	// No session starts in the frame, so no sign-in is recorded: the
	// continuation's records it, in the new tab.
	return h.render(c, http.StatusOK, views.LTIFramedPage(h.page(c, "Video editor"), views.LTIFramed{LMS: id.Platform.Name, Token: tok}))
}

// ltiContinueFramed is POST /lti/continue: the framed page's button, in a
// new tab: the grant is used once, then the account signs in here,
// first-party (asking first when another account is signed in), and the
// editor opens.
func (h *server) ltiContinueFramed(c echo.Context) error {
	if h.LTI == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	g, acct, err := h.takeGrant(c, c.Request().PostFormValue("continuation"), "")
	if errors.Is(err, errGrantRefused) {
		return h.ltiRefused(c, fmt.Errorf("%w: the new-tab button: %w", lti.ErrBadState, err), g.Via)
	}
	if err != nil {
		return err
	}
	return h.arrived(c, acct, g)
}

// ltiArrival is who launched, for the admission: the platform's
// registration is the source (its email_domains, create_accounts and
// admin_roles), the LMS's sub the subject.
func (h *server) ltiArrival(id lti.Identity) signin.Arrival {
	p := id.Platform
	src, ok := h.LTISources[LTISourceKey(p.Issuer, p.ClientID)]
	if !ok {
		// A platform the wiring did not describe: it creates and adopts
		// nothing it did not link, and grants no admin.
		src = signin.Source{ID: "lti:" + p.Issuer, Name: "LTI: " + p.Name, Key: "lti.platforms"}
	}
	return signin.Arrival{Source: src, Subject: id.Subject, Email: id.Email,
		Names: accounts.Names{Given: id.GivenName, Family: id.FamilyName, Full: id.Name}, Admin: id.Admin}
}

// ltiPlatformName is the registered name of an issuer, for a page ("" if
// none is registered).
func (h *server) ltiPlatformName(iss string) string {
	for _, p := range h.LTI.Platforms() {
		if p.Issuer == iss {
			return p.Name
		}
	}
	return ""
}

// ltiRefused records a refused launch (one log line and the audit say
// why) and answers its page. It never starts a session.
func (h *server) ltiRefused(c echo.Context, err error, lms string) error {
	h.Logger.Warn("LTI launch refused", "reason", err.Error(), "lms", lms, "request_id", requestID(c))
	h.audit(c, store.Event{Kind: store.KindLogin, Outcome: "failed", Detail: truncate("LTI: "+lms+": "+err.Error(), 300)})
	h.Metrics.login("failed")
	return ltiError{err: err, lms: lms}
}

// ltiError marks a refused LTI launch for the error page.
type ltiError struct {
	err error
	lms string
}

func (e ltiError) Error() string { return e.err.Error() }
func (e ltiError) Unwrap() error { return e.err }

// ltiPage maps a refused launch to its page; ok is false for an error of
// no LTI class (the store's, say), which gets its own page.
func ltiPage(e ltiError, info views.ErrorInfo) (int, func(views.Page, views.ErrorInfo) templ.Component, views.ErrorInfo, bool) {
	err := e.err
	info.Detail, info.LMS, info.Public = err.Error(), e.lms, true
	switch {
	case errors.Is(err, lti.ErrKeysUnavailable):
		info.RetryAfter = 30
		return http.StatusServiceUnavailable, views.LTIUnavailable, info, true
	case errors.Is(err, lti.ErrBadState), errors.Is(err, lti.ErrReplayed), errors.Is(err, lti.ErrFlowExpired):
		return http.StatusBadRequest, views.LTIStale, info, true
	case errors.Is(err, lti.ErrClock):
		return http.StatusBadRequest, views.LTIClock, info, true
	case errors.Is(err, lti.ErrNoEmail):
		return http.StatusBadRequest, views.LTINoEmail, info, true
	case errors.Is(err, lti.ErrBadRequest), errors.Is(err, lti.ErrInvalid), errors.Is(err, lti.ErrUnknownPlatform):
		return http.StatusBadRequest, views.LTIRefused, info, true
	}
	info.Detail, info.LMS, info.Public = "", "", false
	return 0, nil, info, false
}

// ltiJWKS is GET /lti/jwks: the tool's public key set.
func (h *server) ltiJWKS(c echo.Context) error {
	if h.LTI == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	c.Response().Header()["Cache-Control"] = []string{"public, max-age=300"}
	return c.Blob(http.StatusOK, "application/json", h.LTIKeySet)
}

// ltiConfig is GET /lti/config: what the LMS's "add a tool" form asks
// for, as a page, or as JSON when asked with Accept: application/json.
func (h *server) ltiConfig(c echo.Context) error {
	if h.LTI == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	base := h.baseURL(c)
	cfg := views.LTIConfig{LoginURL: base + lti.LoginPath, RedirectURI: base + lti.LaunchPath, TargetLinkURI: base + lti.LaunchPath,
		JWKSURL: base + lti.JWKSPath, DeepLinkExample: base + "/open?return_to=/editor/projects"}
	for _, p := range h.LTI.Platforms() {
		cfg.Platforms = append(cfg.Platforms, p.Name)
	}
	if strings.Contains(c.Request().Header.Get("Accept"), "application/json") {
		return c.JSON(http.StatusOK, map[string]any{"login_url": cfg.LoginURL, "redirect_uri": cfg.RedirectURI,
			"target_link_uri": cfg.TargetLinkURI, "jwks_url": cfg.JWKSURL, "platforms": cfg.Platforms})
	}
	return h.render(c, http.StatusOK, views.LTIConfigPage(h.page(c, "LTI 1.3 tool settings"), cfg))
}
