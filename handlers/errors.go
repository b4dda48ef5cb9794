package handlers

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/internal/outside"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/launch/waitline"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// busyRetry is the Retry-After of the busy page.
const busyRetry = 5 * time.Second

// Errors the handlers raise for the error handler to render.
var (
	errInternal  = errors.New("internal error")
	errAdminOnly = errors.New("admins only")
)

// requestIDs gives every request an id of ours. Echo's RequestID
// middleware would adopt a client's X-Request-Id, and the id ends up in
// logs, the audit log and error pages, so a client must not choose it.
// The ids are a counter from a random start, mixed (splitmix64's
// finalizer, a bijection): unique within the process, unrelated across
// processes, and no system call per request, as 8 bytes from crypto/rand
// each were. They are names, not secrets.
type requestIDs struct{ n atomic.Uint64 }

func newRequestIDs() *requestIDs {
	var seed [8]byte
	_, _ = rand.Read(seed[:]) // crypto/rand.Read never fails (Go 1.24+)
	ids := &requestIDs{}
	ids.n.Store(binary.LittleEndian.Uint64(seed[:]))
	return ids
}

func (ids *requestIDs) next() string {
	z := ids.n.Add(1)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], z)
	return hex.EncodeToString(b[:])
}

func (ids *requestIDs) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header()[echo.HeaderXRequestID] = []string{ids.next()}
		return next(c)
	}
}

func requestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}

// page fills the layout's fields.
func (h *server) page(c echo.Context, title locale.ID) views.Page {
	return h.pageTitled(c, locale.From(c.Request().Context()).T(title))
}

// pageTitled is page with a title shown as it is, never translated nor
// read as a message's template (an account's address, a status text).
func (h *server) pageTitled(c echo.Context, title string) views.Page {
	p := views.Page{Title: title, ConsolePages: h.consolePages, Contact: h.ContactName, ContactURL: h.ContactURL}
	if p.Contact == "" {
		p.Contact = locale.From(c.Request().Context()).T("your IT help desk")
	}
	if secret, ok := c.Get(ctxCSRFSecret).([]byte); ok {
		p.CSRF = mask(secret)
	}
	p.Home, p.FromHome = h.Home, true
	if a, ok := account(c); ok {
		p.User = &views.User{Name: a.Name(), Email: a.Email, Admin: a.Admin}
		handoff, _ := c.Get(ctxHandoff).(bool)
		p.FromHome = handoff
	}
	return p
}

// render writes a component into a buffer first, so a failure mid-render
// never leaves a half-written page.
func (h *server) render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// errorPage picks the page and status for err.
func (h *server) errorPage(c echo.Context, err error) (int, func(views.Page, views.ErrorInfo) templ.Component, views.ErrorInfo) {
	info := views.ErrorInfo{RequestID: requestID(c)}
	var ce csrfError
	var he *echo.HTTPError
	var le launchError
	var rf *wayin.Refusal
	if errors.As(err, &rf) {
		if rf.Status != 0 {
			ri := rf.Info
			ri.RequestID, ri.Detail = info.RequestID, outside.Trim(ri.Detail, maxReason)
			return rf.Status, views.Refused, ri
		}
		err = rf.Err                   // of no kind of the refusal set (the store's, say): its own page
		info.WayBack = rf.Info.WayBack // with the way in's way back, if it has one
	}
	var ae admissionError
	if errors.As(err, &ae) {
		return admissionPage(ae, info)
	}
	switch {
	case errors.As(err, &ce):
		info.Status = ce.status
		return ce.status, views.CSRFFailed, info
	case errors.Is(err, errSessionExpired):
		info.SignIn = true
		return http.StatusUnauthorized, views.SessionExpired, info
	case errors.Is(err, errAdminOnly):
		return http.StatusForbidden, views.Forbidden, info
	case errors.Is(err, wayin.ErrHoldGone):
		info.Detail, info.Refusal = err.Error(), views.RefusedBadState
		return http.StatusBadRequest, views.Refused, info
	case errors.Is(err, passhash.ErrBusy), errors.Is(err, store.ErrBusy), errors.Is(err, store.ErrStoreBusy):
		info.RetryAfter = int(busyRetry / time.Second)
		info.Detail = err.Error() // says which: hashing slots or the database lock; no secret
		return http.StatusServiceUnavailable, views.Busy, info
	case errors.Is(err, store.ErrUnavailable):
		info.RetryAfter = int(busyRetry / time.Second)
		info.Detail = err.Error() // the cause, for an admin; the DSN is never in it
		info.Handoff = c.Path() == "/sso/jwt"
		return http.StatusServiceUnavailable, views.StoreUnavailable, info
	case errors.As(err, new(*waitline.TooBusyError)):
		var tb *waitline.TooBusyError
		errors.As(err, &tb)
		info.RetryAfter = int(math.Ceil(tb.RetryAfter.Seconds()))
		if !tb.Since.IsZero() {
			info.PlaceKept = int((tb.RetryAfter + placeGrace) / time.Minute) // keepPlace keeps it
		}
		return http.StatusServiceUnavailable, views.PlatformBusy, info
	case errors.As(err, &le):
		return launchPage(le.err, info)
	case errors.As(err, &he):
		switch he.Code {
		case http.StatusNotFound:
			return he.Code, views.NotFound, info
		case http.StatusMethodNotAllowed, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
			if msg, ok := he.Message.(string); ok {
				info.Detail = msg
			}
			return he.Code, views.BadRequest, info
		}
		if he.Code < 500 {
			return he.Code, views.BadRequest, info
		}
	}
	return http.StatusInternalServerError, views.InternalError, info
}

