package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/seal"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/samlsso"
)

// The ACS takes the IdP's cross-site POST without an anti-forgery token,
// lands where the flow says, and uses the flow once; the account rules are
// those of every way in.
func TestSAMLACS(t *testing.T) {
	f := setup(t)
	f.saml.id = samlsso.Identity{Email: "grace@example.com", GivenName: "Grace", FamilyName: "Hopper", Admin: true}
	c := f.client()
	r := c.get("/auth/saml?next=" + url.QueryEscape("/open?return_to=/editor/projects/3"))
	require.Equal(t, http.StatusSeeOther, r.status)
	relay, _ := url.Parse(r.header.Get("Location"))
	form := url.Values{"SAMLResponse": {"PFJlc3BvbnNlLz4="}, "RelayState": {relay.Query().Get("RelayState")}}
	r = c.hop(c.post("/saml/acs", form, "Sec-Fetch-Site", "cross-site", "Origin", "https://idp.example"))
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	assert.Equal(t, "/open?return_to=/editor/projects/3", r.header.Get("Location"))
	acct, err := f.accts.AccountByEmail(t.Context(), "grace@example.com")
	require.NoError(t, err)
	assert.Equal(t, "Hopper", acct.LastName)
	assert.True(t, acct.Admin, "a member of saml.admin_group")
	assert.Equal(t, http.StatusOK, c.get("/").status, "signed in")

	r = c.hop(c.post("/saml/acs", form, "Sec-Fetch-Site", "cross-site"))
	assert.Equal(t, http.StatusBadRequest, r.status, "the flow is used once")
	assert.Equal(t, "idp-state", r.class())
	assert.Equal(t, 1, strings.Count(f.logs.String(), "SAML sign-in refused"), "one log line")
}

// The flow cookie: over https SameSite=None and Secure (the IdP's post is
// cross-site), over http Lax; the newest four flows are kept.
func TestSAMLFlowCookie(t *testing.T) {
	for _, secure := range []bool{false, true} {
		f := setup(t, func(d *Deps) { d.Sessions.Secure = secure })
		c := f.client()
		var ck *http.Cookie
		for range 6 {
			r := c.get("/auth/saml")
			require.Equal(t, http.StatusSeeOther, r.status)
			for _, k := range (&http.Response{Header: r.header}).Cookies() {
				if strings.HasSuffix(k.Name, samlsso.FlowCookie) {
					ck = k
				}
			}
		}
		require.NotNil(t, ck)
		if secure {
			assert.Equal(t, "__Host-"+samlsso.FlowCookie, ck.Name)
			assert.Equal(t, http.SameSiteNoneMode, ck.SameSite)
			assert.True(t, ck.Secure)
		} else {
			assert.Equal(t, http.SameSiteLaxMode, ck.SameSite)
		}
		assert.True(t, ck.HttpOnly)
		var flows []struct {
			Flow samlsso.Flow `json:"f"`
		}
		h := f.deps.Sessions
		require.NoError(t, seal.New("saml flow", h.keys(), h.previousKeys(), 0, f.clock.Now).OpenJSON(ck.Name, ck.Value, &flows))
		require.Len(t, flows, wayin.JarMax)
		assert.Equal(t, "relay-6", flows[3].Flow.Relay, "the newest kept")
		assert.Equal(t, "relay-3", flows[0].Flow.Relay)
	}
}

// Another site that sends the browser to /auth/saml again and again (four
// times and more) pushes out only flows like its own: the person's own
// click, from the sign-in page, still signs in.
func TestSAMLOwnFlowIsNotPushedOut(t *testing.T) {
	f := setup(t)
	f.saml.id = samlsso.Identity{Email: "grace@example.com"}
	c := f.client()
	r := c.get("/auth/saml", "Sec-Fetch-Site", "same-origin") // the button on the sign-in page
	require.Equal(t, http.StatusSeeOther, r.status)
	own, _ := url.Parse(r.header.Get("Location"))
	for range 2 * wayin.JarMax {
		require.Equal(t, http.StatusSeeOther, c.get("/auth/saml", "Sec-Fetch-Site", "cross-site").status)
	}
	form := url.Values{"SAMLResponse": {"PFJlc3BvbnNlLz4="}, "RelayState": {own.Query().Get("RelayState")}}
	r = c.hop(c.post("/saml/acs", form, "Sec-Fetch-Site", "cross-site", "Origin", "https://idp.example"))
	require.Equal(t, http.StatusSeeOther, r.status, "the person's own flow is still there: %s", r.body)
	assert.Equal(t, http.StatusOK, c.get("/").status, "signed in")
}

// A store outage during a SAML sign-in (recording the assertion) is the
// "back in a moment" page, not the internal-error page.
func TestSAMLStoreOutage(t *testing.T) {
	f := setup(t)
	f.saml.finishErr = fmt.Errorf("saml: recording the assertion: %w", store.ErrUnavailable)
	r := samlAnswer(f.client())
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.Equal(t, "store-unavailable", r.class())
	assert.NotEmpty(t, r.header.Get("Retry-After"))
	assert.Contains(t, f.logs.String(), "SAML sign-in refused")
}
