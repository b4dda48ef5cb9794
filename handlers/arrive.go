package handlers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/portal"
	"github.com/ssobridge/ssobridge/signin"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// The ways in from the partner's portal: deep links (/open), the signed
// JWT handoff (/sso/jwt), set-password links, and the demo's sample portal.

// errPortalRefused is a portal token that did not verify: the 401 page,
// which does not say why (the log does).
var errPortalRefused = errors.New("portal token refused")

// errPortalOtherAudience is a refused portal token made for another
// service: the page says so (no expiry or reuse to blame).
var errPortalOtherAudience = fmt.Errorf("%w: meant for another audience", errPortalRefused)

// PortalTokens verifies the portal's JWT handoff (portal.Verifier): Check
// makes every check but spending the token, Use spends it.
type PortalTokens interface {
	Check(token string) (portal.Claims, error)
	Use(ctx context.Context, c portal.Claims) error
}

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

// ssoJWT is the portal's handoff, GET /sso/jwt?jwt=T or POST (form jwt):
// a verified token signs its user in (creating the account on first use
// when allowed) and launches to the token's return_to. Every verification
// failure answers the same 401 page; the log and the audit say which.
func (h *server) ssoJWT(c echo.Context) error {
	return h.handoff(c, c.FormValue("jwt"), false)
}

// ssoJWTConfirm is POST /sso/jwt/confirm: a browser signed in as another
// account chose to switch to the portal link's (the page's form, with its
// anti-forgery token and from this site: not exempt from either guard).
func (h *server) ssoJWTConfirm(c echo.Context) error {
	return h.handoff(c, c.FormValue("jwt"), true)
}

// handoff signs in the user of a portal token and launches. A browser
// signed in as another account is asked first (switch), unless it
// confirmed; the same account, or nobody signed in, goes on at once.
func (h *server) handoff(c echo.Context, token string, confirmed bool) error {
	if h.PortalTokens == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	ctx := c.Request().Context()
	claims, err := h.PortalTokens.Check(token)
	if err != nil {
		return h.portalRefused(c, err)
	}
	if !confirmed {
		if in, err := h.sessions.current(ctx, c.Request(), c.Response()); err == nil && !mailaddr.Equal(claims.Email, in.Email) {
			// Following someone else's link must not switch this browser
			// silently (an admin's, even): ask. The token is not spent
			// until the answer.
			c.Set(ctxAccount, in.Account)
			noStore(c)
			c.Response().Header()["Referrer-Policy"] = []string{"no-referrer"}
			return h.render(c, http.StatusOK, views.HandoffSwitchPage(h.page(c, "Switch accounts?"),
				views.HandoffSwitch{SignedIn: in.Email, Arriving: claims.Email, Via: "The link from your portal", Action: "/sso/jwt/confirm", Field: "jwt", Token: token}))
		}
	}
	if err := h.PortalTokens.Use(ctx, claims); err != nil {
		return h.portalRefused(c, err)
	}
	acct, err := h.admit(c, signin.Arrival{Source: h.PortalSource, Subject: cmp.Or(claims.Subject, mailaddr.Key(claims.Email)), Email: claims.Email,
		Names: accounts.Names{Given: claims.GivenName, Family: claims.FamilyName}})
	var refused admissionError
	if errors.As(err, &refused) && errors.Is(err, signin.ErrNoAccount) {
		return errPortalRefused // as every refused token: the log and the audit say why
	}
	if err != nil {
		return err
	}
	if err := h.signIn(c, acct, signInHandoff); err != nil {
		return err
	}
	return h.launchTo(c, acct, claims.ReturnTo)
}

// portalRefused answers a portal token that did not verify (a refusal is
// logged and audited; another error is returned as it is).
func (h *server) portalRefused(c echo.Context, err error) error {
	if !errors.Is(err, portal.ErrRefused) {
		return err
	}
	h.Logger.Warn("portal token refused", "reason", err.Error(), "request_id", requestID(c))
	h.audit(c, store.Event{Kind: store.KindLogin, Outcome: "failed", Detail: truncate(err.Error(), 300)})
	h.Metrics.login("failed")
	if errors.Is(err, portal.ErrOtherAudience) {
		return errPortalOtherAudience
	}
	return errPortalRefused
}

// signInHandoff is how a sign-in by the portal's handoff is recorded.
const signInHandoff = "portal token"

// signIn replaces the browser's session with a new one for acct and
// records the sign-in; how says which way in it came.
func (h *server) signIn(c echo.Context, acct store.Account, how string) error {
	sid, err := h.sessions.start(c.Request().Context(), c.Request(), c.Response(), acct, how == signInHandoff)
	if err != nil {
		return err
	}
	h.csrf.rotate(c)
	c.Set(ctxAccount, acct)
	c.Set(ctxSessionID, sid) // the launch that may follow is this session's
	h.audit(c, store.Event{Kind: store.KindLogin, AccountID: acct.ID, Email: acct.Email, Outcome: "ok", Detail: how})
	h.Metrics.login("ok")
	return nil
}

// setPasswordPage shows the form of a set-password link.
func (h *server) setPasswordPage(c echo.Context) error {
	noStore(c)
	token := c.QueryParam("token")
	acct, err := h.signin.LinkAccount(c.Request().Context(), token)
	if errors.Is(err, signin.ErrLinkGone) {
		return h.render(c, http.StatusGone, views.SetPassword(h.page(c, "Set your password"), views.SetPasswordForm{Gone: true}))
	}
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, views.SetPassword(h.page(c, "Set your password"), views.SetPasswordForm{Token: token, Email: acct.Email}))
}

// setPassword sets the password of a link's account (signin's rules), and
// signs the browser in: the new password ended the account's sessions,
// its launches end too.
func (h *server) setPassword(c echo.Context) error {
	noStore(c)
	ctx := c.Request().Context()
	token := c.FormValue("token")
	page := func(status int, f views.SetPasswordForm) error {
		return h.render(c, status, views.SetPassword(h.page(c, "Set your password"), f))
	}
	acct, err := h.signin.SetPasswordByLink(ctx, token, c.FormValue("password"), c.FormValue("confirm"))
	var refused *signin.RefusedPasswordError
	switch {
	case errors.Is(err, signin.ErrLinkGone):
		return page(http.StatusGone, views.SetPasswordForm{Gone: true})
	case errors.As(err, &refused):
		return page(http.StatusBadRequest, views.SetPasswordForm{Token: token, Email: acct.Email, Error: refused.Reason})
	case errors.Is(err, signin.ErrDisabled):
		return launchError{launch.ErrAccountDisabled}
	case err != nil:
		return err
	}
	h.endLaunches(acct.ID, "")
	if err := h.signIn(c, acct, "set-password link"); err != nil {
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

// demoPortal is the embedded demo's sample partner portal: its button
// sends a freshly signed token to /sso/jwt.
func (h *server) demoPortal(c echo.Context) error {
	noStore(c)
	d, err := h.DemoPortal()
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, views.DemoPortalPage(h.page(c, "Sample partner portal"), d))
}

// demoPortalOpen is the sample portal's button: it signs a token when it
// is pressed (a page left open longer than a token lives still works),
// and hands it over as the portal's /sso/jwt would take it.
func (h *server) demoPortalOpen(c echo.Context) error {
	d, err := h.DemoPortal()
	if err != nil {
		return err
	}
	return h.handoff(c, d.Token, false)
}
