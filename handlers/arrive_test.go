package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin/portal"
)

// A deep link: signed out, it asks for the sign-in and continues to itself;
// signed in, it launches to its return_to with the headers of POST /launch.
func TestOpenDeepLink(t *testing.T) {
	f := setup(t)
	ada := f.account("ada@example.com", false)
	c := f.client()
	r := c.get("/open?return_to=%2Feditor%2Fprojects%2F42")
	require.Equal(t, http.StatusSeeOther, r.status)
	loc := r.header.Get("Location")
	assert.Equal(t, "/login?next="+url.QueryEscape("/open?return_to=%2Feditor%2Fprojects%2F42"), loc)
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"), "the headers of POST /launch")
	assert.Equal(t, "no-referrer", r.header.Get("Referrer-Policy"))
	assert.Empty(t, f.launcher.made(), "nothing launched signed out")

	page := c.get(loc)
	next := page.doc.Find(`input[name="next"]`).AttrOr("value", "")
	assert.Equal(t, "/open?return_to=%2Feditor%2Fprojects%2F42", next, "the form carries next")
	r = c.post("/login", url.Values{"_csrf": {c.csrf(loc)}, "email": {"ada@example.com"}, "password": {testPassword}, "next": {next}})
	require.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, next, r.header.Get("Location"), "the sign-in continues to next")

	r = c.get(next)
	require.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, "https://platform.example/api/5/login-token/login/TOKEN-ada@example.com", r.header.Get("Location"))
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
	assert.Equal(t, "no-referrer", r.header.Get("Referrer-Policy"))
	calls := f.launcher.made()
	require.Len(t, calls, 1)
	assert.Equal(t, "/editor/projects/42", calls[0].returnTo)
	assert.Equal(t, ada.ID, calls[0].account.ID)

	// Signed in already: the sign-in page goes straight to next.
	assert.Equal(t, "/open?return_to=%2Fx", c.get("/login?next="+url.QueryEscape("/open?return_to=%2Fx")).header.Get("Location"))
}

// An open redirect through next is refused: the sign-in continues to /.
func TestNextIsOnlyALocalPath(t *testing.T) {
	f := setup(t)
	f.account("ada@example.com", false)
	for _, next := range []string{"//evil.example", "/\\evil.example", "/%2F%2Fevil.example", "https://evil.example", "/a\r\nx"} {
		c := f.client()
		page := c.get("/login?next=" + url.QueryEscape(next))
		assert.Zero(t, page.doc.Find(`input[name="next"]`).Length(), "%q is not carried", next)
		r := c.post("/login", url.Values{"_csrf": {c.csrf("/login")}, "email": {"ada@example.com"}, "password": {testPassword}, "next": {next}})
		require.Equal(t, http.StatusSeeOther, r.status)
		assert.Equal(t, "/", r.header.Get("Location"), "%q", next)
	}
}

// The portal's handoff: a first arrival creates the account (no password,
// the token's names), opens a session and launches to return_to; GET and
// POST alike, cross-site and without a CSRF token.
func TestSSOJWT(t *testing.T) {
	f := setup(t)
	c := f.client()
	tok := f.portalToken(portal.Claims{Email: "Grace@Example.com", GivenName: "Grace", FamilyName: "Hopper", ReturnTo: "/editor/projects/7"})
	r := c.post("/sso/jwt", url.Values{"jwt": {tok}}, "Sec-Fetch-Site", "cross-site")
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	assert.Equal(t, "https://platform.example/api/5/login-token/login/TOKEN-Grace@Example.com", r.header.Get("Location"))
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
	assert.Equal(t, "no-referrer", r.header.Get("Referrer-Policy"))
	acct, err := f.accts.AccountByEmail(t.Context(), "grace@example.com")
	require.NoError(t, err)
	assert.Equal(t, "Grace Hopper", acct.Name())
	assert.Equal(t, passhash.NoPassword, acct.PasswordHash, "no password: the portal is the way in")
	calls := f.launcher.made()
	require.Len(t, calls, 1)
	assert.Equal(t, "/editor/projects/7", calls[0].returnTo)
	assert.Equal(t, http.StatusOK, c.get("/").status, "a bridge session")
	evs := f.accts.eventsOf(store.KindLogin)
	require.Len(t, evs, 1)
	assert.Equal(t, "portal token", evs[0].Detail)

	// A returning user by GET, the email in another case: the same account.
	other := f.client()
	r = other.get("/sso/jwt?jwt=" + f.portalToken(portal.Claims{Email: "grace@EXAMPLE.com"}))
	require.Equal(t, http.StatusSeeOther, r.status)
	n, _, _ := f.accts.ListAccounts(t.Context(), store.AccountFilter{})
	assert.Len(t, n, 1, "matched case-insensitively: no second account")
}

