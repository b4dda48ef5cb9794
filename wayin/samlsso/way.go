package samlsso

import (
	"context"
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
	"github.com/ssobridge/ssobridge/wayin"
)

// IdP is the service provider of one SAML IdP (an *SP).
type IdP interface {
	Start(ctx context.Context, next string) (string, Flow, error)
	Finish(ctx context.Context, flows []Flow, form url.Values) (Identity, error)
	Metadata() ([]byte, error)
	Ready(ctx context.Context) error
}

// The way's routes. The ACS takes the IdP's auto-submitted form, a
// cross-site POST: it is exempt from the anti-forgery guards; the signed
// response, bound to this browser's flow by InResponseTo, and its single
// use protect it.
const (
	StartPath    = "/auth/saml"
	ACSPath      = "/saml/acs"
	MetadataPath = "/saml/metadata"
	// FlowCookie carries the browser's pending SAML sign-ins, sealed,
	// from StartPath to the ACS.
	FlowCookie = "ssobridge_saml"
)

// Way is sign-in with the partner's SAML 2.0 IdP as a way in
// (wayin.Way).
type Way struct {
	IdP         IdP
	Source      signin.Source
	DisplayName string
	// RefreshEvery is how often Watch reads the IdP's metadata again
	// (0: an hour; every 15 s while it has never been read).
	RefreshEvery time.Duration

	k     samlKit
	flows *wayin.Jar[Flow]
}

// Name is its key on /readyz.
func (w *Way) Name() string { return "saml" }

// Exempt: the ACS.
func (w *Way) Exempt() []wayin.Exemption {
	return []wayin.Exemption{{Path: ACSPath}, {Path: MetadataPath, Machine: true}}
}

// Ready: the IdP's metadata has been read.
func (w *Way) Ready(ctx context.Context) error { return w.IdP.Ready(ctx) }

// Essential: sign-in needs the IdP.
func (w *Way) Essential() bool { return true }

// Button is the IdP's display name, for "Sign in with <display name>".
func (w *Way) Button(next string) (string, string) {
	return w.DisplayName, wayin.WithNext(StartPath, next)
}

// samlKit is the bridge's ports the way uses.
type samlKit interface {
	wayin.Arrivals
	wayin.Pages
}

// Mount adds its routes.
func (w *Way) Mount(r wayin.Router, k wayin.Kit) {
	w.k = k
	w.flows = wayin.NewJar(k, "saml flow", FlowCookie, FlowTTL, func(f Flow) time.Time { return f.Expires }, false)
	r.GET(StartPath, w.start)
	r.POST(ACSPath, w.acs)
	r.GET(MetadataPath, w.metadata)
}

// Watch reads the IdP's metadata again now and then until ctx ends,
// logging once when the reads start failing and once when they succeed
// again.
func (w *Way) Watch(ctx context.Context, logger *slog.Logger) {
	sp, ok := w.IdP.(*SP)
	if !ok {
		return
	}
	every := w.RefreshEvery
	if every <= 0 {
		every = time.Hour
	}
	sp.Watch(ctx, every, func(err error) {
		if err != nil {
			logger.Error("SAML identity provider's metadata unreadable: the metadata read last stays in use (none: sign-in shows the unavailable page)", "err", err)
			return
		}
		logger.Info("SAML identity provider's metadata read")
	})
}

// metadata is GET /saml/metadata: the bridge's SP metadata, for the IdP's
// administrator (or the IdP itself) to read.
func (w *Way) metadata(c echo.Context) error {
	md, err := w.IdP.Metadata()
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "application/samlmetadata+xml", md)
}

// start is GET /auth/saml?next=P: to the IdP with an AuthnRequest, the
// flow kept in this browser.
func (w *Way) start(c echo.Context) error {
	u, flow, err := w.IdP.Start(c.Request().Context(), localpath.SafeNext(c.QueryParam("next")))
	if err != nil {
		return w.refused(c, err, "")
	}
	if err := w.flows.Add(c, flow); err != nil {
		return err
	}
	wayin.NoStore(c)
	return c.Redirect(http.StatusSeeOther, u)
}

// acs is POST /saml/acs: the IdP's response, checked against this
// browser's flows (the one it answers is used up), then the admission. A
// browser already signed in is not passed over: its response is checked
// like any other, and the switch is asked.
func (w *Way) acs(c echo.Context) error {
	pending, form, err := w.flows.TakePosted(c, "RelayState", func(f Flow) string { return f.Relay })
	if errors.Is(err, wayin.ErrForm) {
		return w.refused(c, fmt.Errorf("%w: %w", ErrInvalid, err), "")
	}
	if err != nil {
		return err
	}
	id, err := w.IdP.Finish(c.Request().Context(), pending, form)
	if err != nil {
		return w.refused(c, err, "")
	}
	next := "/"
	if !id.Unsolicited {
		next = localpath.SafeNext(id.Flow.Next)
	}
	// An IdP-initiated sign-in asks too before it replaces another
	// account's session: any page can post an IdP's response here.
	_, err = w.k.Enter(c, signin.Arrival{Source: w.Source, Subject: id.NameID, Email: id.Email,
		Names: accounts.Names{Given: id.GivenName, Family: id.FamilyName, Full: id.Name}, Admin: id.Admin},
		wayin.Landing{How: "SAML identity provider", Via: w.DisplayName, Next: next})
	return err
}

// refused records a refused sign-in (one log line and the audit say why)
// and answers its page.
func (w *Way) refused(c echo.Context, err error, email string) error {
	return w.k.Refuse(c, "SAML sign-in refused", "SAML identity provider", email, page(err))
}

// page is the page of a SAML sign-in's refusal, in the words every way
// in shares; an error of no kind (the store's, say) keeps its own page
// (Status 0).
func page(err error) *wayin.Refusal {
	r := wayin.Refused(err, "idp_refused")
	if errors.Is(err, ErrUnavailable) { // the log keeps the transport's words
		r.Info.Detail = ErrUnavailable.Error() + ": " + outbound.Reason(err)
	}
	return r
}
