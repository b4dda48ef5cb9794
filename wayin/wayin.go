// Package wayin is the shape every way in has (the portal's handoff,
// OIDC, SAML, an LMS over LTI), and what the bridge lends each. A way in
// is one package: its protocol, its routes and flows, what /readyz says of
// it, its background refresh, the paths it exempts from the anti-forgery
// guards, and its button on the sign-in page. It turns what it verified
// into a signin.Arrival and hands it to the one admission through the Kit;
// it holds no account rule. Its package registers it as a Module (its
// configuration section, its sources, how it opens, what check says of
// it) in app's one list; handlers mounts each way the modules open.
package wayin

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// Way is one way in.
type Way interface {
	// Name is its key on /readyz and in logs ("portal", "idp", "saml",
	// "lti").
	Name() string
	// Mount adds its routes to r; k lends what every way in shares.
	Mount(r Router, k Kit)
	// Exempt lists its paths that arrive cross-site with a proof of their
	// own (a signed token, response or id_token).
	Exempt() []Exemption
	// Ready is nil while it can take arrivals (for /readyz).
	Ready(ctx context.Context) error
	// Essential: while Ready fails, the instance is unready (every
	// sign-in may need it); otherwise /readyz says "degraded".
	Essential() bool
	// Button is its button on the sign-in page for a sign-in that goes on
	// to next: the name the page shows ("Sign in with <name>", in the
	// person's language); "" when it has none.
	Button(next string) (name, href string)
	// Watch refreshes what it reads from elsewhere (metadata, keys) until
	// ctx ends; it returns at once when it reads nothing.
	Watch(ctx context.Context, logger *slog.Logger)
}