// Refusals: one 401 page, no session, no account, nothing launched; the
// log says which rule failed.
func TestSSOJWTRefused(t *testing.T) {
	f := setup(t)
	c := f.client()
	good := f.portalToken(portal.Claims{Email: "ada@example.com"})
	bad := good[:len(good)-2] + "xx"
	for name, tok := range map[string]string{"bad signature": bad, "empty": "", "garbage": "a.b.c"} {
		r := c.post("/sso/jwt", url.Values{"jwt": {tok}})
		assert.Equal(t, http.StatusUnauthorized, r.status, name)
		assert.Equal(t, "portal-refused", r.class(), name)
		assert.NotContains(t, r.body, "signature", "%s: the page does not say why", name)
	}
	assert.Contains(t, f.logs.String(), "signature is invalid", "the log says why")
	assert.Empty(t, c.cookie(SessionCookie), "no session")
	assert.Empty(t, f.launcher.made())
	n, _, _ := f.accts.ListAccounts(t.Context(), store.AccountFilter{})
	assert.Empty(t, n, "no account made")

	r := c.post("/sso/jwt", url.Values{"jwt": {good}})
	require.Equal(t, http.StatusSeeOther, r.status, "the good token was not spent by the refusals")
	r = f.client().post("/sso/jwt", url.Values{"jwt": {good}})
	assert.Equal(t, http.StatusUnauthorized, r.status, "replayed")
	assert.Contains(t, f.logs.String(), "a replay")
}

// A token made for another service (another audience) is refused like
// any other, but its page says the link was not meant for this bridge:
// not that it expired or was used.
func TestSSOJWTOtherAudience(t *testing.T) {
	f := setup(t)
	c := f.client()
	tok, err := portal.SignHS256([]byte(portalSecret), portalIssuer, "https://other-service.example", portal.Claims{Email: "ada@example.com"}, f.clock.Now())
	require.NoError(t, err)
	r := c.post("/sso/jwt", url.Values{"jwt": {tok}})
	assert.Equal(t, http.StatusUnauthorized, r.status)
	assert.Equal(t, "portal-refused", r.class())
	assert.Contains(t, r.text("#refusal-lead"), "made for another service, not for this one")
	assert.NotContains(t, r.body, "expired or been used")
	assert.Empty(t, c.cookie(SessionCookie), "no session")

	r = c.post("/sso/jwt", url.Values{"jwt": {"a.b.c"}})
	assert.Contains(t, r.body, "expired or been used", "other refusals keep their page")
	assert.NotContains(t, r.body, "made for another service")
}

func TestSSOJWTDisabledAccount(t *testing.T) {
	f := setup(t)
	ada := f.account("ada@example.com", false)
	require.NoError(t, f.accts.SetDisabled(t.Context(), ada.ID, true))
	c := f.client()
	r := c.get("/sso/jwt?jwt=" + f.portalToken(portal.Claims{Email: "ada@example.com"}))
	assert.Equal(t, http.StatusForbidden, r.status)
	assert.Equal(t, "account-disabled", r.class())
	assert.Empty(t, c.cookie(SessionCookie), "no session")
	assert.Empty(t, f.launcher.made())
}

func TestSSOJWTWithoutAccountCreation(t *testing.T) {
	f := setup(t, func(d *Deps) { wayOf[*portal.Way](d).Source.CreateAccounts = false })
	r := f.client().get("/sso/jwt?jwt=" + f.portalToken(portal.Claims{Email: "new@example.com"}))
	assert.Equal(t, http.StatusUnauthorized, r.status)
	_, err := f.accts.AccountByEmail(t.Context(), "new@example.com")
	assert.ErrorIs(t, err, store.ErrNotFound)
	off := setup(t, withoutWay[*portal.Way])
	assert.Equal(t, http.StatusNotFound, off.client().get("/sso/jwt?jwt=x").status, "not configured: no such route")
}

