package portal_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/portal"
	"github.com/ssobridge/ssobridge/wayin/wayintest"
)

var (
	handoffSecret = []byte(strings.Repeat("k", 32))
	portalSource  = signin.Source{ID: "portal:" + issuer, Name: "portal", Key: "portal"}
)

// handoffWay is the portal's way on a Kit whose single-use ids the
// verifier spends, as the bridge wires it.
func handoffWay(t *testing.T, k *wayintest.Kit) (*portal.Way, *http.Client, string) {
	t.Helper()
	v, err := portal.NewVerifier(portal.Config{Secret: handoffSecret, Issuer: issuer, Audience: audience}, k, nil)
	require.NoError(t, err)
	w := &portal.Way{Tokens: v, Source: portalSource}
	srv := wayintest.Serve(t, w, k)
	return w, wayintest.Browser(t), srv.URL
}

func token(t *testing.T, email, returnTo string) string {
	t.Helper()
	tok, err := portal.SignHS256(handoffSecret, issuer, audience, portal.Claims{Email: email, GivenName: "Ada", FamilyName: "L", ReturnTo: returnTo}, time.Now())
	require.NoError(t, err)
	return tok
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

func post(t *testing.T, c *http.Client, u string, form url.Values) (*http.Response, string) {
	t.Helper()
	resp, err := c.PostForm(u, form)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// A verified token signs its user in and launches to its return_to, once:
// by a link (GET) or a form (POST).
func TestHandoffSignsInAndLaunches(t *testing.T) {
	for _, method := range []string{"GET", "POST"} {
		t.Run(method, func(t *testing.T) {
			k := wayintest.NewKit()
			_, c, base := handoffWay(t, k)
			tok := token(t, "Ada@School.example", "/editor/project/9")
			var resp *http.Response
			if method == "GET" {
				resp, _ = get(t, c, base+portal.HandoffPath+"?jwt="+url.QueryEscape(tok))
			} else {
				resp, _ = post(t, c, base+portal.HandoffPath, url.Values{"jwt": {tok}})
			}
			require.Equal(t, http.StatusSeeOther, resp.StatusCode)
			assert.Equal(t, "/launch?return_to="+url.QueryEscape("/editor/project/9"), resp.Header.Get("Location"))
			require.Len(t, k.Admitted(), 1)
			a := k.Admitted()[0]
			assert.Equal(t, portalSource, a.Source)
			assert.Equal(t, "ada@school.example", a.Subject, "without sub, the address's key")
			assert.Equal(t, "Ada@School.example", a.Email)
			assert.Equal(t, "Ada", a.Names.Given)
			assert.False(t, a.Admin, "the portal grants no admin")
			require.Len(t, k.Arrived(), 1)
			assert.Equal(t, wayin.Landing{How: "portal token", Launch: true, ReturnTo: "/editor/project/9", Handoff: true}, k.Arrived()[0].Landing, "a handoff: signed in at once, the session the handoff's")

			// The same token again: spent.
			resp, body := get(t, c, base+portal.HandoffPath+"?jwt="+url.QueryEscape(tok))
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
			assert.Equal(t, "portal_refused", resp.Header.Get("X-Refusal"))
			assert.NotContains(t, body, "replay", "the page does not say why")
			require.Len(t, k.Refused(), 1)
			assert.ErrorIs(t, k.Refused()[0].Refusal, portal.ErrRefused)
			assert.Contains(t, k.Refused()[0].Refusal.Error(), "used before", "the log does")
		})
	}
}

func TestHandoffRefusals(t *testing.T) {
	otherAudience, err := portal.SignHS256(handoffSecret, issuer, "https://other.example", portal.Claims{Email: "a@school.example"}, time.Now())
	require.NoError(t, err)
	wrongKey, err := portal.SignHS256([]byte(strings.Repeat("x", 32)), issuer, audience, portal.Claims{Email: "a@school.example"}, time.Now())
	require.NoError(t, err)
	tests := []struct {
		name, token   string
		otherAudience bool
	}{
		{"no token", "", false},
		{"not a token", "not-a-jwt", false},
		{"signed with another key", wrongKey, false},
		{"meant for another service", otherAudience, true},
		{"expired", func() string {
			tok, err := portal.SignHS256(handoffSecret, issuer, audience, portal.Claims{Email: "a@school.example"}, time.Now().Add(-time.Hour))
			require.NoError(t, err)
			return tok
		}(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := wayintest.NewKit()
			_, c, base := handoffWay(t, k)
			resp, _ := get(t, c, base+portal.HandoffPath+"?jwt="+url.QueryEscape(tt.token))
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
			assert.Equal(t, "portal_refused", resp.Header.Get("X-Refusal"))
			require.Len(t, k.Refused(), 1)
			r := k.Refused()[0].Refusal
			assert.ErrorIs(t, r, portal.ErrRefused)
			assert.Equal(t, tt.otherAudience, strings.Contains(string(r.Info.Wording.Lead), "made for another service"), "the page tells a link made for another service apart")
			assert.Equal(t, "portal-refused", r.Info.Wording.Class)
			assert.Empty(t, k.Admitted())
		})
	}
}

// A browser signed in as another account is asked before the token is
// spent; its confirmation (posted from the bridge's page) goes on.
func TestHandoffAsksBeforeSwitchingAccounts(t *testing.T) {
	k := wayintest.NewKit()
	k.SignInAs(store.Account{ID: 3, Email: "bob@school.example"})
	_, c, base := handoffWay(t, k)
	tok := token(t, "ada@school.example", "")
	resp, body := get(t, c, base+portal.HandoffPath+"?jwt="+url.QueryEscape(tok))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "bob@school.example")
	assert.Contains(t, body, "ada@school.example")
	assert.Contains(t, body, portal.ConfirmPath)
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	assert.Empty(t, k.Admitted(), "not yet")

	// The question did not spend the token: the answer uses it.
	resp, _ = post(t, c, base+portal.ConfirmPath, url.Values{"jwt": {tok}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Len(t, k.Arrived(), 1)
	assert.Equal(t, "ada@school.example", k.Arrived()[0].Account.Email)

	// The same account signed in: no question.
	resp, _ = get(t, c, base+portal.HandoffPath+"?jwt="+url.QueryEscape(token(t, "ADA@school.example", "")))
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
}

// An arrival the admission would refuse is refused before any question;
// no account and none to make is the handoff's own 401.
func TestHandoffAdmissionRefusals(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		class  string
	}{
		{"no account", signin.ErrNoAccount, http.StatusUnauthorized, "portal_refused"},
		{"disabled", wayin.Refused(signin.ErrDisabled, "disabled"), http.StatusForbidden, "disabled"},
	}
	for _, tt := range tests {
		for _, signedIn := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, another signed in: %v", tt.name, signedIn), func(t *testing.T) {
				k := wayintest.NewKit()
				k.Decide = func(signin.Arrival) (store.Account, error) { return store.Account{}, tt.err }
				if signedIn {
					k.SignInAs(store.Account{ID: 3, Email: "bob@school.example"})
				}
				_, c, base := handoffWay(t, k)
				resp, _ := get(t, c, base+portal.HandoffPath+"?jwt="+url.QueryEscape(token(t, "ada@school.example", "")))
				assert.Equal(t, tt.status, resp.StatusCode)
				assert.Equal(t, tt.class, resp.Header.Get("X-Refusal"))
				assert.Empty(t, k.Arrived())
			})
		}
	}
}

