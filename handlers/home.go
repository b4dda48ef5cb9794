package handlers

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/views"
)

// home is the bridge's start page for a signed-in user: who they are,
// their link to the platform and "Open video editor". (The partner's
// portal is the partner's site, where users come from.)
func (h *server) home(c echo.Context) error {
	acct, _ := account(c)
	var d views.Home
	link, err := h.Store.Links.LinkFor(c.Request().Context(), acct.ID)
	switch {
	case err == nil:
		d.PlatformUserID = link.PlatformUserID
		if !link.LastLaunchAt.IsZero() {
			d.LastLaunch = link.LastLaunchAt.Local().Format("2 Jan 2006 15:04 MST")
		}
	case !errors.Is(err, accounts.ErrNotFound):
		return err
	}
	return h.render(c, http.StatusOK, views.HomePage(h.page(c, "Home"), d))
}

// launch is "Open video editor": a 303 to the platform's exchange URL.
func (h *server) launch(c echo.Context) error {
	acct, _ := account(c)
	return h.launchTo(c, acct, c.FormValue("return_to"))
}

// launchTo launches acct to returnTo: a 303 to the exchange URL, kept out
// of caches and Referer (every way in ends here: the form, /open, /sso/jwt).
func (h *server) launchTo(c echo.Context, acct accounts.Account, returnTo string) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), h.LaunchTimeout)
	defer cancel()
	res, err := h.Launcher.Launch(ctx, acct, returnTo, requestID(c))
	if err != nil {
		return launchError{err}
	}
	c.Set(ctxLaunched, launched{account: acct.ID, path: res.Path, calls: res.PlatformCalls}) // for the request's log line
	hd := c.Response().Header()
	hd["Cache-Control"] = []string{"no-store"}
	// The exchange URL holds the one-time token: keep it out of Referer.
	hd["Referrer-Policy"] = []string{"no-referrer"}
	return c.Redirect(http.StatusSeeOther, res.ExchangeURL)
}

// launched is what the request's log line tells of a launch that
// succeeded (never its exchange URL: it holds the token).
type launched struct {
	account int64
	path    launch.Path
	calls   int
}

// ctxLaunched holds the request's launched.
const ctxLaunched = "launched"

// launchError marks an error of the launch use-case for the error page.
type launchError struct{ err error }

func (e launchError) Error() string { return e.err.Error() }
func (e launchError) Unwrap() error { return e.err }