// A set-password link from the console: the page asks twice; a refused
// password keeps the link; the right one sets it, lifts a ban, signs in,
// and the link is gone.
func TestSetPasswordLink(t *testing.T) {
	f, admin, _, bob := adminFixture(t)
	r := admin.submit("/admin/accounts", fmt.Sprintf("/admin/accounts/%d/invite", bob.ID), nil)
	require.Equal(t, http.StatusOK, r.status)
	link := r.text("#invite-link")
	require.True(t, strings.HasPrefix(link, f.srv.URL+"/set-password?token="), link)
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"), "the page with the link is not cached")
	path := strings.TrimPrefix(link, f.srv.URL)
	token := strings.TrimPrefix(path, "/set-password?token=")
	f.accts.ban("bob@example.com", f.clock.Now().Add(time.Hour))

	c := f.client()
	page := c.get(path)
	require.Equal(t, http.StatusOK, page.status)
	assert.Equal(t, "no-referrer", page.header.Get("Referrer-Policy"))
	assert.Contains(t, page.text("main"), "bob@example.com")
	for name, form := range map[string]url.Values{
		"short":  {"password": {"short"}, "confirm": {"short"}},
		"spaces": {"password": {"          "}, "confirm": {"          "}},
		"common": {"password": {"iloveyou"}, "confirm": {"iloveyou"}},
		"differ": {"password": {"a long new password"}, "confirm": {"another long one"}},
	} {
		form.Set("token", token)
		r := c.submit(path, "/set-password", form)
		assert.Equal(t, http.StatusBadRequest, r.status, name)
		assert.NotEmpty(t, r.text("#error-summary li a"), name)
		if name == "common" {
			assert.Contains(t, r.text("#error-summary li a"), "one of the most common ones")
		}
	}
	r = c.submit(path, "/set-password", url.Values{"token": {token}, "password": {"a long new password"}, "confirm": {"a long new password"}})
	require.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, "/", r.header.Get("Location"))
	assert.Equal(t, http.StatusOK, c.get("/").status, "signed in")
	got, _ := f.accts.AccountByID(t.Context(), bob.ID)
	assert.Equal(t, "hash:a long new password", got.PasswordHash)
	assert.False(t, f.accts.banned("bob@example.com"), "the ban is lifted")

	gone := f.client().get(path)
	assert.Equal(t, http.StatusGone, gone.status, "used once")
	assert.Equal(t, 1, gone.doc.Find("#link-gone").Length())
	assert.Equal(t, http.StatusGone, f.client().get("/set-password?token=unknown").status)

	// An expired link.
	r = admin.submit("/admin/accounts", fmt.Sprintf("/admin/accounts/%d/invite", bob.ID), nil)
	expired := strings.TrimPrefix(r.text("#invite-link"), f.srv.URL)
	f.clock.Advance(accounts.PasswordLinkTTL + time.Second)
	assert.Equal(t, http.StatusGone, f.client().get(expired).status)
}

// A session the handoff began is an end user's, even for an admin: the
// console asks for a password (or the IdP) first, and opens after it;
// launches need nothing more. portal.admin_sessions lets it in at once.
func TestSSOJWTDoesNotOpenTheConsole(t *testing.T) {
	for _, allowed := range []bool{false, true} {
		t.Run(fmt.Sprintf("admin_sessions %v", allowed), func(t *testing.T) {
			f := setup(t, func(d *Deps) { d.HomeAdminSessions = allowed })
			f.account("kim@example.com", true)
			c := f.client()
			r := c.get("/sso/jwt?jwt=" + f.portalToken(portal.Claims{Email: "kim@example.com"}))
			require.Equal(t, http.StatusSeeOther, r.status)
			r = c.get("/admin/accounts?q=x")
			if allowed {
				assert.Equal(t, http.StatusOK, r.status)
				return
			}
			require.Equal(t, http.StatusSeeOther, r.status)
			assert.Equal(t, "/login?reauth=1&next=%2Fadmin%2Faccounts%3Fq%3Dx", r.header.Get("Location"))
			r = c.post("/admin/accounts/1/disable", url.Values{"_csrf": {c.csrf("/")}})
			assert.Equal(t, http.StatusSeeOther, r.status, "no action either")
			assert.Equal(t, "/login?reauth=1&next=%2Fadmin%2F", r.header.Get("Location"))
			acct, _ := f.accts.AccountByEmail(t.Context(), "kim@example.com")
			assert.False(t, acct.Disabled)

			page := c.get("/login?reauth=1&next=%2Fadmin%2Faccounts")
			require.Equal(t, http.StatusOK, page.status, "the sign-in page, not a redirect: the session is a handoff's")
			assert.Contains(t, page.text(".notice"), "To open the admin console")
			assert.Equal(t, http.StatusSeeOther, c.post("/launch", url.Values{"_csrf": {c.csrf("/")}}).status, "launches need nothing more")

			r = c.post("/login", url.Values{"_csrf": {c.csrf("/login?reauth=1")}, "email": {"kim@example.com"}, "password": {testPassword}, "next": {"/admin/accounts"}})
			require.Equal(t, http.StatusSeeOther, r.status)
			assert.Equal(t, "/admin/accounts", r.header.Get("Location"))
			assert.Equal(t, http.StatusOK, c.get("/admin/accounts").status, "after a password sign-in")
		})
	}
}

