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
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/oidc"
	"github.com/ssobridge/ssobridge/portal"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// IdP is sign-in with the partner's identity provider (oidc.Provider).
type IdP interface {
	Start(ctx context.Context, redirectURL, next string) (string, oidc.Flow, error)
	Finish(ctx context.Context, f oidc.Flow, q url.Values) (oidc.Identity, error)
	Discover(ctx context.Context) error
}

// IdPOptions are the account rules of IdP sign-in (oidc.* settings).
type IdPOptions struct {
	DisplayName          string
	CreateAccounts       bool // create the account on a first sign-in
	AllowUnverifiedEmail bool
	ManageAdmin          bool // oidc.admin_group is set: membership makes an admin at each sign-in, its absence takes it away
	LocalLogin           bool // show the password form
	LocalLoginFallback   bool // with LocalLogin off, /login?local=1 still shows it
}

// Errors of an IdP sign-in that are the bridge's own.
var (
	errIdPNoAccount  = errors.New("no account for this email, and the identity provider's create_accounts is off")
	errIdPUnverified = errors.New("oidc: the email is not verified")
	// errIdPBadEmail: the identity provider's email is no address (an
	// invisible character in it, say): no account is looked up or made.
	errIdPBadEmail = errors.New("the identity provider's email is refused")
)

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
	acct, err := h.idpAccount(ctx, id)
	if err != nil {
		return h.idpRefused(c, err, id.Email)
	}
	if err := h.signIn(c, acct, "identity provider"); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, portal.SafeNext(flow.Next))
}

// idpAccount applies the account rules to who signed in.
func (h *server) idpAccount(ctx context.Context, id oidc.Identity) (store.Account, error) {
	if !id.EmailVerified && !h.IdPOptions.AllowUnverifiedEmail {
		return store.Account{}, errIdPUnverified
	}
	return h.arrivedAccount(ctx, arrival{email: id.Email, names: accounts.Names{Given: id.GivenName, Family: id.FamilyName, Full: id.Name},
		admin: id.Admin, create: h.IdPOptions.CreateAccounts, manageAdmin: h.IdPOptions.ManageAdmin, groupKey: "oidc.admin_group"})
}

// arrival is who an identity provider (OIDC or SAML) says signed in, with
// that way in's rules.
type arrival struct {
	email       string
	names       accounts.Names
	admin       bool   // a member of the admin group
	create      bool   // create the account on a first sign-in
	manageAdmin bool   // the admin group is set: it grants and takes away admin
	groupKey    string // the setting that names the group, for the log
}

// arrivedAccount applies the account rules every identity provider shares:
// the account found by email, created on first sign-in when allowed,
// refused when disabled, made admin (or not) by the admin group.
func (h *server) arrivedAccount(ctx context.Context, a arrival) (store.Account, error) {
	if p := mailaddr.Problem(a.email); p != "" {
		return store.Account{}, fmt.Errorf("%w: %s", errIdPBadEmail, p)
	}
	acct, err := accounts.FindOrCreate(ctx, h.Store.Accounts, a.email, a.names, a.create)
	if errors.Is(err, store.ErrNotFound) {
		return store.Account{}, errIdPNoAccount
	}
	if err != nil {
		return store.Account{}, err
	}
	return h.admitted(ctx, acct, a)
}

// admitted applies to an arriving account what every way in shares: a
// disabled account is refused; the admin group (or role) grants and takes
// away admin.
func (h *server) admitted(ctx context.Context, acct store.Account, a arrival) (store.Account, error) {
	if acct.Disabled {
		return store.Account{}, launch.ErrAccountDisabled
	}
	if a.manageAdmin && acct.Admin != a.admin {
		switch err := h.Store.Accounts.SetAdmin(ctx, acct.ID, a.admin); {
		case errors.Is(err, store.ErrLastAdmin):
			// The group no longer lists the last admin; the bridge keeps one.
			h.Logger.Warn("identity provider: the last admin is not in "+a.groupKey+"; kept as admin", "email", acct.Email)
		case err != nil:
			return store.Account{}, err
		default:
			return h.Store.Accounts.AccountByID(ctx, acct.ID)
		}
	}
	return acct, nil
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
	case errors.Is(err, launch.ErrAccountDisabled):
		info.Detail = ""
		return http.StatusForbidden, views.AccountDisabled, info, true
	case errors.Is(err, oidc.ErrDenied), errors.Is(err, errIdPNoAccount):
		return http.StatusForbidden, views.IdPDenied, info, true
	case errors.Is(err, errIdPBadEmail):
		return http.StatusBadRequest, views.IdPInvalidAnswer, info, true
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
