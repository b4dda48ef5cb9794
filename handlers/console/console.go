// Package console is the partner admin's console: the Instance
// connection and its check, the local accounts (their ways in, sessions,
// bans, set-password links and a CSV import), the platform's users, the
// audit log, the sign-in bans and the provisioning job. The web kernel
// (package handlers) guards its routes (a signed-in partner admin, in
// English, both anti-forgery guards) and lends it the page frame, the
// audit and who is signed in (Kernel).
package console

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// Kernel is what the console needs of the web kernel, which guards its
// routes (a signed-in partner admin, in English, both anti-forgery
// guards) and serves it.
type Kernel interface {
	// Page is the layout's fields of a console page titled title (shown
	// as it is: the console is English).
	Page(c echo.Context, title string) views.Page
	// Render answers comp whole (rendered first: a failure never leaves
	// half a page).
	Render(c echo.Context, status int, comp templ.Component) error
	// Audit records an event with the request's id and client address.
	Audit(c echo.Context, e store.Event)
	// Actor is the signed-in admin; SessionID the session of this device.
	Actor(c echo.Context) store.Account
	SessionID(c echo.Context) string
	// BaseURL is how browsers reach the bridge, for the links the console
	// hands out (a set-password link).
	BaseURL(c echo.Context) string
	// EndLaunches stops the launches in flight of an account's ended
	// session ("": of all its sessions).
	EndLaunches(accountID int64, session string)
	// NoStore keeps a page that shows a one-time value out of caches.
	NoStore(c echo.Context)
}

// Passwords set local passwords by the sign-in's rules (signin.Service).
type Passwords interface {
	NewPasswordHash(ctx context.Context, password string) (string, error)
	SetPassword(ctx context.Context, acct store.Account, password string) error
}

// Store is the store as the console reads and changes it.
type Store struct {
	Accounts interface {
		CreateAccount(ctx context.Context, n store.NewAccount) (store.Account, error)
		CreateAccounts(ctx context.Context, ns []store.NewAccount) error
		AccountByEmail(ctx context.Context, email string) (store.Account, error)
		AccountByID(ctx context.Context, id int64) (store.Account, error)
		ListAccounts(ctx context.Context, f store.AccountFilter) ([]store.Account, int, error)
		SetDisabled(ctx context.Context, id int64, disabled bool) error
		SetAdmin(ctx context.Context, id int64, admin bool) error
		ListBans(ctx context.Context, now time.Time) ([]store.Ban, error)
		LiftBans(ctx context.Context, email, ip string) (int, error)
	}
	Sessions interface {
		EndSession(ctx context.Context, accountID int64, id string) error
		EndSessions(ctx context.Context, id int64) error
		ListSessions(ctx context.Context, accountID int64) ([]store.Session, error)
	}
	Links interface {
		LinkFor(ctx context.Context, accountID int64) (store.Link, error)
		DeleteLink(ctx context.Context, accountID int64, platformUserID string) error
		ListLinks(ctx context.Context, platformUserIDs []string) (map[string]int64, error)
		CountLinks(ctx context.Context) (linked, unlinked int, err error)
	}
	Audit interface {
		ListEvents(ctx context.Context, f store.AuditFilter) ([]store.Event, int, error)
	}
	OneTime interface {
		CreatePasswordLink(ctx context.Context, accountID int64, id string, expires time.Time) error
	}
	Identities interface {
		IdentitiesOf(ctx context.Context, accountID int64) ([]store.Identity, error)
	}
}

// Deps are what the console works with.
type Deps struct {
	Store     Store
	Passwords Passwords
	// Platform is the Partner API as the console sees it.
	Platform Platform
	// Provisioning, when set, is the background provisioning job.
	Provisioning Provisioning
	Now          func() time.Time
	// Zone is the time zone pages show times in (server.time_zone; nil:
	// UTC).
	Zone *time.Location
	// AuditRetention is how long the audit log keeps events (0: forever),
	// as the audit page says.
	AuditRetention time.Duration
}