// The sample portal signs its token when its button is pressed: a page
// left open longer than a token lives still opens the editor.
func TestDemoPortalSignsAtTheClick(t *testing.T) {
	var f *fixture
	f = setup(t, func(d *Deps) {
		wayOf[*portal.Way](d).Demo = func() (portal.DemoPortal, error) {
			return portal.DemoPortal{Name: "Grace Hopper", Email: "grace@example.com", Token: f.portalToken(portal.Claims{Email: "grace@example.com"})}, nil
		}
		d.Home = views.WayBack{URL: "/demo/portal", Label: "Back to your portal"}
	})
	c := f.client()
	page := c.get("/demo/portal")
	require.Equal(t, http.StatusOK, page.status)
	tok := c.csrf("/demo/portal")
	f.clock.Advance(10 * time.Minute) // the page stayed open
	r := c.post("/demo/portal/open", url.Values{"_csrf": {tok}})
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	assert.Contains(t, r.header.Get("Location"), "TOKEN-grace@example.com", "the launch's exchange URL")
	assert.Equal(t, http.StatusForbidden, f.client().post("/demo/portal/open", url.Values{"_csrf": {"forged"}}).status, "the button's form carries the anti-forgery token")
}

// With portal.url, the pages a portal user meets lead back to the portal,
// not to the bridge's sign-in page where they have no password.
func TestBackLinksLeadToThePortal(t *testing.T) {
	for _, portalURL := range []string{"", "https://portal.partner.example/home"} {
		t.Run("portal.url "+portalURL, func(t *testing.T) {
			f := setup(t, func(d *Deps) { d.Home = views.WayBack{URL: portalURL, Label: "Back to your portal"} })
			r := f.client().get("/sso/jwt?jwt=not-a-token")
			require.Equal(t, http.StatusUnauthorized, r.status)
			back := r.doc.Find("#back-home").AttrOr("href", "")
			again := r.doc.Find("#again").AttrOr("href", "")
			if portalURL == "" {
				assert.Empty(t, back)
				assert.Empty(t, again)
				return
			}
			assert.Equal(t, portalURL, back, "the refused handoff's back link")
			assert.Equal(t, portalURL, again)

			// A portal user's own session (the handoff's) gets the portal too;
			// a password user's gets the bridge's start page.
			f.account("ada@example.com", false)
			c := f.client()
			require.Equal(t, http.StatusSeeOther, c.get("/sso/jwt?jwt="+f.portalToken(portal.Claims{Email: "ada@example.com"})).status)
			r = c.get("/no/such/page")
			assert.Equal(t, portalURL, r.doc.Find("#back-home").AttrOr("href", ""))
			pw := f.client()
			pw.signIn("ada@example.com")
			r = pw.get("/no/such/page")
			assert.Empty(t, r.doc.Find("#back-home").AttrOr("href", ""))
		})
	}
}

// unavailableOneTime is a store whose database does not answer.
type unavailableOneTime struct{}

func (unavailableOneTime) UseOnce(context.Context, string, string, time.Time) error {
	return fmt.Errorf("%w: no answer within 2s (store.timeout)", store.ErrUnavailable)
}

// A portal arrival while the database is away cannot be sent again (its
// token is one-time): the page says so, sends the user back to the portal
// for a fresh one, and changes nothing.
func TestPortalArrivalWhileTheDatabaseIsAway(t *testing.T) {
	for _, portalURL := range []string{"", "https://portal.example/home"} {
		f := setup(t)
		f.reconfigure(func(d *Deps) {
			v, err := portal.NewVerifier(portal.Config{Secret: portalSecret, Issuer: portalIssuer, Audience: portalAudience}, unavailableOneTime{}, f.clock.Now)
			require.NoError(t, err)
			wayOf[*portal.Way](d).Tokens, d.Home = v, views.WayBack{URL: portalURL, Label: "Back to your portal"}
		})
		r := f.client().get("/sso/jwt?jwt=" + f.portalToken(portal.Claims{Email: "grace@example.com"}))
		assert.Equal(t, http.StatusServiceUnavailable, r.status)
		assert.Equal(t, "store-unavailable", r.class())
		assert.Equal(t, "5", r.header.Get("Retry-After"))
		assert.Contains(t, r.text("#error-page"), "works only once")
		assert.Equal(t, portalURL, r.doc.Find("#again").AttrOr("href", ""), "back to the portal for a fresh link, when there is one")
		_, err := f.accts.AccountByEmail(t.Context(), "grace@example.com")
		assert.ErrorIs(t, err, store.ErrNotFound, "nothing was created")
		assert.NotContains(t, f.logs.String(), "level=ERROR", "an outage is logged once by the store's guard, not per request")
	}
}

