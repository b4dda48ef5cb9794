package handlers

import (
	"context"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/internal/seal"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// kit is what the bridge lends every way in (wayin.Kit): the admission,
// the sign-in and its switch, held arrivals, pages, sealing, the store's
// single-use ids.
type kit struct{ h *server }

func (k kit) Admissible(c echo.Context, a signin.Arrival) error {
	return k.h.refusedArrival(c, a, k.h.admission.Check(c.Request().Context(), a))
}

func (k kit) Enter(c echo.Context, a signin.Arrival, l wayin.Landing) (string, error) {
	acct, err := k.h.admit(c, a)
	if err != nil {
		return "", err
	}
	g := grant{Landing: l, Console: consoleAllowed(c, acct)}
	switch {
	case l.Hold:
		// Held for a new tab: no session of this site's to bind it to.
		g.AccountID, g.Epoch = acct.ID, acct.SessionEpoch
		return k.h.sealGrant(c, g, "")
	case l.Handoff:
		// The handoff asked before it spent its token: sign in at once.
		if err := k.h.signIn(c, acct, l.How, sessionFlags{handoff: true}); err != nil {
			return "", err
		}
		return "", k.h.goOn(c, acct, l)
	}
	return "", k.h.arrived(c, acct, g)
}

func (k kit) Resume(c echo.Context, held string) error {
	g, acct, err := k.h.takeGrant(c, held, "")
	if err != nil {
		return err
	}
	return k.h.arrived(c, acct, g)
}

func (k kit) Refuse(c echo.Context, msg, source, email string, r *wayin.Refusal) error {
	k.h.recordRefusal(c, msg, source, email, r.Err)
	return r
}

func (k kit) Render(c echo.Context, status int, title locale.ID, body func(views.Page) templ.Component) error {
	return k.h.render(c, status, body(k.h.page(c, title)))
}

func (k kit) BaseURL(c echo.Context) string { return k.h.baseURL(c) }

func (k kit) Console(next echo.HandlerFunc) echo.HandlerFunc {
	return k.h.requireUser(redirectToLogin)(k.h.requireAdmin(k.h.consoleEnglish(next)))
}

func (k kit) Audit(c echo.Context, detail string) {
	acct, _ := account(c)
	k.h.audit(c, store.Event{Kind: store.KindAdmin, AccountID: acct.ID, Email: acct.Email, Outcome: "ok", Detail: detail})
}

func (k kit) Sealer(purpose string) wayin.Sealer {
	return seal.New(seal.Purpose(purpose), k.h.Sessions.keys(), k.h.Sessions.previousKeys(), 0, k.h.Now)
}

func (k kit) Secure() bool { return k.h.Sessions.Secure }

func (k kit) UseOnce(ctx context.Context, kind, id string, until time.Time) error {
	return k.h.Store.OneTime.UseOnce(ctx, kind, id, until)
}

func (k kit) Now() time.Time { return k.h.Now() }

func (k kit) SignedIn(c echo.Context) (store.Account, bool) {
	in, err := k.h.sessions.current(c.Request().Context(), c.Request(), c.Response())
	if err != nil {
		return store.Account{}, false
	}
	c.Set(ctxAccount, in.Account) // the request's log line names who asked
	return in.Account, true
}

// maxReason bounds a refusal's reason in the log line and on the page.
const maxReason = 1024

// consoleAllowed reports whether this request's admission said that the
// way in of acct holds its admin rule and granted the role (a session it
// makes may open the console).
func consoleAllowed(c echo.Context, acct store.Account) bool {
	g, _ := c.Get(ctxConsoleBy).(consoleGrant)
	return g.ok && g.account == acct.ID
}
