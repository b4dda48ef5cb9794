package handlers

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// Arriving without a way in of its own: deep links (/open) and
// set-password links.

// open is a deep link, GET /open?return_to=P: signed in, the launch of
// POST /launch; signed out, the sign-in page, which continues here.
func (h *server) open(c echo.Context) error {
	in, err := h.sessions.current(c.Request().Context(), c.Request(), c.Response())
	switch {
	case err == nil:
		c.Set(ctxAccount, in.Account)
		c.Set(ctxSessionID, in.SessionID)
		return h.launchTo(c, in.Account, c.QueryParam("return_to"))
	case errors.Is(err, errNoSession), errors.Is(err, errSessionExpired):
		if errors.Is(err, errSessionExpired) {
			h.sessions.clear(c.Response())
		}
		noStore(c) // the headers of POST /launch's 303
		return c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(c.Request().URL.RequestURI()))
	default:
		return err
	}
}

// signIn replaces the browser's session with a new one for acct and
// records the sign-in; how says which way in it came, f how it began (the
// portal's handoff, a way in without authority over the admin role: such
// sessions open no console).
func (h *server) signIn(c echo.Context, acct store.Account, how string, f sessionFlags) error {
	sid, err := h.sessions.start(c.Request().Context(), c.Request(), c.Response(), acct, f)
	if err != nil {
		return err
	}
	h.csrf.rotate(c)
	c.Set(ctxAccount, acct)
	c.Set(ctxSessionID, sid) // the launch that may follow is this session's
	h.audit(c, store.Event{Kind: store.KindLogin, AccountID: acct.ID, Email: acct.Email, Outcome: "ok", Detail: how})
	h.Metrics.Login("ok")
	return nil
}

// setPasswordPage shows the form of a set-password link.
func (h *server) setPasswordPage(c echo.Context) error {
	noStore(c)
	token := c.QueryParam("token")
	acct, err := h.signin.LinkAccount(c.Request().Context(), token)
	if errors.Is(err, signin.ErrLinkGone) {
		return h.render(c, http.StatusGone, views.SetPassword(h.page(c, locale.Msg("Set your password")), views.SetPasswordForm{Gone: true}))
	}
	if err != nil {
		return err
	}
	switchBack(c, accounts.SetPasswordPath(token)) // the link is valid: the form holds its token anyway
	return h.render(c, http.StatusOK, views.SetPassword(h.page(c, locale.Msg("Set your password")), views.SetPasswordForm{Token: token, Email: acct.Email}))
}

// setPassword sets the password of a link's account (signin's rules), and
// signs the browser in: the new password ended the account's sessions,
// its launches end too.
func (h *server) setPassword(c echo.Context) error {
	noStore(c)
	ctx := c.Request().Context()
	token := c.FormValue("token")
	page := func(status int, f views.SetPasswordForm) error {
		return h.render(c, status, views.SetPassword(h.page(c, locale.Msg("Set your password")), f))
	}
	acct, err := h.signin.SetPasswordByLink(ctx, token, c.FormValue("password"), c.FormValue("confirm"))
	var refused *signin.RefusedPasswordError
	switch {
	case errors.Is(err, signin.ErrLinkGone):
		return page(http.StatusGone, views.SetPasswordForm{Gone: true})
	case errors.As(err, &refused):
		return page(http.StatusBadRequest, views.SetPasswordForm{Token: token, Email: acct.Email, Error: refusedPassword(locale.From(ctx), refused)})
	case errors.Is(err, signin.ErrDisabled):
		return launchError{launch.ErrAccountDisabled}
	case err != nil:
		return err
	}
	h.endLaunches(acct.ID, "")
	if err := h.signIn(c, acct, "set-password link", sessionFlags{}); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/")
}

// noStore keeps a page that carries a one-time token out of caches and
// its URL out of Referer headers.
func noStore(c echo.Context) {
	hd := c.Response().Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("Referrer-Policy", "no-referrer")
}

// refusedPassword says why a new password is refused, in the person's
// language.
func refusedPassword(l *locale.Localizer, refused *signin.RefusedPasswordError) string {
	switch {
	case errors.Is(refused, signin.ErrPasswordsDiffer):
		return l.T("The two passwords differ.")
	case errors.Is(refused, passhash.ErrPasswordTooShort):
		return l.N("A password needs at least {{.Count}} character.", "A password needs at least {{.Count}} characters.", passhash.MinPasswordLength)
	case errors.Is(refused, passhash.ErrPasswordTooLong):
		return l.T("A password is limited to 1024 bytes.")
	case errors.Is(refused, passhash.ErrPasswordBlank):
		return l.T("A password cannot be only spaces.")
	case errors.Is(refused, passhash.ErrPasswordTooCommon):
		return l.T("This password is one of the most common ones, which are guessed first. Choose another: a few unrelated words make a good one.")
	}
	return l.T("This password cannot be used. Choose another.")
}
