package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/portal"
	"github.com/ssobridge/ssobridge/samlsso"
	"github.com/ssobridge/ssobridge/signin"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// SAML is sign-in with the partner's SAML 2.0 identity provider
// (samlsso.SP).
type SAML interface {
	Start(ctx context.Context, next string) (string, samlsso.Flow, error)
	Finish(ctx context.Context, flows []samlsso.Flow, form url.Values) (samlsso.Identity, error)
	Metadata() ([]byte, error)
	Ready(ctx context.Context) error
}

// SAMLOptions are SAML sign-in's settings (saml.*).
type SAMLOptions struct {
	DisplayName string
	// Source is the IdP as the admission sees it: its email_domains,
	// create_accounts, and whether admin_group is set.
	Source signin.Source
}

// The SAML routes. The ACS takes the IdP's auto-submitted form, a
// cross-site POST: it is exempt from the anti-forgery guards, as the
// portal's handoff is; the signed response, bound to this browser's flow
// by InResponseTo, and its single use protect it.
const (
	samlStartPath    = "/auth/saml"
	samlACSPath      = "/saml/acs"
	samlMetadataPath = "/saml/metadata"
)

// samlFlowCookie carries the browser's pending SAML sign-ins (a few, so
// two tabs do not undo each other), sealed with the session keys, from
// /auth/saml to the ACS.
const samlFlowCookie = "ssobridge_saml"

func newSAMLFlows(cfg SessionConfig, now func() time.Time) *flowJar[samlsso.Flow] {
	return newFlowJar(cfg, purposeSAMLFlow, samlFlowCookie, samlsso.FlowTTL, now, func(f samlsso.Flow) time.Time { return f.Expires })
}

// samlMetadata is GET /saml/metadata: the bridge's SP metadata, for the
// IdP's administrator (or the IdP itself) to read.
func (h *server) samlMetadata(c echo.Context) error {
	if h.SAML == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	md, err := h.SAML.Metadata()
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "application/samlmetadata+xml", md)
}

// samlStart is GET /auth/saml?next=P: to the IdP with an AuthnRequest,
// the flow kept in this browser.
func (h *server) samlStart(c echo.Context) error {
	if h.SAML == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	u, flow, err := h.SAML.Start(c.Request().Context(), portal.SafeNext(c.QueryParam("next")))
	if err != nil {
		return h.samlRefused(c, err, "")
	}
	if err := h.samlFlows.write(c, append(h.samlFlows.read(c), pendingFlow[samlsso.Flow]{Flow: flow, Own: ownRequest(c.Request())})); err != nil {
		return err
	}
	noStore(c)
	return c.Redirect(http.StatusSeeOther, u)
}

// samlACS is POST /saml/acs: the IdP's response, checked against this
// browser's flows (the one it answers is used up), then the account rules
// every way in shares. A browser already signed in is not passed over: its
// response is checked like any other.
func (h *server) samlACS(c echo.Context) error {
	if h.SAML == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	ctx := c.Request().Context()
	if err := c.Request().ParseForm(); err != nil {
		return h.samlRefused(c, fmt.Errorf("%w: the form could not be read", samlsso.ErrInvalid), "")
	}
	form := c.Request().PostForm // never the query string
	relay := form.Get("RelayState")
	pending, err := h.samlFlows.take(c, func(f samlsso.Flow) bool { return f.Relay == relay })
	if err != nil {
		return err
	}
	id, err := h.SAML.Finish(ctx, pending, form)
	if err != nil {
		return h.samlRefused(c, err, "")
	}
	acct, err := h.admit(c, signin.Arrival{Source: h.SAMLOptions.Source, Subject: id.NameID, Email: id.Email,
		Names: accounts.Names{Given: id.GivenName, Family: id.FamilyName, Full: id.Name}, Admin: id.Admin})
	if err != nil {
		return err
	}
	next := "/"
	if !id.Unsolicited {
		next = portal.SafeNext(id.Flow.Next)
	}
	// An IdP-initiated sign-in asks too before it replaces another
	// account's session: any page can post an IdP's response here.
	return h.arrived(c, acct, grant{How: "SAML identity provider", Via: h.SAMLOptions.DisplayName, Next: next})
}

// samlRefused records a refused SAML sign-in (one log line and the audit
// say why) and answers its page.
func (h *server) samlRefused(c echo.Context, err error, email string) error {
	h.Logger.Warn("SAML sign-in refused", "reason", err.Error(), "email", email, "request_id", requestID(c))
	h.audit(c, store.Event{Kind: store.KindLogin, Email: truncate(email, 254), Outcome: "failed", Detail: truncate("SAML identity provider: "+err.Error(), 300)})
	h.Metrics.login("failed")
	return idpError{err}
}

// samlPage maps a SAML sign-in failure to its page; ok is false for an
// error of no SAML class (the store's, say), which gets its own page.
func samlPage(err error, info views.ErrorInfo) (int, func(views.Page, views.ErrorInfo) templ.Component, views.ErrorInfo, bool) {
	info.Detail = err.Error()
	switch {
	case errors.Is(err, samlsso.ErrUnavailable):
		info.RetryAfter = 30
		return http.StatusServiceUnavailable, views.IdPUnavailable, info, true
	case errors.Is(err, samlsso.ErrDenied):
		return http.StatusForbidden, views.IdPDenied, info, true
	case errors.Is(err, samlsso.ErrBadState), errors.Is(err, samlsso.ErrReplayed):
		return http.StatusBadRequest, views.IdPStateMismatch, info, true
	case errors.Is(err, samlsso.ErrFlowExpired):
		return http.StatusBadRequest, views.IdPExpired, info, true
	case errors.Is(err, samlsso.ErrExpired), errors.Is(err, samlsso.ErrNotYetValid):
		return http.StatusBadRequest, views.IdPClock, info, true
	case errors.Is(err, samlsso.ErrInvalid):
		return http.StatusBadRequest, views.IdPInvalidAnswer, info, true
	}
	return 0, nil, info, false
}