// launchPage maps a launch failure to its page. The platform's refusals
// are the bridge's upstream problems (502); overload and outages are 503,
// timeouts 504, with Retry-After where the platform gave one.
func launchPage(err error, info views.ErrorInfo) (int, func(views.Page, views.ErrorInfo) templ.Component, views.ErrorInfo) {
	info.Detail = err.Error()
	f := launch.Explain(err)
	info.Endpoint = f.Endpoint
	switch f.Outcome {
	case launch.OutcomeInvalidInput:
		return http.StatusBadRequest, views.BadRequest, info
	case launch.OutcomeDisabled:
		info.Detail, info.ByIdP = "", errors.Is(err, store.ErrDisabledByIdP)
		return http.StatusForbidden, views.AccountDisabled, info
	case launch.OutcomeSessionEnded:
		info.Detail, info.SignIn = "", true
		return http.StatusUnauthorized, views.SessionExpired, info
	case launch.OutcomeStoreBusy, launch.OutcomeStoreDown:
		// Told again from a waiting launch's ticket (launch.Reported): the
		// store's own errors are matched before a launch's.
		info.RetryAfter = int(busyRetry / time.Second)
		if f.Outcome == launch.OutcomeStoreBusy {
			return http.StatusServiceUnavailable, views.Busy, info
		}
		return http.StatusServiceUnavailable, views.StoreUnavailable, info
	case launch.OutcomeForbidden:
		return http.StatusBadGateway, views.PlatformForbidden, info
	case launch.OutcomeClockSkew:
		info.ClockSkew = f.ClockSkew.Abs().Round(time.Second).String()
		return http.StatusBadGateway, views.PlatformClockSkew, info
	case launch.OutcomeUnauthorized:
		return http.StatusBadGateway, views.PlatformUnauthorized, info
	case launch.OutcomeRateLimited:
		info.RetryAfter = unavailableRetry
		if f.RetryAfter > 0 {
			info.RetryAfter = int(f.RetryAfter.Seconds() + 0.999)
		}
		return http.StatusServiceUnavailable, views.PlatformUnavailable, info
	case launch.OutcomeUnavailable:
		// Every 503 and 504 says when to come back, as its page does ("try
		// again in a minute").
		info.RetryAfter = unavailableRetry
		if f.Timeout {
			return http.StatusGatewayTimeout, views.PlatformUnavailable, info
		}
		return http.StatusServiceUnavailable, views.PlatformUnavailable, info
	case launch.OutcomeNotFound, launch.OutcomeBadRequest:
		return http.StatusBadGateway, views.PlatformMisconfigured, info
	}
	info.Detail = ""
	return http.StatusInternalServerError, views.InternalError, info
}

// unavailableRetry is the Retry-After (seconds) of a platform that is
// down or slow and said nothing of when to come back.
const unavailableRetry = 60

// errorClass names an error for the log line.
func errorClass(err error) string {
	if rf := (*wayin.Refusal)(nil); errors.As(err, &rf) {
		if rf.Status != 0 {
			return rf.Class
		}
		err = rf.Err
	}
	var le launchError
	var ce csrfError
	var he *echo.HTTPError
	switch {
	case errors.As(err, new(*waitline.TooBusyError)):
		return "platform_busy"
	case errors.As(err, &le):
		return launch.Classify(le.err)
	case errors.As(err, &ce):
		return "csrf"
	case errors.Is(err, errSessionExpired):
		return "session_expired"
	case errors.Is(err, errAdminOnly):
		return "admin_only"
	case errors.As(err, new(admissionError)):
		return "arrival_refused"
	case errors.Is(err, wayin.ErrHoldGone):
		return "grant_refused"
	case errors.Is(err, passhash.ErrBusy), errors.Is(err, store.ErrBusy), errors.Is(err, store.ErrStoreBusy):
		return "busy"
	case errors.Is(err, store.ErrUnavailable):
		return "store_unavailable"
	case errors.As(err, &he):
		return "http_" + strconv.Itoa(he.Code)
	}
	return "internal_error"
}

// handleError is Echo's error handler: every error becomes a page.
func (h *server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, page, info := h.errorPage(c, err)
	if status == http.StatusInternalServerError {
		h.Logger.Error("request failed", "err", err, "path", c.Request().URL.Path, "request_id", info.RequestID)
	}
	info.Status = status
	if info.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(info.RetryAfter))
	}
	if _, ok := account(c); !ok && !errors.Is(err, errSessionExpired) {
		// Routes without requireUser (no route, a refused form) still show
		// who is signed in, and an admin reads what admins read.
		if in, serr := h.sessions.current(c.Request().Context(), c.Request(), c.Response()); serr == nil {
			c.Set(ctxAccount, in.Account)
			c.Set(ctxHandoff, in.Handoff)
		}
	}
	if rerr := h.render(c, status, page(h.pageTitled(c, http.StatusText(status)), info)); rerr != nil {
		h.Logger.Error("error page failed", "err", rerr, "request_id", info.RequestID)
		_ = c.String(status, http.StatusText(status))
	}
}
