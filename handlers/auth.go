package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/localpath"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// bannedMessage answers a sign-in while a ban holds: how long it lasts,
// in whole minutes rounded up, and nothing more.
func bannedMessage(l *locale.Localizer, left time.Duration) string {
	minutes := max(1, int((left+time.Minute-1)/time.Minute))
	return l.N("Too many failed sign-ins. Please try again in {{.Count}} minute.", "Too many failed sign-ins. Please try again in {{.Count}} minutes.", minutes)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func (h *server) loginPage(c echo.Context) error {
	next := localpath.SafeNext(c.QueryParam("next"))
	reauth := c.QueryParam("reauth") != ""
	in, err := h.sessions.current(c.Request().Context(), c.Request(), c.Response())
	if err == nil && !(reauth && (in.Handoff || in.NoConsole)) {
		return c.Redirect(http.StatusSeeOther, next)
	}
	f := h.loginForm(c, views.LoginForm{Next: next})
	switchBack(c, wayin.WithNext("/login", next))
	l := locale.From(c.Request().Context())
	switch {
	case reauth && err == nil && in.NoConsole && !in.Handoff:
		f.Notice = l.T("The way you arrived does not grant the admin role. To open the admin console, sign in here with your password.")
	case reauth:
		f.Notice = l.T("You arrived from your portal. To open the admin console, sign in here as well.")
	case c.QueryParam("expired") != "":
		f.Notice = l.T("Your session has ended. Please sign in again.")
	case c.QueryParam("signed_out") == "everywhere":
		f.Notice = l.T("You have been signed out on every device.")
	case c.QueryParam("signed_out") != "":
		f.Notice = l.T("You have been signed out.")
	}
	return h.render(c, http.StatusOK, views.Login(h.page(c, locale.Msg("Sign in")), f))
}

// loginForm adds the ways in's buttons to f and hides the password form
// when it is off (PasswordForm), unless /login?local=1 asks for it and
// that is allowed.
func (h *server) loginForm(c echo.Context, f views.LoginForm) views.LoginForm {
	for _, w := range h.Ways {
		if label, href := w.Button(f.Next); label != "" {
			f.Buttons = append(f.Buttons, views.SignInButton{ID: w.Name() + "-sign-in", Label: label, URL: href})
		}
	}
	if len(f.Buttons) == 0 {
		return f // no other way to sign in here: the form stays
	}
	f.HideLocal = !h.localLogin(c)
	f.Local = h.PasswordForm.Hidden && !f.HideLocal
	return f
}

// localLogin reports whether password sign-in is offered on this request.
func (h *server) localLogin(c echo.Context) bool {
	o := h.PasswordForm
	return !o.Hidden || (o.Fallback && (c.QueryParam("local") != "" || c.FormValue("local") != ""))
}

func (h *server) login(c echo.Context) error {
	ctx := c.Request().Context()
	if h.PasswordForm.Hidden && !h.PasswordForm.Fallback {
		return echo.NewHTTPError(http.StatusNotFound) // password sign-in is off: the identity provider only
	}
	email := strings.TrimSpace(c.FormValue("email"))
	password := c.FormValue("password")
	next := localpath.SafeNext(c.FormValue("next"))
	if email == "" || password == "" {
		return h.render(c, http.StatusBadRequest, views.Login(h.page(c, locale.Msg("Sign in")), h.loginForm(c, views.LoginForm{Email: email, Next: next, Error: locale.From(c.Request().Context()).T("Enter your email and password.")})))
	}
	email = truncate(email, 320) // counted and shown bounded; a longer one fails in the rules
	acct, err := h.signin.Password(ctx, email, password, c.RealIP())
	var banned *signin.BannedError
	var failed *signin.FailedError
	switch {
	case errors.As(err, &banned):
		// Refused even with the right password; says only when to come back.
		h.audit(c, store.Event{Kind: store.KindLogin, Email: truncate(email, signin.MaxEmail), Outcome: "banned", Detail: "too many failed sign-ins"})
		h.Logger.Warn("sign-in refused: banned", "email", truncate(email, signin.MaxEmail), "client_ip", c.RealIP(), "until", banned.Until.UTC(), "request_id", requestID(c))
		h.Metrics.Login("banned")
		left := banned.Until.Sub(h.Now())
		c.Response().Header().Set("Retry-After", strconv.Itoa(int((left+time.Second-1)/time.Second)))
		return h.render(c, http.StatusTooManyRequests, views.Login(h.page(c, locale.Msg("Sign in")), h.loginForm(c, views.LoginForm{Email: email, Next: next, Error: bannedMessage(locale.From(c.Request().Context()), left)})))
	case errors.As(err, &failed):
		return h.loginFailure(c, failed, email, next)
	case err != nil:
		return err
	}
	if err := h.signIn(c, acct, "", sessionFlags{}); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, next)
}

