// Package handlers is the bridge's HTTP face: Echo routes, middleware
// (sessions, CSRF, security headers, request ids, logging), and the mapping
// of every error to a templ page with the right status.
package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/handlers/console"
	"github.com/ssobridge/ssobridge/handlers/metrics"
	"github.com/ssobridge/ssobridge/internal/outside"
	"github.com/ssobridge/ssobridge/internal/seal"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/static"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// Deps are what the handlers need; app wires them.
type Deps struct {
	Store Store
	// Zone is the time zone of every time a page shows
	// (server.time_zone; nil: UTC).
	Zone *time.Location
	// Languages are the catalogs of the pages people see and the
	// languages offered (nil: every language, English first).
	Languages *locale.Catalog
	Passwords signin.Passwords
	// Regulator bans after repeated failed sign-ins (required: every
	// sign-in is admitted by it before its password is verified).
	Regulator signin.Regulator
	// TrustProxyHeaders takes the client IP from X-Forwarded-For.
	TrustProxyHeaders bool
	Launcher          Launcher
	// Line, when set, runs launches in a fair line for the platform's
	// pace, with a waiting page for users it holds (waitline.Line); nil:
	// each launch runs within its request.
	Line Line
	// Provisioning, when set, is the console's background provisioning.
	Provisioning console.Provisioning
	Platform     console.Platform
	Sessions     SessionConfig
	Metrics      *metrics.Metrics
	// MetricsElsewhere: /metrics is served on a listener of its own
	// (server.metrics_addr), not here.
	MetricsElsewhere bool
	Logger           *slog.Logger
	Now              func() time.Time
	// AuditRetention is shown on the audit page (0: kept forever).
	AuditRetention time.Duration
	// LaunchTimeout bounds one launch, retries included; default
	// DefaultLaunchTimeout.
	LaunchTimeout time.Duration
	// Stopping reports that the process is draining: /readyz answers 503
	// at once. nil: never.
	Stopping func() bool
	// HomeAdminSessions lets a session begun by a handoff from Home (the
	// partner's portal) open the admin console; off, an admin who arrived
	// that way signs in with a password or the IdP first.
	HomeAdminSessions bool
	// PublicURL is how browsers reach the bridge (server.public_url), for
	// links it hands out; empty: the request's own scheme and host.
	PublicURL string
	// Ways are the ways in (wayin.Way) the configuration turns on: the
	// portal's handoff, OIDC, SAML, LTI. Each mounts its routes, names
	// its anti-forgery exemptions and says whether it is ready; the
	// sign-in page shows their buttons.
	Ways []wayin.Way
	// PasswordForm is whether the sign-in page shows the password form.
	PasswordForm PasswordForm
	// ContactName and ContactURL are whom pages tell a person to ask
	// (server.contact_name, server.contact_url); empty: the catalog's
	// "your IT help desk".
	ContactName, ContactURL string
	// Home is the partner's portal: "back" links of users who came from it
	// lead there. Its URL empty: none.
	Home views.WayBack
}

// PasswordForm says whether the password form is offered (oidc.local_login
// and oidc.local_login_fallback).
type PasswordForm struct {
	// Hidden: the sign-in page shows the ways in's buttons only.
	Hidden bool
	// Fallback: while Hidden, /login?local=1 still shows it; without it,
	// POST /login is a 404.
	Fallback bool
}

// exemptions are every way in's paths the anti-forgery guards pass.
func exemptions(ways []wayin.Way) []wayin.Exemption {
	var out []wayin.Exemption
	for _, w := range ways {
		out = append(out, w.Exempt()...)
	}
	return out
}

// consolePages are the pages ways in add to the admin console.
func consolePages(ways []wayin.Way) []views.ConsoleLink {
	var out []views.ConsoleLink
	for _, w := range ways {
		if c, ok := w.(wayin.ConsolePage); ok {
			if path, label := c.ConsolePage(); path != "" {
				out = append(out, views.ConsoleLink{Path: path, Label: label})
			}
		}
	}
	return out
}

// DefaultLaunchTimeout bounds a launch, retries included; a stop waits this
// long for launches in flight.
const DefaultLaunchTimeout = 60 * time.Second

// server holds the dependencies of every route.
type server struct {
	Deps
	consolePages []views.ConsoleLink // the ways' pages in the console's navigation
	signin       *signin.Service     // the rules of signing in, sessions and new passwords
	sessions     *sessionManager
	csrf         *csrfGuard
	ready        *readiness
	// grants seals the pending sign-ins (grant.go; no age limit of its
	// own: a grant carries its expiry).
	grants *seal.Sealer
	// places seals the places kept in the line (place.go; the expiry is
	// inside).
	places *seal.Sealer
	// admission decides which account an arrival is (every way in but the
	// password).
	admission *signin.Admission
}

