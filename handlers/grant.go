package handlers

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// A grant is a sign-in a way in admitted but did not start yet: the
// framed LTI page's button, which opens the editor in a new tab, and the
// switch of accounts a person confirms when an arrival meets another
// account signed in in this browser. It is sealed into the page, used
// once, bound to the browser (its user agent, and the session it was
// offered to), and to the account's session epoch: "sign out everywhere",
// a new password, disabling and deletion end it as they end sessions.
type grant struct {
	wayin.Landing           // how it is recorded, who asks, where it goes on
	ID            string    `json:"i"`
	AccountID     int64     `json:"a"`
	Epoch         int64     `json:"p"`
	Browser       string    `json:"b"`
	Expires       time.Time `json:"e"`
	// Console: the way in holds the account's admin rule and granted the
	// role at this arrival, so its session may open the console.
	Console bool `json:"c,omitempty"`
}

const (
	grantTTL  = 10 * time.Minute
	grantKind = "grant"
	// switchPath takes the switch page's confirmation: a same-site form
	// post, under both anti-forgery guards.
	switchPath = "/switch"
	// arrivePath is the second step of an arrival that came by a
	// cross-site post (see hop).
	arrivePath = "/arrive"
	// arrivalCookie binds that step to the browser that made the first.
	arrivalCookie = "ssobridge_arrival"
)

// browserOf binds a grant to the browser: its user agent and the
// session it holds (""), hashed.
func browserOf(r *http.Request, sessionID string) string {
	sum := sha256.Sum256([]byte(r.UserAgent() + "\x00" + sessionID))
	return hex.EncodeToString(sum[:12])
}

// sealGrant fills in g's id, expiry and browser and seals it.
func (h *server) sealGrant(c echo.Context, g grant, sessionID string) (string, error) {
	g.ID, g.Expires, g.Browser = randid.Token(16), h.Now().Add(grantTTL), browserOf(c.Request(), sessionID)
	return h.grants.SealJSON("grant", g)
}

// takeGrant opens a sealed grant offered to this browser (with the
// session sessionID) and uses it: the account it names, as it is now.
// Every refusal wraps wayin.ErrHoldGone (a 4xx page), a disabled account is
// launch.ErrAccountDisabled.
func (h *server) takeGrant(c echo.Context, sealed, sessionID string) (grant, store.Account, error) {
	var g grant
	if err := h.grants.OpenJSON("grant", sealed, &g); err != nil {
		return g, store.Account{}, fmt.Errorf("%w: the value does not open", wayin.ErrHoldGone)
	}
	if !h.Now().Before(g.Expires) {
		return g, store.Account{}, fmt.Errorf("%w: older than %s", wayin.ErrHoldGone, grantTTL)
	}
	if g.Browser != browserOf(c.Request(), sessionID) {
		return g, store.Account{}, fmt.Errorf("%w: offered to another browser", wayin.ErrHoldGone)
	}
	ctx := c.Request().Context()
	switch err := h.Store.OneTime.UseOnce(ctx, grantKind, g.ID, g.Expires); {
	case errors.Is(err, store.ErrUsed):
		return g, store.Account{}, fmt.Errorf("%w: used before", wayin.ErrHoldGone)
	case err != nil:
		return g, store.Account{}, err
	}
	acct, err := h.Store.Sessions.FreshAccountByID(ctx, g.AccountID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return g, store.Account{}, fmt.Errorf("%w: the account was removed", wayin.ErrHoldGone)
	case err != nil:
		return g, store.Account{}, err
	case acct.Disabled:
		return g, store.Account{}, launchError{launch.Disabled(acct)}
	case acct.SessionEpoch != g.Epoch:
		return g, store.Account{}, fmt.Errorf("%w: the account was signed out everywhere (or its password changed) since", wayin.ErrHoldGone)
	}
	return g, acct, nil
}

