package handlers

import (
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// consoleKernel is what the kernel lends the admin console
// (console.Kernel).
type consoleKernel struct{ h *server }

func (k consoleKernel) Page(c echo.Context, title string) views.Page { return k.h.pageTitled(c, title) }

func (k consoleKernel) Render(c echo.Context, status int, comp templ.Component) error {
	return k.h.render(c, status, comp)
}

func (k consoleKernel) Audit(c echo.Context, e store.Event) { k.h.audit(c, e) }

func (k consoleKernel) Actor(c echo.Context) store.Account {
	acct, _ := account(c)
	return acct
}

func (k consoleKernel) SessionID(c echo.Context) string {
	sid, _ := c.Get(ctxSessionID).(string)
	return sid
}

func (k consoleKernel) BaseURL(c echo.Context) string { return k.h.baseURL(c) }

func (k consoleKernel) EndLaunches(accountID int64, session string) {
	k.h.endLaunches(accountID, session)
}

func (k consoleKernel) NoStore(c echo.Context) { noStore(c) }

// endLaunches stops the launches in flight of the account's ended session
// ("": of all its sessions); the store dropped their tickets with them.
func (h *server) endLaunches(accountID int64, session string) {
	if h.Line != nil {
		h.Line.End(accountID, session)
	}
}

// baseURL is how browsers reach the bridge, for links it hands out.
func (h *server) baseURL(c echo.Context) string {
	if h.PublicURL != "" {
		return strings.TrimRight(h.PublicURL, "/")
	}
	// Never the request's Host or X-Forwarded-* headers: whoever sends the
	// request writes those. The address the connection reached is ours.
	if a, ok := c.Request().Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return "http://" + a.String()
	}
	return "http://localhost"
}

// zone is the time zone pages show times in (server.time_zone).
func (h *server) zone() *time.Location {
	if h.Zone == nil {
		return time.UTC
	}
	return h.Zone
}
