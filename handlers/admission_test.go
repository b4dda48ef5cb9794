package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin/lti"
	"github.com/ssobridge/ssobridge/wayin/oidc"
	"github.com/ssobridge/ssobridge/wayin/samlsso"
)

// openLMS registers the fixture's platform without email_domains: it
// reaches only the accounts it made or linked.
func openLMS(f *fixture, plat lti.Platform) {
	f.reconfigure(func(d *Deps) {
		wayOf[*lti.Way](d).Sources = map[string]signin.Source{lti.SourceKey(plat.Issuer, plat.ClientID): {ID: lti.SourceID(plat.Issuer, plat.ClientID), Name: "LTI: " + plat.Name,
			Key: "lti.platforms[1]", CreateAccounts: true, AdminAuthority: true}}
	})
}

// A registered LMS is no master key: a learner whose id_token claims the
// partner admin's address gets the refusal page, no session, no link, and
// the console stays closed; the admin keeps its role.
func TestAnOpenLMSCannotSignInAsThePartnerAdmin(t *testing.T) {
	f, plat, tool := ltiSetup(t)
	openLMS(f, tool.Platforms()[0])
	admin := f.account("pupil@school.example", true) // the learner's address
	c := f.client()
	r := ltiLaunchAs(t, c, plat, "learner")
	assert.Equal(t, http.StatusForbidden, r.status, r.body)
	assert.Equal(t, "arrival-refused", r.class())
	assert.Empty(t, f.launcher.made(), "nothing launched")
	assert.NotEqual(t, http.StatusOK, c.get("/admin/accounts").status, "no console")
	assert.Equal(t, "/login", c.get("/").header.Get("Location"), "no session")
	_, err := f.accts.AccountOfIdentity(t.Context(), lti.SourceID(plat.Issuer, plat.ClientID), ltiLearner.Sub)
	assert.ErrorIs(t, err, store.ErrNotFound, "nothing linked")
	a, err := f.accts.AccountByID(t.Context(), admin.ID)
	require.NoError(t, err)
	assert.True(t, a.Admin)
	assert.Contains(t, f.logs.String(), "lti.platforms[1].email_domains", "the log names the key to set")
}

// Signed in as one account, an arrival of another by any way in shows who
// is signed in and whom it signs in, and switches only on a POST from that
// page; nothing is launched before.
func TestArrivalsAskBeforeSwitchingAccounts(t *testing.T) {
	f, plat, _ := ltiSetup(t)
	f.account("boss@example.com", true)
	f.idp.id = oidc.Identity{Subject: "g-1", Email: "grace@example.com", EmailVerified: true}
	f.saml.id = samlsso.Identity{NameID: "s-1", Email: "sam@example.com"}
	for _, tc := range []struct {
		name     string
		arrive   func(c *client) *response
		arriving string
		lands    string // where the confirmation goes on to
	}{
		{"LTI", func(c *client) *response { return ltiLaunchAs(t, c, plat, "learner") }, "pupil@school.example",
			"https://platform.example/api/5/login-token/login/TOKEN-pupil@school.example"},
		{"OIDC", func(c *client) *response { return idpAnswer(c, "&code=x") }, "grace@example.com", "/"},
		{"SAML", func(c *client) *response {
			r := c.get("/auth/saml")
			relay, _ := url.Parse(r.header.Get("Location"))
			return c.hop(c.post("/saml/acs", url.Values{"SAMLResponse": {"x"}, "RelayState": {relay.Query().Get("RelayState")}}, "Sec-Fetch-Site", "cross-site"))
		}, "sam@example.com", "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := f.client()
			c.signIn("boss@example.com")
			before := len(f.launcher.made())
			r := tc.arrive(c)
			require.Equal(t, http.StatusOK, r.status, r.body)
			assert.Equal(t, "boss@example.com", r.text("#signed-in-now"))
			assert.Equal(t, tc.arriving, r.text("#arriving"))
			assert.Len(t, f.launcher.made(), before, "nothing launched before the answer")
			home := c.get("/")
			require.Equal(t, http.StatusOK, home.status)
			assert.Contains(t, home.body, "boss@example.com", "still the boss until the POST")

			grant := r.form("grant")
			require.NotEmpty(t, grant)
			assert.Equal(t, http.StatusForbidden, c.post(switchPath, url.Values{"grant": {grant}}, "Sec-Fetch-Site", "cross-site").status,
				"another site cannot confirm it")
			assert.Equal(t, http.StatusBadRequest, f.client().submit("/login", switchPath, url.Values{"grant": {grant}}).status,
				"another browser cannot use it")

			r = c.submit("/", switchPath, url.Values{"grant": {grant}})
			require.Equal(t, http.StatusSeeOther, r.status, r.body)
			assert.Equal(t, tc.lands, r.header.Get("Location"))
			assert.Contains(t, c.get("/").body, tc.arriving, "switched")
			assert.Equal(t, http.StatusBadRequest, c.submit("/", switchPath, url.Values{"grant": {grant}}).status, "used once")
		})
	}
}