// arrived signs in the account a way in admitted and goes on as g says:
// at once when nobody else is signed in in this browser; through the
// switch page, which asks, when another account is.
func (h *server) arrived(c echo.Context, acct store.Account, g grant) error {
	if r := c.Request(); r.Method == http.MethodPost && r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return h.hop(c, acct, g)
	}
	in, err := h.sessions.current(c.Request().Context(), c.Request(), c.Response())
	if err == nil && in.Account.ID != acct.ID {
		g.AccountID, g.Epoch = acct.ID, acct.SessionEpoch
		tok, err := h.sealGrant(c, g, in.SessionID)
		if err != nil {
			return err
		}
		c.Set(ctxAccount, in.Account)
		noStore(c)
		return h.render(c, http.StatusOK, views.HandoffSwitchPage(h.page(c, locale.Msg("Switch accounts?")), views.HandoffSwitch{
			SignedIn: in.Email, Arriving: acct.Email, Via: locale.From(c.Request().Context()).T("Your sign-in through {{.Name}} signs in another account:", "Name", locale.From(c.Request().Context()).Name(g.Via)), Action: switchPath, Field: "grant", Token: tok}))
	}
	return h.complete(c, acct, g)
}

// hop answers an arrival that came by a cross-site post (an LMS's launch,
// a SAML IdP's response): the browser does not send its SameSite=Lax
// session cookie with such a post, so who is signed in here cannot be
// seen, and signing in would replace another account's session without
// asking. The browser goes on to GET /arrive, a top-level navigation that
// carries the session cookie, with the arrival as a grant bound to a
// cookie set now (SameSite=Lax: sent on that navigation, never on
// another site's request).
func (h *server) hop(c echo.Context, acct store.Account, g grant) error {
	nonce := randid.Token(16)
	g.AccountID, g.Epoch = acct.ID, acct.SessionEpoch
	tok, err := h.sealGrant(c, g, "arrival:"+nonce)
	if err != nil {
		return err
	}
	h.arrivalCookie().Set(c, nonce, grantTTL)
	noStore(c)
	return c.Redirect(http.StatusSeeOther, arrivePath+"?grant="+url.QueryEscape(tok))
}

// arrivalCookie is the cookie of hop.
func (h *server) arrivalCookie() wayin.FlowCookie {
	return wayin.NewFlowCookie(arrivalCookie, arrivePath, h.Sessions.Secure)
}

// arrive is GET /arrive?grant=G, hop's second step: the grant of the
// browser holding hop's cookie, then the arrival as any other (asking
// first when another account is signed in).
func (h *server) arrive(c echo.Context) error {
	noStore(c)
	ck := h.arrivalCookie()
	nonce, _ := ck.Value(c)
	ck.Clear(c) // used once, whatever happens
	g, acct, err := h.takeGrant(c, c.QueryParam("grant"), "arrival:"+nonce)
	if err != nil {
		if errors.Is(err, wayin.ErrHoldGone) {
			h.Logger.Warn("arrival refused", "reason", err.Error(), "request_id", requestID(c))
		}
		return err
	}
	return h.arrived(c, acct, g)
}

// complete starts the session of acct and goes where g says.
func (h *server) complete(c echo.Context, acct store.Account, g grant) error {
	if err := h.signIn(c, acct, g.How, sessionFlags{noConsole: !g.Console}); err != nil {
		return err
	}
	return h.goOn(c, acct, g.Landing)
}

// goOn goes where a signed-in arrival's landing says: the editor's
// launch, or a page of the bridge.
func (h *server) goOn(c echo.Context, acct store.Account, l wayin.Landing) error {
	if l.Launch {
		return h.launchTo(c, acct, l.ReturnTo)
	}
	return c.Redirect(http.StatusSeeOther, l.Next)
}

// switchAccount is POST /switch: the switch page's confirmation, from the
// browser (and session) it was offered to.
func (h *server) switchAccount(c echo.Context) error {
	noStore(c)
	sid := ""
	if in, err := h.sessions.current(c.Request().Context(), c.Request(), c.Response()); err == nil {
		sid = in.SessionID
	}
	g, acct, err := h.takeGrant(c, c.Request().PostFormValue("grant"), sid)
	if err != nil {
		if errors.Is(err, wayin.ErrHoldGone) {
			h.Logger.Warn("switch of accounts refused", "reason", err.Error(), "request_id", requestID(c))
		}
		return err
	}
	return h.complete(c, acct, g)
}
