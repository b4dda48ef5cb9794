// Package portal is how users arrive from the partner's portal: the
// signed JWT handoff (verifying the portal's token, single-use across
// instances through the store) as a way in (wayin.Way), and the
// embedded demo's sample portal.
package portal

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// Tokens verifies the portal's handoff (a *Verifier): Check makes every
// check but spending the token, Use spends it.
type Tokens interface {
	Check(token string) (Claims, error)
	Use(ctx context.Context, c Claims) error
}

// The way's routes. /sso/jwt arrives cross-site from the portal (a link,
// a form): exempt from the anti-forgery guards; the signed, single-use
// token is the proof. Its confirmation, posted from the bridge's own
// page, is not exempt.
const (
	HandoffPath = "/sso/jwt"
	ConfirmPath = "/sso/jwt/confirm"
	DemoPath    = "/demo/portal"
)

// Way is the portal's handoff as a way in (wayin.Way).
type Way struct {
	Tokens Tokens
	Source signin.Source
	// Demo, set only by the embedded demo, fills the sample partner
	// portal at DemoPath with a freshly signed token.
	Demo func() (DemoPortal, error)

	k portalKit
}

// Name is its key in logs.
func (w *Way) Name() string { return "portal" }

// Exempt: the handoff.
func (w *Way) Exempt() []wayin.Exemption { return []wayin.Exemption{{Path: HandoffPath}} }

// Ready: always; a token is checked with a key held here.
func (w *Way) Ready(context.Context) error { return nil }

// Essential: no.
func (w *Way) Essential() bool { return false }

// Button: none; the handoff starts at the portal.
func (w *Way) Button(string) (string, string) { return "", "" }

// Watch: nothing to read again.
func (w *Way) Watch(context.Context, *slog.Logger) {}

// portalKit is the bridge's ports the way uses.
type portalKit interface {
	wayin.Admission
	wayin.Arrivals
	wayin.Pages
	wayin.Sessions
}

// Mount adds its routes.
func (w *Way) Mount(r wayin.Router, k wayin.Kit) {
	w.k = k
	r.GET(HandoffPath, w.handoffRoute)
	r.POST(HandoffPath, w.handoffRoute)
	r.POST(ConfirmPath, w.confirm)
	if w.Demo != nil {
		r.GET(DemoPath, w.demo)
		r.POST(DemoPath+"/open", w.demoOpen)
	}
}

// handoffRoute is GET /sso/jwt?jwt=T or POST (form jwt): a verified token
// signs its user in (creating the account on first use when allowed) and
// launches to the token's return_to. Every verification failure answers
// the same 401 page; the log and the audit say which.
func (w *Way) handoffRoute(c echo.Context) error { return w.handoff(c, c.FormValue("jwt"), false) }

// confirm is POST /sso/jwt/confirm: a browser signed in as another
// account chose to switch to the portal link's (the page's form, with its
// anti-forgery token and from this site: not exempt from either guard).
func (w *Way) confirm(c echo.Context) error { return w.handoff(c, c.FormValue("jwt"), true) }

// handoff signs in the user of a portal token and launches. A browser
// signed in as another account is asked first (switch), unless it
// confirmed; the same account, or nobody signed in, goes on at once.
func (w *Way) handoff(c echo.Context, token string, confirmed bool) error {
	ctx := c.Request().Context()
	claims, err := w.Tokens.Check(token)
	if err != nil {
		return w.refused(c, err)
	}
	arrival := signin.Arrival{Source: w.Source, Subject: cmp.Or(claims.Subject, mailaddr.Key(claims.Email)), Email: claims.Email,
		Names: accounts.Names{Given: claims.GivenName, Family: claims.FamilyName}}
	if !confirmed {
		if in, ok := w.k.SignedIn(c); ok && !mailaddr.Equal(claims.Email, in.Email) {
			// An arrival the admission would refuse is refused now, not
			// after a question whose answer could not help.
			if err := w.k.Admissible(c, arrival); err != nil {
				return admissionPage(err)
			}
			// Following someone else's link must not switch this browser
			// silently (an admin's, even): ask. The token is not spent
			// until the answer.
			wayin.NoStore(c)
			return w.k.Render(c, http.StatusOK, locale.Msg("Switch accounts?"), func(p views.Page) templ.Component {
				return views.HandoffSwitchPage(p, views.HandoffSwitch{SignedIn: in.Email, Arriving: claims.Email,
					Via: locale.From(c.Request().Context()).T("The link from your portal signs in another account:"), Action: ConfirmPath, Field: "jwt", Token: token})
			})
		}
	}
	if err := w.Tokens.Use(ctx, claims); err != nil {
		return w.refused(c, err)
	}
	if _, err := w.k.Enter(c, arrival, wayin.Landing{How: "portal token", Launch: true, ReturnTo: claims.ReturnTo, Handoff: true}); err != nil {
		return admissionPage(err)
	}
	return nil
}

// admissionPage is a refused arrival's page: no account and none to make
// is the 401 of every refused token (the admission's log line says why);
// every other refusal keeps the page all ways share.
func admissionPage(err error) error {
	if errors.Is(err, signin.ErrNoAccount) {
		return refusal(err)
	}
	return err
}

// refusal is the portal's 401 page of a refused link, which does not say
// why, save a link made for another service: that is the partner's to
// mend.
func refusal(err error) *wayin.Refusal {
	r := wayin.Refused(err, "portal_refused")
	r.Status, r.Info.Detail = http.StatusUnauthorized, ""
	r.Info.Wording = views.Wording{Class: "portal-refused", Title: locale.Msg("This sign-in link was not accepted"), Again: locale.Msg("Back to your portal"),
		Lead: locale.Msg("The link from your portal could not be used: it may have expired or been used already. Nothing was changed. Go back to your portal and click again.")}
	if errors.Is(err, ErrOtherAudience) {
		r.Info.Wording.Lead = locale.Msg("The link from your portal was made for another service, not for this one (the token's audience is not this ssobridge's). Nothing was changed. Tell {{.Contact}}: the portal must sign its links for this ssobridge's address (portal.jwt_audience).")
	}
	return r
}

// refused answers a portal token that did not verify: one 401 page that
// does not say why; the log line and the audit do. Another error is
// returned as it is.
func (w *Way) refused(c echo.Context, err error) error {
	if !errors.Is(err, ErrRefused) {
		return err
	}
	return w.k.Refuse(c, "portal token refused", "", "", refusal(err))
}

// demo is the embedded demo's sample partner portal: its button sends a
// freshly signed token to /sso/jwt.
func (w *Way) demo(c echo.Context) error {
	wayin.NoStore(c)
	d, err := w.Demo()
	if err != nil {
		return err
	}
	return w.k.Render(c, http.StatusOK, locale.Msg("Sample partner portal"), func(p views.Page) templ.Component { return demoPage(p, d) })
}

// demoOpen is the sample portal's button: it signs a token when it is
// pressed (a page left open longer than a token lives still works), and
// hands it over as the portal's /sso/jwt would take it.
func (w *Way) demoOpen(c echo.Context) error {
	d, err := w.Demo()
	if err != nil {
		return err
	}
	return w.handoff(c, d.Token, false)
}

// Wordings are the portal's own refusal pages, for the page gallery.
func (Module) Wordings() []views.Wording {
	return []views.Wording{refusal(ErrRefused).Info.Wording, refusal(ErrOtherAudience).Info.Wording}
}