// The framed launch's new-tab button dies with the account's sessions: it
// is refused (a 4xx page, never a 500) after "sign out everywhere", after
// the account is removed, and from another browser.
func TestFramedContinuationDiesWithTheAccountsSessions(t *testing.T) {
	f, plat, _ := ltiSetup(t)
	plat.SetFramed(true)
	framed := func() url.Values {
		r := ltiLaunchAs(t, f.client(), plat, "learner")
		require.Equal(t, http.StatusOK, r.status, r.body)
		return url.Values{"continuation": {r.form("continuation")}}
	}
	same := []string{"Origin", f.srv.URL, "Sec-Fetch-Site", "same-origin"}

	other := f.client().post("/lti/continue", framed(), append(same, "User-Agent", "Another Browser/1.0")...)
	assert.Equal(t, http.StatusBadRequest, other.status, "another browser")
	assert.Equal(t, "lti-stale", other.class())

	form := framed()
	pupil, err := f.accts.AccountByEmail(t.Context(), "pupil@school.example")
	require.NoError(t, err)
	require.NoError(t, f.accts.EndSessions(t.Context(), pupil.ID))
	r := f.client().post("/lti/continue", form, same...)
	assert.Equal(t, http.StatusBadRequest, r.status, "after sign out everywhere")
	assert.Equal(t, "lti-stale", r.class())

	form = framed()
	f.account("root@example.com", true)
	require.NoError(t, f.accts.DeleteAccount(t.Context(), pupil.ID))
	r = f.client().post("/lti/continue", form, same...)
	assert.Equal(t, http.StatusBadRequest, r.status, "after the account was removed")
	assert.Equal(t, "lti-stale", r.class())
	assert.Empty(t, f.launcher.made(), "nothing ever launched")
}

// The console shows which ways in an account is linked to.
func TestConsoleShowsTheWaysInOfAnAccount(t *testing.T) {
	f, plat, _ := ltiSetup(t)
	f.account("boss@example.com", true)
	require.Equal(t, http.StatusSeeOther, ltiLaunchAs(t, f.client(), plat, "learner").status)
	pupil, err := f.accts.AccountByEmail(t.Context(), "pupil@school.example")
	require.NoError(t, err)
	admin := f.client()
	admin.signIn("boss@example.com")
	r := admin.get("/admin/accounts/" + strconv.FormatInt(pupil.ID, 10))
	require.Equal(t, http.StatusOK, r.status, r.body)
	ways := r.text("#account-ways-in")
	assert.Contains(t, ways, lti.SourceID(plat.Issuer, plat.ClientID))
	assert.Contains(t, ways, ltiLearner.Sub)

	boss, err := f.accts.AccountByEmail(t.Context(), "boss@example.com")
	require.NoError(t, err)
	r = admin.get("/admin/accounts/" + strconv.FormatInt(boss.ID, 10))
	assert.Contains(t, r.text("#account-ways-in"), "none linked")
}
