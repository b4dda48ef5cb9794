package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/oidc"
	"github.com/ssobridge/ssobridge/portal"
	"github.com/ssobridge/ssobridge/signin"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// IdP is sign-in with the partner's identity provider (oidc.Provider).
type IdP interface {
	Start(ctx context.Context, redirectURL, next string) (string, oidc.Flow, error)
	Finish(ctx context.Context, f oidc.Flow, q url.Values) (oidc.Identity, error)
	Discover(ctx context.Context) error
}

// IdPOptions are IdP sign-in's settings (oidc.*).
type IdPOptions struct {
	DisplayName string
	// Source is the IdP as the admission sees it: its email_domains,
	// create_accounts, and whether admin_group is set.
	Source               signin.Source
	AllowUnverifiedEmail bool
	LocalLogin           bool // show the password form
	LocalLoginFallback   bool // with LocalLogin off, /login?local=1 still shows it
}

// errIdPUnverified: the IdP's email is not verified (and
// oidc.allow_unverified_email is off).
var errIdPUnverified = errors.New("oidc: the email is not verified")

// idpFlowCookie carries the flow from /auth/oidc to its callback, sealed
// with the session keys; its path keeps it off every other request.
const idpFlowCookie = "ssobridge_oidc"

const idpCallback = "/auth/oidc/callback"

// idpFlows seals flows into the cookie and back.
type idpFlows struct {
	sealer *cookieSealer // under a key of its own (purposeOIDCFlow)
	name   string
	secure bool
}

func newIdPFlows(cfg SessionConfig, now func() time.Time) *idpFlows {
	// No age limit of the sealer's: the flow carries its start, and
	// oidc.Finish answers an old one with its own page (took too long).
	c := newCookieSealer(purposeOIDCFlow, cfg.keys(), cfg.previousKeys(), 0, now)
	name := idpFlowCookie
	if cfg.Secure {
		name = "__Host-" + idpFlowCookie
	}
	return &idpFlows{sealer: c, name: name, secure: cfg.Secure}
}

func (f *idpFlows) cookie(value string, maxAge int) *http.Cookie {
	path := "/auth/oidc"
	if f.secure {
		path = "/" // __Host- cookies must have path /
	}
	return &http.Cookie{Name: f.name, Value: value, Path: path, MaxAge: maxAge, HttpOnly: true, Secure: f.secure, SameSite: http.SameSiteLaxMode}
}

// idpStart is GET /auth/oidc?next=P: to the IdP, with a new flow bound to
// this browser.
func (h *server) idpStart(c echo.Context) error {
	if h.IdP == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	u, flow, err := h.IdP.Start(c.Request().Context(), h.baseURL(c)+idpCallback, portal.SafeNext(c.QueryParam("next")))
	if err != nil {
		return h.idpRefused(c, err, "")
	}
	enc, err := h.idpFlows.sealer.sealJSON(h.idpFlows.name, flow)
	if err != nil {
		return err
	}
	c.SetCookie(h.idpFlows.cookie(enc, int(oidc.FlowTTL/time.Second)))
	noStore(c)
	return c.Redirect(http.StatusSeeOther, u)
}

// idpCallback is GET /auth/oidc/callback: the IdP's answer, checked
// against this browser's flow (used once), then the account: found by
// email, created on first sign-in when allowed, refused when its email is
// unverified or it is disabled, made admin (or not) by its groups.
func (h *server) idpCallback(c echo.Context) error {
	if h.IdP == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	ctx := c.Request().Context()
	var flow oidc.Flow
	ck, err := c.Cookie(h.idpFlows.name)
	c.SetCookie(h.idpFlows.cookie("", -1)) // used once, whatever happens
	if err != nil || h.idpFlows.sealer.openJSON(h.idpFlows.name, ck.Value, &flow) != nil {
		return h.idpRefused(c, fmt.Errorf("%w: no sign-in was started in this browser (or its cookie expired)", oidc.ErrBadState), "")
	}
	q := c.QueryParams()
	if q.Get("state") == flow.State {
		// Single-use across instances too: a copied cookie and URL do not
		// pass a second time.
		sum := sha256.Sum256([]byte(flow.State))
		if err := h.Store.OneTime.UseOnce(ctx, "oidc-state", hex.EncodeToString(sum[:]), flow.Expires); errors.Is(err, store.ErrUsed) {
			return h.idpRefused(c, fmt.Errorf("%w: the callback was replayed", oidc.ErrBadState), "")
		} else if err != nil {
			return err
		}
	}
	id, err := h.IdP.Finish(ctx, flow, q)
	if err != nil {
		return h.idpRefused(c, err, "")
	}
	if !id.EmailVerified && !h.IdPOptions.AllowUnverifiedEmail {
		return h.idpRefused(c, errIdPUnverified, id.Email)
	}
	acct, err := h.admit(c, signin.Arrival{Source: h.IdPOptions.Source, Subject: id.Subject, Email: id.Email,
		Names: accounts.Names{Given: id.GivenName, Family: id.FamilyName, Full: id.Name}, Admin: id.Admin})
	if err != nil {
		return err
	}
	return h.arrived(c, acct, grant{How: "identity provider", Via: h.IdPOptions.DisplayName, Next: portal.SafeNext(flow.Next)})
}

// idpRefused records a refused IdP sign-in (the log and the audit say
// why) and answers its page.
func (h *server) idpRefused(c echo.Context, err error, email string) error {
	h.Logger.Warn("identity provider sign-in refused", "reason", err.Error(), "email", email, "request_id", requestID(c))
	h.audit(c, store.Event{Kind: store.KindLogin, Email: truncate(email, 254), Outcome: "failed", Detail: truncate("identity provider: "+err.Error(), 300)})
	h.Metrics.login("failed")
	return idpError{err}
}

// idpError marks an IdP sign-in failure for the error page.
type idpError struct{ err error }

func (e idpError) Error() string { return e.err.Error() }
func (e idpError) Unwrap() error { return e.err }

// idpPage maps an IdP sign-in failure (OIDC or SAML) to its page; ok is
// false for an error of no sign-in class (the store's, say), which gets
// its own page.
func idpPage(err error, info views.ErrorInfo) (int, func(views.Page, views.ErrorInfo) templ.Component, views.ErrorInfo, bool) {
	if status, page, info, ok := samlPage(err, info); ok {
		return status, page, info, true
	}
	info.Detail = err.Error()
	switch {
	case errors.Is(err, errIdPUnverified):
		return http.StatusForbidden, views.IdPUnverified, info, true
	case errors.Is(err, oidc.ErrDenied):
		return http.StatusForbidden, views.IdPDenied, info, true
	case errors.Is(err, oidc.ErrBadState):
		return http.StatusBadRequest, views.IdPStateMismatch, info, true
	case errors.Is(err, oidc.ErrExpired):
		return http.StatusBadRequest, views.IdPExpired, info, true
	case errors.Is(err, oidc.ErrUnavailable), errors.Is(err, oidc.ErrInvalidToken):
		return http.StatusBadGateway, views.IdPUnavailable, info, true
	}
	info.Detail = ""
	return 0, nil, info, false
}