// Router is where a way in mounts its routes (an *echo.Echo).
type Router interface {
	GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
	POST(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
	// Any routes every method (an API's: SCIM's).
	Any(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) []*echo.Route
}

// Exemption is a path the anti-forgery guards pass: it arrives cross-site
// (a form the IdP's or the LMS's page posts) and its own proof protects
// it. KeepOrigin keeps the cross-origin check and waives only the token
// (a post from the bridge's own page inside another site's frame, where
// the anti-forgery cookie may be dropped).
type Exemption struct {
	Path       string
	KeepOrigin bool
	// Machine: a GET that machines fetch (metadata, a key set); the
	// bridge sets no cookie there.
	Machine bool
	// API: Path and every path below it are an API its clients
	// authenticate themselves (SCIM's bearer token), by any method: no
	// cookie, no anti-forgery check, and its own body limit.
	API bool
}

// Landing is how an arrival goes on once admitted.
type Landing struct {
	How      string // how the sign-in is recorded ("LTI: Canvas")
	Via      string // who vouches, for the switch page ("Canvas")
	Next     string // a local path to go to, unless Launch
	Launch   bool   // open the editor (at ReturnTo)
	ReturnTo string
	// Hold keeps the arrival for a later request of this browser instead
	// (the framed LTI page's new-tab button, which Resume completes):
	// Enter answers nothing and returns the held value. Hold and Handoff
	// say how Enter completes; they are not kept with a held arrival.
	Hold bool `json:"-"`
	// Handoff: a handoff from Home (the partner's portal), which asked
	// before it spent its token when another account was signed in: the
	// session starts at once, and is the handoff's (the console only as
	// Home allows).
	Handoff bool `json:"-"`
}

// Kit is what the bridge lends every way in: its ports, each small. A
// way keeps the ports it uses (samlsso: Admission, Arrivals, Pages).
type Kit interface {
	Admission
	Arrivals
	Pages
	Flows
	Sessions
	Admin
}

// Admission is the one admission, asked before an arrival.
type Admission interface {
	// Admissible tells, changing nothing, whether Enter would refuse a
	// now (a way that spends something first: the portal's token); a
	// refusal is recorded and comes back as Enter's would.
	Admissible(c echo.Context, a signin.Arrival) error
}

// Arrivals take what a way verified in: the one arrival call.
type Arrivals interface {
	// Enter runs the one admission on a and completes the arrival as l
	// says: the session starts and the person goes on (asked first when
	// another account is signed in in this browser), or, with l.Hold,
	// the arrival is kept and its held value returned (used once, within
	// 10 minutes, while the account's sessions stand). A refusal is
	// recorded (log, audit, metric) and comes back as the error that
	// renders its page.
	Enter(c echo.Context, a signin.Arrival, l Landing) (held string, err error)
	// Resume takes what Enter held and arrives; a value that no longer
	// holds is ErrHoldGone (wrapped, with why).
	Resume(c echo.Context, held string) error
}

// Pages are the bridge's pages and refusals.
type Pages interface {
	// Refuse records a refusal of this way in (one log line, msg, with
	// the reason; the audit, whose detail starts with source; the
	// metric) and returns r.
	Refuse(c echo.Context, msg, source, email string, r *Refusal) error
	// Render answers a page in the bridge's layout.
	Render(c echo.Context, status int, title locale.ID, body func(views.Page) templ.Component) error
	// BaseURL is how browsers reach the bridge (server.public_url, else
	// the address the connection reached; never the Host header).
	BaseURL(c echo.Context) string
}

// Flows are what a way's flows are kept with.
type Flows interface {
	// Sealer seals values of one purpose under a key of their own.
	Sealer(purpose string) Sealer
	// Secure: the bridge is on https (cookies Secure, __Host- names).
	Secure() bool
	// UseOnce records a single-use id on every instance (store.ErrUsed
	// the second time).
	UseOnce(ctx context.Context, kind, id string, until time.Time) error
	Now() time.Time
}

// Sessions are the browser's sessions, for a way that asks before it
// arrives (the portal's handoff, which asks before it spends its token).
type Sessions interface {
	// SignedIn is the account signed in in this browser, if any.
	SignedIn(c echo.Context) (store.Account, bool)
}

// Admin is the admin console, for a way that adds a page to it.
type Admin interface {
	// Console guards a page of the admin console a way in adds: a
	// signed-in partner admin only, in English, as every console page.
	Console(next echo.HandlerFunc) echo.HandlerFunc
	// Audit records an admin's action in the audit log (who is signed in).
	Audit(c echo.Context, detail string)
}

// ErrHoldGone: a held arrival that does not open, was used, expired, was
// offered to another browser, or whose account signed out everywhere,
// was disabled or removed since.
var ErrHoldGone = NewRefusal(views.RefusedBadState, "this sign-in can no longer be completed")

// Refusal is a way in's refusal as the bridge answers it: the status
// and what its page (of the family views.Refused) says. Status 0: Err is
// of no kind of the refusal set (the store's, say) and keeps its own
// page, with Info's way back.
type Refusal struct {
	Err    error
	Status int
	// Class names it in the request's log line ("lti_refused").
	Class string
	// Info is what the page says beyond the request id: the refusal's
	// kind and wording, the source's name, the detail, the way back.
	Info views.ErrorInfo
}

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// Sealer seals values as cookie or form values (AES-256-GCM under a key
// of the purpose's own, the name bound in).
type Sealer interface {
	SealJSON(name string, v any) (string, error)
	OpenJSON(name, value string, v any) error
}

// ownRequest reports whether the request comes from the bridge's own
// pages (or is typed or bookmarked), not from another site.
func ownRequest(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// NoStore keeps a page that carries a one-time value out of caches and
// its URL out of Referer headers.
func NoStore(c echo.Context) {
	hd := c.Response().Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("Referrer-Policy", "no-referrer")
}

// WithNext is path carrying where a sign-in continues, when that is not
// the start page.
func WithNext(path, next string) string {
	if next == "" || next == "/" {
		return path
	}
	return path + "?next=" + url.QueryEscape(next)
}