// Following a portal link for another account while signed in (an admin
// who opens someone's link) does not switch the browser silently: it asks,
// naming both, and spends nothing; the switch is a form with the
// anti-forgery token. The same account, or nobody signed in, goes on at
// once.
func TestSSOJWTAsksBeforeSwitchingAccounts(t *testing.T) {
	f := setup(t)
	f.account("root@example.com", true)
	c := f.client()
	c.signIn("root@example.com")
	grace := f.portalToken(portal.Claims{Email: "grace@example.com", GivenName: "Grace", FamilyName: "Hopper"})

	r := c.post("/sso/jwt", url.Values{"jwt": {grace}}, "Sec-Fetch-Site", "cross-site")
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.Equal(t, "root@example.com", r.text("#signed-in-now"))
	assert.Equal(t, "grace@example.com", r.text("#arriving"))
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
	assert.Empty(t, f.launcher.made(), "nothing launched")
	_, err := f.accts.AccountByEmail(t.Context(), "grace@example.com")
	assert.ErrorIs(t, err, store.ErrNotFound, "no account made")
	assert.Equal(t, http.StatusOK, c.get("/admin/accounts").status, "still signed in as root, the admin")

	// The switch needs the page's anti-forgery token.
	assert.Equal(t, http.StatusBadRequest, c.post("/sso/jwt/confirm", url.Values{"jwt": {grace}}).status)
	assert.Equal(t, http.StatusForbidden, c.post("/sso/jwt/confirm", url.Values{"jwt": {grace}, "_csrf": {"forged"}}).status)
	assert.Equal(t, http.StatusForbidden, c.post("/sso/jwt/confirm", url.Values{"jwt": {grace}, "_csrf": {r.form("_csrf")}}, "Sec-Fetch-Site", "cross-site").status)
	assert.Empty(t, f.launcher.made())

	r = c.post("/sso/jwt/confirm", url.Values{"jwt": {grace}, "_csrf": {r.form("_csrf")}})
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Len(t, f.launcher.made(), 1)
	assert.Equal(t, "grace@example.com", f.launcher.made()[0].account.Email, "switched: grace's editor")
	r = c.post("/sso/jwt/confirm", url.Values{"jwt": {grace}, "_csrf": {c.csrf("/")}})
	assert.Equal(t, http.StatusUnauthorized, r.status, "the token is spent once")

	assert.Equal(t, http.StatusForbidden, c.get("/admin/accounts").status, "signed in as grace now, no admin")
	// Signed in as grace now: grace's own link goes on at once.
	again := f.portalToken(portal.Claims{Email: "GRACE@example.com"})
	r = c.post("/sso/jwt", url.Values{"jwt": {again}}, "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusSeeOther, r.status, "the same account: no question")
	// Nobody signed in: at once, as before.
	r = f.client().post("/sso/jwt", url.Values{"jwt": {f.portalToken(portal.Claims{Email: "kat@example.com"})}}, "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusSeeOther, r.status)
	// A refused token is refused before any question.
	r = f.client().post("/sso/jwt", url.Values{"jwt": {"a.b.c"}})
	assert.Equal(t, http.StatusUnauthorized, r.status)
	// So is an arrival the admission would refuse (an address the portal
	// is not trusted for), and its token stays unspent: no question first.
	outsider := f.portalToken(portal.Claims{Email: "eve@elsewhere.invalid"})
	r = c.post("/sso/jwt", url.Values{"jwt": {outsider}}, "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, r.status, r.body)
	assert.Empty(t, r.doc.Find("#arriving").Nodes, "no switch question")
	assert.Equal(t, "arrival-refused", r.class())
	_, err = f.accts.AccountByEmail(t.Context(), "eve@elsewhere.invalid")
	assert.ErrorIs(t, err, store.ErrNotFound)
}