// The embedded demo's sample portal: its page, and its button's freshly
// signed token handed over as /sso/jwt takes it.
func TestDemoPortal(t *testing.T) {
	k := wayintest.NewKit()
	v, err := portal.NewVerifier(portal.Config{Secret: handoffSecret, Issuer: issuer, Audience: audience}, k, nil)
	require.NoError(t, err)
	w := &portal.Way{Tokens: v, Source: portalSource, Demo: func() (portal.DemoPortal, error) {
		return portal.DemoPortal{Email: "demo@example.com", Token: token(t, "demo@example.com", "")}, nil
	}}
	base := wayintest.Serve(t, w, k).URL
	c := wayintest.Browser(t)
	resp, body := get(t, c, base+portal.DemoPath)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "demo@example.com")
	resp, _ = post(t, c, base+portal.DemoPath+"/open", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Len(t, k.Arrived(), 1)
	assert.Equal(t, "demo@example.com", k.Arrived()[0].Account.Email)
}

func TestPortalWayDescribesItself(t *testing.T) {
	w := &portal.Way{}
	assert.Equal(t, "portal", w.Name())
	assert.False(t, w.Essential())
	assert.NoError(t, w.Ready(t.Context()))
	assert.Equal(t, []wayin.Exemption{{Path: portal.HandoffPath}}, w.Exempt(), "the handoff arrives cross-site; its confirmation does not")
	name, href := w.Button("/")
	assert.Empty(t, name+href, "the handoff starts at the portal")
}
