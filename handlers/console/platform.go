package console

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// Platform is the Partner API as the admin console and /readyz see it, in
// the handlers' own terms (app adapts the API client to it).
type Platform interface {
	// Connection says what the bridge connects to; never the secret.
	Connection() Connection
	// Check makes one diagnostic call.
	Check(ctx context.Context) CheckReport
	// ListUsers fetches one page (1-based) of the platform's users.
	ListUsers(ctx context.Context, query string, page, size int) (UserPage, error)
}

// Connection describes the Instance connection.
type Connection struct {
	BaseURL string
	// ExchangeURL is where browsers take login tokens (the template, as
	// configured); it may be on another host, which the page's CSP allows.
	ExchangeURL string
	Embedded    bool   // the built-in emulator
	Method      string // hmac | simple
	Scheme      string // the Authorization scheme sent
	KeyID       string // the API key; empty for the simple method
}

// CheckReport is one diagnosis of the connection.
type CheckReport struct {
	Verdict string   // "ok" or a failure class
	Summary string   // one line: what happened
	Advice  []string // what to do, in order
	URL     string   // the URL called (holds no secret)
	Status  int      // HTTP status; 0 when there was no answer
	Latency time.Duration
	Clock   string // how the platform's clock stands to ours; empty if unknown
	Err     error  // nil when OK; classified with launch.Classify
}

// OK reports whether the connection works.
func (r CheckReport) OK() bool { return r.Err == nil }

// PlatformUser is one user of the platform.
type PlatformUser struct {
	ID, FirstName, LastName, Email string
}

// UserPage is one page of the platform's users.
type UserPage struct {
	Users []PlatformUser
	Total int // matching users on every page
}

// Provisioning runs the console's background provisioning of every
// unlinked account (provision.Jobs).
type Provisioning interface {
	// Start starts a job; accounts.ErrJobRunning while one runs.
	Start(ctx context.Context, startedBy string) error
	Latest(ctx context.Context) (store.ProvisionJob, error)
}

func (h *Console) connection() views.Connection {
	c := h.Platform.Connection()
	key := c.KeyID
	if key == "" {
		key = "(none: simple method)"
	}
	return views.Connection{BaseURL: c.BaseURL, Embedded: c.Embedded, Method: c.Method, Scheme: c.Scheme, KeyID: key}
}

func (h *Console) connectionPage(c echo.Context) error {
	return h.k.Render(c, http.StatusOK, views.ConnectionPage(h.k.Page(c, "Connection"), h.connection()))
}

func (h *Console) connectionCheck(c echo.Context) error {
	r := h.Platform.Check(c.Request().Context())
	h.adminAudit(c, "connection check: "+r.Verdict, "")
	d := h.connection()
	d.Result = checkView(r)
	return h.k.Render(c, http.StatusOK, views.ConnectionPage(h.k.Page(c, "Connection"), d))
}

func checkView(r CheckReport) *views.CheckView {
	v := &views.CheckView{OK: r.OK(), Verdict: r.Verdict, Summary: r.Summary, Advice: r.Advice, URL: r.URL,
		Latency: r.Latency.Round(100 * time.Microsecond).String(), Clock: r.Clock}
	if r.Status != 0 {
		v.Status = strconv.Itoa(r.Status)
	}
	return v
}

func (h *Console) platformUsersPage(c echo.Context) error {
	ctx := c.Request().Context()
	page := pageParam(c)
	d := views.PlatformUsersPage{Query: consoleQuery(c, "q")}
	// One platform call per page view: the admin pages, the bridge never loops.
	p, err := h.Platform.ListUsers(ctx, d.Query, page, PlatformUsersPerPage)
	if err != nil {
		d.Error = "The platform did not list its users: " + err.Error()
		return h.k.Render(c, http.StatusBadGateway, views.PlatformUsers(h.k.Page(c, "Platform users"), d))
	}
	ids := make([]string, len(p.Users))
	for i, u := range p.Users {
		ids[i] = u.ID
	}
	linked, err := h.Store.Links.ListLinks(ctx, ids)
	if err != nil {
		return err
	}
	for _, u := range p.Users {
		row := views.PlatformUserRow{UserID: u.ID, Name: strings.TrimSpace(u.FirstName + " " + u.LastName), Email: u.Email}
		if aid, ok := linked[u.ID]; ok {
			if a, err := h.Store.Accounts.AccountByID(ctx, aid); err == nil {
				row.LinkedTo = a.Email
				row.AddressDiffers = !mailaddr.Equal(a.Email, u.Email)
			}
		}
		d.Rows = append(d.Rows, row)
	}
	d.Pager = makePager(c, page, p.Total, PlatformUsersPerPage)
	return h.k.Render(c, http.StatusOK, views.PlatformUsers(h.k.Page(c, "Platform users"), d))
}
