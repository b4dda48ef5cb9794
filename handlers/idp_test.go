package handlers

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin/oidc"
	"github.com/ssobridge/ssobridge/wayin/portal"
)

// The login page offers the IdP, keeps next through it, and hides the
// password form when oidc.local_login is off (reachable at ?local=1 unless
// the fallback is off too, when password sign-in is refused outright).
func TestLoginPageWithIdP(t *testing.T) {
	f := setup(t)
	page := f.client().get("/login?next=" + url.QueryEscape("/open?return_to=%2Fe"))
	assert.Equal(t, "Sign in with Test IdP", page.text("#idp-sign-in"))
	assert.Equal(t, "/auth/oidc?next="+url.QueryEscape("/open?return_to=%2Fe"), page.doc.Find("#idp-sign-in").AttrOr("href", ""))
	assert.Equal(t, 1, page.doc.Find("#password").Length(), "local_login on: the form too")

	hidden := setup(t, func(d *Deps) { d.PasswordForm.Hidden = true })
	hidden.account("ada@example.com", true)
	c := hidden.client()
	assert.Zero(t, c.get("/login").doc.Find("#password").Length(), "local_login off: no form")
	local := c.get("/login?local=1")
	assert.Equal(t, 1, local.doc.Find("#password").Length(), "the fallback")
	assert.Equal(t, "1", local.doc.Find(`input[name="local"]`).AttrOr("value", ""), "a failed attempt shows the form again")
	r := c.post("/login", url.Values{"_csrf": {c.csrf("/login?local=1")}, "local": {"1"}, "email": {"ada@example.com"}, "password": {testPassword}})
	assert.Equal(t, http.StatusSeeOther, r.status, "the fallback still signs in")

	off := setup(t, func(d *Deps) { d.PasswordForm = PasswordForm{Hidden: true} })
	off.account("ada@example.com", true)
	oc := off.client()
	assert.Zero(t, oc.get("/login?local=1").doc.Find("#password").Length())
	// A valid form token comes from the portal page of an IdP sign-in.
	off.idp.id = oidc.Identity{Email: "grace@example.com", EmailVerified: true}
	require.Equal(t, http.StatusSeeOther, idpAnswer(oc, "&code=x").status)
	r = oc.post("/login", url.Values{"_csrf": {oc.csrf("/")}, "email": {"ada@example.com"}, "password": {testPassword}})
	assert.Equal(t, http.StatusNotFound, r.status, "password sign-in is off")
}

// The account rules of an IdP sign-in: created on first sign-in, admin by
// the group at each sign-in (the last admin kept), disabled refused.
func TestIdPAccountRules(t *testing.T) {
	f := setup(t)
	f.idp.id = oidc.Identity{Email: "Grace@Example.com", EmailVerified: true, Name: "Grace Brewster Hopper", Admin: true}
	c := f.client()
	r := idpAnswer(c, "&code=x")
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	g, err := f.accts.AccountByEmail(t.Context(), "grace@example.com")
	require.NoError(t, err)
	assert.Equal(t, "Grace Brewster", g.FirstName)
	assert.Equal(t, "Hopper", g.LastName)
	assert.True(t, g.Admin, "in the admin group")
	assert.Equal(t, passhash.NoPassword, g.PasswordHash)

	f.idp.id.Admin = false
	require.Equal(t, http.StatusSeeOther, idpAnswer(f.client(), "&code=x").status)
	g, _ = f.accts.AccountByID(t.Context(), g.ID)
	assert.True(t, g.Admin, "the last admin stays admin")
	assert.Contains(t, f.logs.String(), "the last admin is not an admin by oidc's rule; kept as admin")

	f.account("root@example.com", true)
	require.Equal(t, http.StatusSeeOther, idpAnswer(f.client(), "&code=x").status)
	g, _ = f.accts.AccountByID(t.Context(), g.ID)
	assert.False(t, g.Admin, "another admin exists: leaving the group takes it away")

	require.NoError(t, f.accts.SetDisabled(t.Context(), g.ID, true))
	d := f.client()
	r = idpAnswer(d, "&code=x")
	assert.Equal(t, http.StatusForbidden, r.status)
	assert.Equal(t, "account-disabled", r.class())
	assert.Equal(t, "/login", d.get("/").header.Get("Location"), "no session")

	nocreate := setup(t, func(d *Deps) { wayOf[*oidc.Way](d).Source.CreateAccounts = false })
	nocreate.idp.id = oidc.Identity{Email: "new@example.com", EmailVerified: true}
	r = idpAnswer(nocreate.client(), "&code=x")
	assert.Equal(t, http.StatusForbidden, r.status)
	assert.Equal(t, "idp-denied", r.class())
	_, err = nocreate.accts.AccountByEmail(t.Context(), "new@example.com")
	assert.ErrorIs(t, err, store.ErrNotFound)
}

// oidc.allow_unverified_email lets an unverified email in.
func TestIdPAllowUnverifiedEmail(t *testing.T) {
	f := setup(t, func(d *Deps) { wayOf[*oidc.Way](d).AllowUnverifiedEmail = true })
	f.idp.id = oidc.Identity{Email: "new@example.com", EmailVerified: false}
	c := f.client()
	require.Equal(t, http.StatusSeeOther, idpAnswer(c, "&code=x").status)
	assert.Equal(t, http.StatusOK, c.get("/").status, "signed in")
}

// An address with an invisible character from the identity provider
// (kim\u200b@ beside the admin kim@) is refused with the page of an answer
// that did not pass the checks, naming the character; no account is made
// and nobody is signed in. The portal's handoff refuses it too.
func TestInvisibleCharacterInAnArrivingAddress(t *testing.T) {
	f := setup(t)
	f.account("kim@partner.example", true)
	f.idp.id = oidc.Identity{Email: "kim\u200b@partner.example", EmailVerified: true}
	c := f.client()
	r := idpAnswer(c, "&code=x")
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Equal(t, "idp-invalid", r.class())
	assert.Contains(t, f.logs.String(), "U+200B")
	assert.Equal(t, "/login", c.get("/").header.Get("Location"), "not signed in")
	n, _, err := f.accts.ListAccounts(t.Context(), store.AccountFilter{})
	require.NoError(t, err)
	assert.Len(t, n, 1, "no second kim")

	h := f.client()
	r = h.post("/sso/jwt", url.Values{"jwt": {f.portalToken(portal.Claims{Email: "kim\ufeff@partner.example"})}})
	assert.Equal(t, http.StatusUnauthorized, r.status)
	assert.Equal(t, "portal-refused", r.class())
	assert.Contains(t, f.logs.String(), "U+FEFF")
	n, _, _ = f.accts.ListAccounts(t.Context(), store.AccountFilter{})
	assert.Len(t, n, 1)
}
