package handlers

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/ssobridge/ssobridge/internal/seal"
	"github.com/ssobridge/ssobridge/wayin"
)

// csrfError is a refused anti-forgery check.
type csrfError struct{ status int }

func (e csrfError) Error() string { return "csrf check failed (" + strconv.Itoa(e.status) + ")" }

// The anti-forgery token. A browser holds a random secret in a cookie
// sealed with the server's session keys, so a cookie planted by anyone
// else (a sibling subdomain can set one) does not decode: a plain
// double-submit cookie could be matched by a planted one. Every form
// carries the secret masked with a fresh random pad (as gorilla/csrf
// does), so the token differs on every page and reveals nothing to a
// compression side channel. A state-changing request must bring a token
// that unmasks to its cookie's secret. In front of that, net/http's
// CrossOriginProtection refuses what a browser says came from another
// origin (Sec-Fetch-Site, or an Origin header that is not this host's):
// a sibling subdomain is same-site but not same-origin, and is refused
// before its token is even read.
const (
	csrfField      = "_csrf"
	csrfSecretLen  = 32
	csrfCookieAge  = 12 * time.Hour
	ctxCSRFSecret  = "csrf_secret" // the browser's secret; page masks it for the page's forms
	csrfPlainName  = "_csrf"
	csrfSecureName = "__Host-csrf" // https: only this host, over TLS, path /
)

// csrfGuard checks and issues anti-forgery tokens. The secret's cookie is
// sealed (seal.Sealer).
type csrfGuard struct {
	sealer  *seal.Sealer
	now     func() time.Time // when a secret is due for renewal
	origins *http.CrossOriginProtection
	name    string
	secure  bool
	// routed holds "METHOD path" of every route; a request that matched
	// none (404, 405) is answered for what it is, before any token check.
	routed map[string]bool
	// exempt are the ways in's paths that arrive cross-site with a proof
	// of their own: true waives both guards, false only the token (the
	// cross-origin check stays).
	exempt map[string]bool
	// machine are the ways in's paths machines fetch (metadata): no
	// cookie is set there.
	machine map[string]bool
	// apis are the prefixes of the APIs ways in serve (SCIM's): no cookie,
	// no anti-forgery check, by any method.
	apis []string
}

// newCSRFGuard is the guard; exempt are the ways in's paths that arrive
// cross-site with a proof of their own.
func newCSRFGuard(cfg SessionConfig, now func() time.Time, exempt []wayin.Exemption) *csrfGuard {
	name := csrfPlainName
	if cfg.Secure {
		name = csrfSecureName
	}
	g := &csrfGuard{sealer: seal.New(purposeCSRF, cfg.keys(), cfg.previousKeys(), csrfCookieAge, now), now: now, origins: http.NewCrossOriginProtection(),
		name: name, secure: cfg.Secure, exempt: map[string]bool{}, machine: map[string]bool{}}
	for _, x := range exempt {
		switch {
		case x.API:
			g.apis = append(g.apis, x.Path)
		case x.Machine:
			g.machine[x.Path] = true
		case x.KeepOrigin:
			g.exempt[x.Path] = false
		default:
			g.exempt[x.Path] = true
			g.origins.AddInsecureBypassPattern(x.Path) // cross-site by design
		}
	}
	return g
}

// knowRoutes records e's routes: call it once every route is added.
func (g *csrfGuard) knowRoutes(e *echo.Echo) {
	g.routed = map[string]bool{}
	for _, r := range e.Routes() {
		if r.Method != echo.RouteNotFound {
			g.routed[r.Method+" "+r.Path] = true
		}
	}
}

// unrouted: the router found no route (404) or not for this method (405,
// where Echo sets the Allow header's value).
func (g *csrfGuard) unrouted(c echo.Context) bool {
	return !g.routed[c.Request().Method+" "+c.Path()] || c.Get(echo.ContextKeyHeaderAllow) != nil
}

// csrfRenewAfter: a page request renews a secret's cookie sealed longer
// ago than this (same secret, so forms already open still post), so the
// cookie of someone active never lapses mid-session.
const csrfRenewAfter = time.Hour

// secret is the browser's secret, when its cookie is ours, and whether its
// cookie is due for renewal.
func (g *csrfGuard) secret(r *http.Request) (secret []byte, renew, ok bool) {
	value, ok := cookieValue(r, g.name)
	if !ok {
		return nil, false, false
	}
	secret, sealed, err := g.sealer.Open(make([]byte, 0, csrfSecretLen), g.name, value)
	if err != nil || len(secret) != csrfSecretLen {
		return nil, false, false
	}
	return secret, g.now().Sub(sealed) > csrfRenewAfter, true
}