// New builds the Echo app.
func New(d Deps) *echo.Echo {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Metrics == nil {
		d.Metrics = metrics.New()
	}
	if d.LaunchTimeout <= 0 {
		d.LaunchTimeout = DefaultLaunchTimeout
	}
	if d.Stopping == nil {
		d.Stopping = func() bool { return false }
	}
	if d.Languages == nil {
		cat, err := locale.New(nil)
		if err != nil {
			panic(err) // the embedded catalogs are checked by the tests
		}
		d.Languages = cat
	}
	svc := signin.New(signin.Config{Accounts: d.Store.Accounts, Sessions: d.Store.Sessions, Links: d.Store.OneTime,
		Passwords: d.Passwords, Regulator: d.Regulator, MaxAge: d.Sessions.MaxAge, IdleTimeout: d.Sessions.IdleTimeout, Now: d.Now})
	h := &server{Deps: d, signin: svc, sessions: newSessionManager(d.Sessions, svc, d.Now), csrf: newCSRFGuard(d.Sessions, d.Now, exemptions(d.Ways)),
		consolePages: consolePages(d.Ways)}
	h.sessions.touched = d.Metrics.SessionTouched
	h.ready = newReadiness(d.Store.Health, func(ctx context.Context) error { return d.Platform.Check(ctx).Err }, d.Ways, d.Now, d.Logger)
	h.grants = seal.New(purposeGrant, d.Sessions.keys(), d.Sessions.previousKeys(), 0, d.Now)
	h.places = seal.New(purposePlace, d.Sessions.keys(), d.Sessions.previousKeys(), 0, d.Now)
	h.admission = signin.NewAdmission(admissionStore{d.Store.Accounts, d.Store.Identities}, d.Logger)

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = h.handleError
	e.IPExtractor = ClientIP(d.TrustProxyHeaders)
	e.Use(newRequestIDs().middleware)
	e.Use(h.language)   // before anything that may answer a page
	e.Use(h.requestLog) // outside recoverer, so a panic is logged with its status
	e.Use(h.recoverer)
	conn := d.Platform.Connection()
	e.Use(h.securityHeaders(cspFormAction(conn.BaseURL, conn.ExchangeURL)))
	// An API of a way in (SCIM) answers an oversize body itself, in its
	// own error format.
	e.Use(middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: "1M", Skipper: func(c echo.Context) bool { return underAPI(h.csrf.apis, c.Request().URL.Path) }}))
	e.Use(h.csrf.middleware)

	e.GET("/healthz", h.healthz)
	e.GET("/readyz", h.readyz)
	if !d.MetricsElsewhere {
		e.GET("/metrics", echo.WrapHandler(d.Metrics.Handler()))
	}
	e.StaticFS("/static", static.Files)

	e.GET("/login", h.loginPage)
	e.POST("/login", h.login)
	e.POST("/logout", h.logout)
	e.POST("/logout/everywhere", h.logoutEverywhere, h.requireUser(sessionExpiredPage))
	e.GET("/", h.home, h.requireUser(redirectToLogin))
	e.POST("/launch", h.launch, h.requireUser(sessionExpiredPage))
	e.GET("/launch/wait/:ticket", h.launchWait, h.requireUser(sessionExpiredPage))
	e.GET("/launch/wait/:ticket/status", h.launchWaitStatus, h.requireUser(sessionExpiredPage))
	e.GET("/open", h.open)
	for _, w := range d.Ways {
		w.Mount(e, kit{h})
	}
	e.POST(switchPath, h.switchAccount)
	e.GET(arrivePath, h.arrive)
	e.GET("/set-password", h.setPasswordPage)
	e.POST("/set-password", h.setPassword)

	console.New(console.Deps{Store: console.Store{Accounts: d.Store.Accounts, Sessions: d.Store.Sessions, Links: d.Store.Links, Audit: d.Store.Audit,
		OneTime: d.Store.OneTime, Identities: d.Store.Identities}, Passwords: svc, Platform: d.Platform, Provisioning: d.Provisioning,
		Now: d.Now, Zone: d.Zone, AuditRetention: d.AuditRetention}, consoleKernel{h}).
		Mount(e.Group("/admin", h.requireUser(redirectToLogin), h.requireAdmin, h.consoleEnglish))
	h.csrf.knowRoutes(e)
	return e
}