// Console serves the partner admin's console.
type Console struct {
	Deps
	k Kernel
}

// New is the console of d, served by k.
func New(d Deps, k Kernel) *Console { return &Console{Deps: d, k: k} }

// timeLayout is how the console shows a time: in server.time_zone, with
// its abbreviation.
const timeLayout = "2006-01-02 15:04 MST"

// zone is the time zone pages show times in (server.time_zone).
func (h *Console) zone() *time.Location {
	if h.Zone == nil {
		return time.UTC
	}
	return h.Zone
}

// Page sizes of the console's lists.
const (
	AccountsPerPage      = 25
	PlatformUsersPerPage = 20
	auditPerPage         = 50
	// auditWindow bounds the audit page's search to the newest events: a
	// filter over a year's ten million read them all, past the store's
	// 2 s deadline; over this window it takes 11-94 ms on SQLite and
	// 39-80 ms on PostgreSQL.
	auditWindow = 250_000
)

// Mount adds the console's routes to g, the /admin group the kernel
// guards.
func (h *Console) Mount(g *echo.Group) {
	g.GET("", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/admin/connection") })
	g.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/admin/connection") })
	g.GET("/connection", h.connectionPage)
	g.POST("/connection/check", h.connectionCheck)
	g.GET("/accounts", h.accountsPage)
	g.POST("/accounts", h.createAccount)
	g.POST("/accounts/import", h.importAccounts)
	g.GET("/accounts/:id", h.accountPage)
	g.POST("/accounts/:id/:action", h.accountAction)
	g.GET("/accounts/:id/sessions", h.sessionsPage)
	g.POST("/accounts/:id/sessions/:sid/end", h.endSession)
	g.GET("/platform-users", h.platformUsersPage)
	g.GET("/audit", h.auditPage)
	g.GET("/bans", h.bansPage)
	g.POST("/bans/lift", h.liftBan)
	g.GET("/provisioning", h.provisioningPage)
	g.POST("/provisioning/start", h.provisioningStart)
}

// adminAudit records an admin action: who did it, what, to whom.
func (h *Console) adminAudit(c echo.Context, what, target string) {
	actor := h.k.Actor(c)
	detail := what
	if target != "" {
		detail += ": " + target
	}
	h.k.Audit(c, store.Event{Kind: store.KindAdmin, AccountID: actor.ID, Email: actor.Email, Outcome: "ok", Detail: detail})
}

// pageParam is the 1-based ?page=, defaulting to 1.
func pageParam(c echo.Context) int {
	p, err := strconv.Atoi(c.QueryParam("page"))
	if err != nil || p < 1 || p > 1_000_000 {
		return 1
	}
	return p
}

// makePager links the neighbouring pages, keeping the other query values.
func makePager(c echo.Context, page, total, per int) views.Pager {
	pages := max(1, (total+per-1)/per)
	pg := views.Pager{Page: page, Pages: pages, Total: total}
	link := func(n int) string {
		q := url.Values{}
		for k, v := range c.QueryParams() {
			q[k] = v
		}
		q.Set("page", strconv.Itoa(n))
		return c.Request().URL.Path + "?" + q.Encode()
	}
	if page > 1 {
		pg.PrevURL = link(min(page-1, pages))
	}
	if page < pages {
		pg.NextURL = link(page + 1)
	}
	return pg
}

// maxConsoleQuery bounds a console search or filter: an address at most.
// A longer one is cut, so a page never carries an outsider's megabyte
// back in its form and its links.
const maxConsoleQuery = 254

// consoleQuery is the query parameter name of a console page, trimmed and
// bounded (cut at a character's start).
func consoleQuery(c echo.Context, name string) string {
	q := strings.TrimSpace(c.QueryParam(name))
	if len(q) <= maxConsoleQuery {
		return q
	}
	i := maxConsoleQuery
	for i > 0 && !utf8.RuneStart(q[i]) {
		i--
	}
	return q[:i]
}

// shortID is a session id as the console names it: its first 12
// characters.
func shortID(sid string) string { return sid[:min(len(sid), 12)] }
