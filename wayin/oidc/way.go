package oidc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/internal/outbound"
	"github.com/ssobridge/ssobridge/localpath"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// RP is the relying party of one IdP (a *Provider).
type RP interface {
	Start(ctx context.Context, redirectURL, next string) (string, Flow, error)
	Finish(ctx context.Context, f Flow, q url.Values) (Identity, error)
	Discover(ctx context.Context) error
}

// The way's routes.
const (
	StartPath    = "/auth/oidc"
	CallbackPath = "/auth/oidc/callback"
	// FlowCookie carries the flow from StartPath to its callback, sealed;
	// its path keeps it off every other request (on https a __Host-
	// cookie, which must have path /).
	FlowCookie = "ssobridge_oidc"
)

// ErrUnverified: the IdP's email is not verified (and unverified emails
// are not allowed).
var ErrUnverified = wayin.NewRefusal(views.RefusedNoAddress, "oidc: the email is not verified")

// Way is sign-in with the partner's OpenID Connect IdP as a way in
// (wayin.Way): GET /auth/oidc?next=P starts it, the callback checks the
// IdP's answer against this browser's flow and hands who signed in to the
// admission.
type Way struct {
	RP          RP
	Source      signin.Source
	DisplayName string
	// AllowUnverifiedEmail takes an email the IdP does not say is verified.
	AllowUnverifiedEmail bool
	// WatchEvery is how often Watch checks the IdP's health (0: 15 s).
	WatchEvery time.Duration

	k      oidcKit
	sealer wayin.Sealer
}

// Name is its key on /readyz.
func (w *Way) Name() string { return "idp" }

// Exempt: none; the callback is a GET.
func (w *Way) Exempt() []wayin.Exemption { return nil }

// Ready is the IdP's last health check (discovery and keys).
func (w *Way) Ready(ctx context.Context) error { return w.RP.Discover(ctx) }

// Essential: sign-in needs the IdP.
func (w *Way) Essential() bool { return true }

// Button is the IdP's display name, for "Sign in with <display name>".
func (w *Way) Button(next string) (string, string) {
	return w.DisplayName, wayin.WithNext(StartPath, next)
}

// oidcKit is the bridge's ports the way uses.
type oidcKit interface {
	wayin.Arrivals
	wayin.Pages
	wayin.Flows
}

// Mount adds its routes.
func (w *Way) Mount(r wayin.Router, k wayin.Kit) {
	w.k, w.sealer = k, k.Sealer("oidc flow")
	r.GET(StartPath, w.start)
	r.GET(CallbackPath, w.callback)
}

// Watch checks the IdP's health in the background until ctx ends,
// logging once when it becomes unavailable and once when it is back.
func (w *Way) Watch(ctx context.Context, logger *slog.Logger) {
	p, ok := w.RP.(interface {
		Watch(ctx context.Context, every time.Duration, report func(error))
	})
	if !ok {
		return
	}
	every := w.WatchEvery
	if every <= 0 {
		every = 15 * time.Second
	}
	var downSince time.Time
	p.Watch(ctx, every, func(err error) {
		if err != nil {
			downSince = time.Now()
			logger.Error("identity provider unavailable: sign-in with it shows the unavailable page until it is back", "err", err)
			return
		}
		attrs := []any{}
		if !downSince.IsZero() {
			attrs = append(attrs, "down_for", time.Since(downSince).Round(time.Second))
		}
		logger.Info("identity provider is back", attrs...)
	})
}

// flowCookie keeps the sign-in's flow between the start and the IdP's
// answer, a top-level navigation back (SameSite=Lax carries it).
func (w *Way) flowCookie() wayin.FlowCookie {
	return wayin.NewFlowCookie(FlowCookie, StartPath, w.k.Secure())
}

// start is GET /auth/oidc?next=P: to the IdP, with a new flow bound to
// this browser.
func (w *Way) start(c echo.Context) error {
	u, flow, err := w.RP.Start(c.Request().Context(), w.k.BaseURL(c)+CallbackPath, localpath.SafeNext(c.QueryParam("next")))
	if err != nil {
		return w.refused(c, err, "")
	}
	fc := w.flowCookie()
	enc, err := w.sealer.SealJSON(fc.Name(), flow)
	if err != nil {
		return err
	}
	fc.Set(c, enc, FlowTTL)
	wayin.NoStore(c)
	return c.Redirect(http.StatusSeeOther, u)
}

// callback is GET /auth/oidc/callback: the IdP's answer, checked against
// this browser's flow (used once), then the admission.
func (w *Way) callback(c echo.Context) error {
	ctx := c.Request().Context()
	var flow Flow
	fc := w.flowCookie()
	v, ok := fc.Value(c)
	fc.Clear(c) // used once, whatever happens
	if !ok || w.sealer.OpenJSON(fc.Name(), v, &flow) != nil {
		return w.refused(c, fmt.Errorf("%w: no sign-in was started in this browser (or its cookie expired)", ErrBadState), "")
	}
	q := c.QueryParams()
	if q.Get("state") == flow.State {
		// Single-use across instances too: a copied cookie and URL do not
		// pass a second time.
		sum := sha256.Sum256([]byte(flow.State))
		if err := w.k.UseOnce(ctx, "oidc-state", hex.EncodeToString(sum[:]), flow.Expires); errors.Is(err, store.ErrUsed) {
			return w.refused(c, fmt.Errorf("%w: the callback was replayed", ErrBadState), "")
		} else if err != nil {
			return err
		}
	}
	id, err := w.RP.Finish(ctx, flow, q)
	if err != nil {
		return w.refused(c, err, "")
	}
	if !id.EmailVerified && !w.AllowUnverifiedEmail {
		return w.refused(c, ErrUnverified, id.Email)
	}
	_, err = w.k.Enter(c, signin.Arrival{Source: w.Source, Subject: id.Subject, Email: id.Email,
		Names: accounts.Names{Given: id.GivenName, Family: id.FamilyName, Full: id.Name}, Admin: id.Admin},
		wayin.Landing{How: "identity provider", Via: w.DisplayName, Next: localpath.SafeNext(flow.Next)})
	return err
}

// refused records a refused sign-in and answers its page.
func (w *Way) refused(c echo.Context, err error, email string) error {
	return w.k.Refuse(c, "identity provider sign-in refused", "identity provider", email, page(err))
}

// page is the page of an IdP sign-in's refusal, in the words every way
// in shares; an error of no kind keeps its own page (Status 0).
func page(err error) *wayin.Refusal {
	r := wayin.Refused(err, "idp_refused")
	if r.Info.Refusal == views.RefusedUnavailable {
		// The provider did not answer, or answered what does not verify.
		r.Status, r.Info.RetryAfter = http.StatusBadGateway, 0
		if errors.Is(err, ErrUnavailable) { // the log keeps the transport's words
			r.Info.Detail = ErrUnavailable.Error() + ": " + outbound.Reason(err)
		}
	}
	return r
}