// ClientIP is how a request's client address is read, for regulation:
// never from a header a client can forge, unless a proxy in front is
// trusted to set it (server.trust_proxy_headers).
func ClientIP(trustProxyHeaders bool) echo.IPExtractor {
	if trustProxyHeaders {
		return echo.ExtractIPFromXFFHeader()
	}
	return echo.ExtractIPDirect()
}

// cspFormAction allows forms to post here and the launch redirect to land
// on the platform and its exchange (browsers apply form-action to
// redirects): the origin of each URL, once.
func cspFormAction(platformURLs ...string) string {
	srcs := []string{"'self'"}
	for _, raw := range platformURLs {
		if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Host != "" && !slices.Contains(srcs, u.Scheme+"://"+u.Host) {
			srcs = append(srcs, u.Scheme+"://"+u.Host)
		}
	}
	return strings.Join(srcs, " ")
}

func (h *server) securityHeaders(formAction string) echo.MiddlewareFunc {
	csp := "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action " + formAction +
		"; frame-ancestors 'none'; base-uri 'none'"
	// Every answer carries these; the header map is given the same value
	// slices each time (keys canonical, slices never written to: a later
	// Set replaces a slice, an Add appends past its length into a new one),
	// rather than seven new ones per request.
	common := [][2]string{{"Content-Security-Policy", csp}, {"X-Content-Type-Options", "nosniff"}, {"X-Frame-Options", "DENY"},
		{"Referrer-Policy", "same-origin"}, {"Cross-Origin-Opener-Policy", "same-origin"}}
	if h.Sessions.Secure {
		common = append(common, [2]string{"Strict-Transport-Security", "max-age=31536000"})
	}
	keys := make([]string, len(common))
	vals := make([][]string, len(common))
	for i, kv := range common {
		keys[i], vals[i] = kv[0], []string{kv[1]}
	}
	noStore, cached := []string{"no-store"}, []string{"public, max-age=3600"}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			hd := c.Response().Header()
			for i, k := range keys {
				hd[k] = vals[i][:1:1]
			}
			if strings.HasPrefix(c.Request().URL.Path, "/static/") {
				hd["Cache-Control"] = cached[:1:1]
			} else {
				hd["Cache-Control"] = noStore[:1:1]
			}
			return next(c)
		}
	}
}

func (h *server) requestLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err) // render now, so the status below is the one sent
		}
		req := c.Request()
		if p := req.URL.Path; (p == "/healthz" || p == "/readyz") && req.Method == http.MethodGet {
			// A probe every few seconds is no log line (a change of
			// readiness is, once): counted instead.
			h.Metrics.Probe(p, c.Response().Status)
			return nil
		}
		if !h.Logger.Enabled(req.Context(), slog.LevelInfo) {
			return nil // build no attributes for a line nobody reads
		}
		// The path only: no query strings, no tokens (they never appear in
		// our own paths), no headers. Attrs, not key-value pairs: nothing
		// is boxed into an interface.
		// A launch adds its account, path and platform calls: one line a
		// launch.
		attrs := [9]slog.Attr{slog.String("method", req.Method), slog.String("path", outside.Trim(req.URL.Path, 256)), slog.Int("status", c.Response().Status),
			slog.Duration("duration", time.Since(start)), slog.String("request_id", requestID(c))}
		n := 5
		if err != nil {
			attrs[n], n = slog.String("class", errorClass(err)), n+1
		}
		if l, ok := c.Get(ctxLaunched).(launched); ok {
			attrs[n], attrs[n+1], attrs[n+2] = slog.Int64("account_id", l.account), slog.String("launch", string(l.path)), slog.Int("platform_calls", l.calls)
			n += 3
		}
		h.Logger.LogAttrs(req.Context(), slog.LevelInfo, "http", attrs[:n]...)
		return nil
	}
}

func (h *server) recoverer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				h.Logger.Error("panic", "panic", r, "request_id", requestID(c))
				err = errInternal
			}
		}()
		return next(c)
	}
}

func (h *server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

func (h *server) readyz(c echo.Context) error {
	if h.Stopping() {
		st := ReadyStatus{Stopping: true, Version: h.ready.version}
		h.ready.note(st, nil)
		return c.JSON(http.StatusServiceUnavailable, st)
	}
	st := h.ready.check(c.Request().Context())
	status := http.StatusOK
	if !st.Ready {
		status = http.StatusServiceUnavailable
	}
	return c.JSON(status, st)
}