// loginFailure answers every failed sign-in the same way; the reason goes
// to the audit log and the server log (with the email and client IP, for
// whoever watches for attacks; never the password), not to the page.
func (h *server) loginFailure(c echo.Context, failed *signin.FailedError, email, next string) error {
	email = truncate(email, signin.MaxEmail)
	reason := failed.Reason
	h.Logger.Warn("sign-in failed", "email", email, "client_ip", c.RealIP(), "reason", reason, "request_id", requestID(c))
	if failed.BanStarted {
		reason += "; ban started"
		h.Logger.Warn("sign-in ban started: too many failed sign-ins", "email", email, "client_ip", c.RealIP(), "request_id", requestID(c))
	}
	h.audit(c, store.Event{Kind: store.KindLogin, AccountID: failed.AccountID, Email: email, Outcome: "failed", Detail: reason})
	h.Metrics.Login("failed")
	// One message for every failed sign-in: it does not tell whether the
	// email has an account.
	msg := locale.From(c.Request().Context()).T("Email or password is incorrect.")
	return h.render(c, http.StatusUnauthorized, views.Login(h.page(c, locale.Msg("Sign in")), h.loginForm(c, views.LoginForm{Email: email, Next: next, Error: msg})))
}

// logout ends this device's session: its record goes, so a copy of the
// cookie is void too; the account's other devices stay signed in.
func (h *server) logout(c echo.Context) error {
	ctx := c.Request().Context()
	if in, err := h.sessions.current(ctx, c.Request(), c.Response()); err == nil {
		if err := h.Store.Sessions.EndSession(ctx, in.ID, in.SessionID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		h.endLaunches(in.ID, in.SessionID)
		h.audit(c, store.Event{Kind: store.KindLogout, AccountID: in.ID, Email: in.Email, Outcome: "ok", Detail: "this device"})
	}
	h.sessions.clear(c.Response())
	return c.Redirect(http.StatusSeeOther, "/login?signed_out=1")
}

// logoutEverywhere ends every session of the signed-in account, on every
// device and instance.
func (h *server) logoutEverywhere(c echo.Context) error {
	acct, _ := account(c)
	if err := h.Store.Sessions.EndSessions(c.Request().Context(), acct.ID); err != nil {
		return err
	}
	h.endLaunches(acct.ID, "")
	h.audit(c, store.Event{Kind: store.KindLogout, AccountID: acct.ID, Email: acct.Email, Outcome: "ok", Detail: "every device"})
	h.sessions.clear(c.Response())
	return c.Redirect(http.StatusSeeOther, "/login?signed_out=everywhere")
}

// audit records an event; a failure is logged, not shown.
func (h *server) audit(c echo.Context, e store.Event) {
	e.RequestID = requestID(c)
	if err := h.Store.Audit.Record(c.Request().Context(), e); err != nil {
		h.Logger.Log(c.Request().Context(), store.FailureLevel(err), "audit write failed", "err", err, "request_id", e.RequestID)
	}
}