// mask is a form token for secret: a fresh pad, then the secret XOR the pad.
func mask(secret []byte) string {
	b := make([]byte, 2*csrfSecretLen)
	_, _ = rand.Read(b[:csrfSecretLen]) // crypto/rand.Read never fails (Go 1.24+)
	for i := range csrfSecretLen {
		b[csrfSecretLen+i] = b[i] ^ secret[i]
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// matches reports whether token unmasks to secret.
func matches(token string, secret []byte) bool {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) != 2*csrfSecretLen {
		return false
	}
	got := make([]byte, csrfSecretLen)
	for i := range csrfSecretLen {
		got[i] = b[i] ^ b[csrfSecretLen+i]
	}
	return subtle.ConstantTimeCompare(got, secret) == 1
}

// middleware issues the token to every page and checks it on every
// state-changing request. Route, method and size are answered first, for
// what they are (404, 405, 413); probes and static files get no cookie.
func (g *csrfGuard) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if noSession(req.URL.Path) || g.machine[req.URL.Path] || underAPI(g.apis, req.URL.Path) || g.unrouted(c) {
			return next(c)
		}
		if err := readForm(req); err != nil {
			return err
		}
		secret, renew, ok := g.secret(req)
		if !ok {
			secret = make([]byte, csrfSecretLen)
			_, _ = rand.Read(secret)
		}
		if !ok || (renew && safeMethod(req.Method)) {
			c.SetCookie(g.cookie(g.sealer.Seal(g.name, secret), int(csrfCookieAge/time.Second)))
		}
		c.Set(ctxCSRFSecret, secret) // masked only for a page that shows a form
		both, exempt := g.exempt[req.URL.Path]
		if safeMethod(req.Method) || (exempt && both) {
			return next(c)
		}
		if err := g.origins.Check(req); err != nil {
			return csrfError{status: http.StatusForbidden}
		}
		if exempt {
			return next(c) // a sealed one-time value of the way in's is the proof
		}
		token := req.PostForm.Get(csrfField)
		switch {
		case token == "":
			return csrfError{status: http.StatusBadRequest}
		case !ok || !matches(token, secret):
			return csrfError{status: http.StatusForbidden}
		}
		return next(c)
	}
}

// rotate drops the browser's secret (after sign-in, as the session is
// replaced): tokens issued before no longer pass.
func (g *csrfGuard) rotate(c echo.Context) { c.SetCookie(g.cookie("", -1)) }

func (g *csrfGuard) cookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: g.name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, Secure: g.secure, SameSite: http.SameSiteLaxMode}
}

func safeMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// readForm reads a state-changing request's form before the token check,
// so a body over the limit is a 413 and an unreadable form a 400, not a
// "missing token". The handler reads the parsed form later.
func readForm(r *http.Request) error {
	if safeMethod(r.Method) {
		return nil
	}
	var err error
	if strings.HasPrefix(r.Header.Get(echo.HeaderContentType), echo.MIMEMultipartForm) {
		err = r.ParseMultipartForm(1 << 20)
	} else {
		err = r.ParseForm()
	}
	var he *echo.HTTPError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge:
		return he
	}
	return echo.NewHTTPError(http.StatusBadRequest, "the form could not be read")
}

// noSession reports paths that machines and caches fetch: they set no
// cookie and take no anti-forgery token (all GET routes).
func noSession(path string) bool {
	switch path {
	case "/healthz", "/readyz", "/metrics":
		return true
	}
	return strings.HasPrefix(path, "/static/")
}

// underAPI reports a path at or below one of the prefixes of the APIs
// ways in serve (wayin.Exemption.API): the API authenticates its clients itself.
func underAPI(prefixes []string, path string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// formTokenRE finds the first form's token in a page as the views render it.
var formTokenRE = regexp.MustCompile(`name="` + csrfField + `" value="([^"]+)"`)

// FormToken is the anti-forgery token of the first form in an HTML page,
// for a client that scripts the pages (the load tool, tests); "" when the
// page has none.
func FormToken(page []byte) string {
	if m := formTokenRE.FindSubmatch(page); m != nil {
		return string(m[1])
	}
	return ""
}
