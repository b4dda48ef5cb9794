package handlers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/launch/waitline"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/store"
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
			d.LastLaunch = link.LastLaunchAt.In(h.zone())
		}
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	return h.render(c, http.StatusOK, views.HomePage(h.page(c, locale.Msg("Home")), d))
}

// launch is "Open video editor": a 303 to the platform's exchange URL.
func (h *server) launch(c echo.Context) error {
	acct, _ := account(c)
	return h.launchTo(c, acct, c.FormValue("return_to"))
}

// launchTo launches acct to returnTo: a 303 to the exchange URL, kept out
// of caches and Referer (every way in ends here: the form, /open, /sso/jwt).
func (h *server) launchTo(c echo.Context, acct store.Account, returnTo string) error {
	// The launch's bound within its request (the line bounds a launch
	// that waits in it by platform.max_wait, from its arrival).
	ctx, cancel := context.WithTimeout(c.Request().Context(), h.LaunchTimeout)
	defer cancel()
	if h.Line != nil {
		session, _ := c.Get(ctxSessionID).(string)
		var a waitline.Answer
		var err error
		if since := h.placeKept(c, acct); !since.IsZero() {
			a, err = h.Line.Rejoin(ctx, acct, session, returnTo, requestID(c), since)
		} else {
			a, err = h.Line.Join(ctx, acct, session, returnTo, requestID(c))
		}
		if errors.Is(err, waitline.ErrLaunchedElsewhere) {
			// A double click or a second tab: the first answer took the
			// editor; this one goes to the start page.
			noStore(c)
			return c.Redirect(http.StatusSeeOther, "/")
		}
		return h.lineAnswer(c, acct, a, err)
	}
	res, err := h.Launcher.Launch(ctx, acct, returnTo, requestID(c))
	if err != nil {
		return launchError{err}
	}
	return h.toExchange(c, acct, res, res.ExchangeURL)
}

// toExchange is the 303 to the exchange URL that ends a launch.
func (h *server) toExchange(c echo.Context, acct store.Account, res launch.Result, exchangeURL string) error {
	c.Set(ctxLaunched, launched{account: acct.ID, path: res.Path, calls: res.PlatformCalls}) // for the request's log line
	hd := c.Response().Header()
	hd["Cache-Control"] = []string{"no-store"}
	// The exchange URL holds the one-time token: keep it out of Referer.
	hd["Referrer-Policy"] = []string{"no-referrer"}
	return c.Redirect(http.StatusSeeOther, exchangeURL)
}

// launchWait is a waiting user's refresh, GET /launch/wait/:ticket: the
// editor once the launch is done, the waiting page until then.
func (h *server) launchWait(c echo.Context) error {
	if h.Line == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	acct, _ := account(c)
	session, _ := c.Get(ctxSessionID).(string)
	a, err := h.Line.Check(c.Request().Context(), c.Param("ticket"), acct.ID, session)
	if errors.Is(err, waitline.ErrTicketGone) {
		// Used already (a second tab), expired, or not this session's:
		// the start page has "Open video editor".
		noStore(c)
		return c.Redirect(http.StatusSeeOther, "/")
	}
	return h.lineAnswer(c, acct, a, err)
}

// lineAnswer answers a launch through the line: the editor, or the
// waiting page, which reloads itself (Refresh header and meta refresh, no
// JavaScript needed) at most every few seconds.
func (h *server) lineAnswer(c echo.Context, acct store.Account, a waitline.Answer, err error) error {
	if err != nil {
		h.keepPlace(c, acct, err)
		return launchError{err}
	}
	if a.Done() {
		return h.toExchange(c, acct, a.Result, a.ExchangeURL)
	}
	noStore(c)
	if wait := "/launch/wait/" + a.Ticket; c.Request().URL.Path != wait {
		// The first answer of a launch that must wait is the waiting
		// page's own address: reloading it, going back to it or opening
		// it in a second tab shows the same place in line, never the
		// request that made it again (a handoff's spent token, an LMS's
		// used launch, a form posted twice).
		return c.Redirect(http.StatusSeeOther, wait)
	}
	secs, every := waitTiming(a)
	still := c.QueryParam("still") != ""
	p := h.page(c, locale.Msg("Opening the video editor"))
	p.Script = waitScript
	if !still {
		p.Refresh = fmt.Sprintf("%d;url=/launch/wait/%s", every, a.Ticket)
	}
	// The page's script checks the line in place (wait.js): the one page
	// that runs a script, from this site only.
	hd := c.Response().Header()
	hd["Content-Security-Policy"] = []string{strings.Replace(hd.Get("Content-Security-Policy"), "default-src 'none';", "default-src 'none'; script-src 'self'; connect-src 'self';", 1)}
	return h.render(c, http.StatusOK, views.LaunchWaiting(p, views.LaunchWait{
		Seconds: secs, WaitedSecs: int(a.Waited / time.Second), Next: "/launch/wait/" + a.Ticket, Still: still, Every: every}))
}

// waitScript is the waiting page's script.
const waitScript = "/static/wait.js"

// waitStatus is what the waiting page's script reads.
type waitStatus struct {
	Ready   bool   `json:"ready"`            // load Next: the editor, or the launch's page
	Say     string `json:"say,omitempty"`    // the estimate, as the page shows it
	Waited  int    `json:"waited,omitempty"` // seconds since the person arrived
	Total   int    `json:"total,omitempty"`  // waited + the estimate
	EveryMS int    `json:"every,omitempty"`  // when to check again
}

// launchWaitStatus is GET /launch/wait/:ticket/status: the line as the
// waiting page's script reads it, without using the ticket up (Peek).
// Anything but "still waiting" answers ready: loading the page then shows
// the editor, the launch's failure, or the start page.
func (h *server) launchWaitStatus(c echo.Context) error {
	if h.Line == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	noStore(c)
	acct, _ := account(c)
	session, _ := c.Get(ctxSessionID).(string)
	a, err := h.Line.Peek(c.Request().Context(), c.Param("ticket"), acct.ID, session)
	if err != nil || a.Ready {
		return c.JSON(http.StatusOK, waitStatus{Ready: true})
	}
	secs, every := waitTiming(a)
	waited := int(a.Waited / time.Second)
	return c.JSON(http.StatusOK, waitStatus{Say: views.WaitEstimate(locale.From(c.Request().Context()), secs), Waited: waited, Total: waited + secs, EveryMS: every * 1000})
}

// waitTiming is a waiting launch's estimate in whole seconds (at least 1)
// and how often its page looks again: half the estimate, 1 to maxRefresh
// seconds.
func waitTiming(a waitline.Answer) (secs, every int) {
	secs = max(1, int(math.Ceil(a.Wait.Seconds())))
	return secs, min(max(1, secs/2), maxRefresh)
}

// maxRefresh bounds the waiting page's refresh, in seconds: a turn that
// comes sooner than estimated is not kept waiting for long.
const maxRefresh = 5

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
