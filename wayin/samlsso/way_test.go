package samlsso_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/samlsso"
	"github.com/ssobridge/ssobridge/wayin/wayintest"
)

// fakeIdP starts flows with numbered RelayStates and answers the one a
// posted response names with its identity (or its error).
type fakeIdP struct {
	mu       sync.Mutex
	n        int
	identity samlsso.Identity
	finish   error
	ready    error
	offered  [][]samlsso.Flow // the browser's pending flows at each Finish
}

func (f *fakeIdP) Start(_ context.Context, next string) (string, samlsso.Flow, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	fl := samlsso.Flow{RequestID: "req-" + strconv.Itoa(f.n), Relay: "relay-" + strconv.Itoa(f.n), Next: next, Expires: time.Now().Add(samlsso.FlowTTL)}
	return "https://idp.example/sso?RelayState=" + fl.Relay, fl, nil
}

func (f *fakeIdP) Finish(_ context.Context, flows []samlsso.Flow, form url.Values) (samlsso.Identity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.offered = append(f.offered, flows)
	if f.finish != nil {
		return samlsso.Identity{}, f.finish
	}
	for _, fl := range flows {
		if fl.Relay == form.Get("RelayState") {
			id := f.identity
			id.Flow = fl
			return id, nil
		}
	}
	if f.identity.Unsolicited {
		return f.identity, nil
	}
	return samlsso.Identity{}, samlsso.ErrBadState
}

func (f *fakeIdP) Metadata() ([]byte, error)   { return []byte(`<EntityDescriptor entityID="sp"/>`), nil }
func (f *fakeIdP) Ready(context.Context) error { return f.ready }

var samlSource = signin.Source{ID: "saml:https://idp.example", Name: "Springfield SAML", Key: "saml"}

func samlWay(t *testing.T, idp samlsso.IdP, k *wayintest.Kit) (*http.Client, string) {
	t.Helper()
	w := &samlsso.Way{IdP: idp, Source: samlSource, DisplayName: "Springfield SAML"}
	return wayintest.Browser(t), wayintest.Serve(t, w, k).URL
}

func startSAML(t *testing.T, c *http.Client, base, next string) string {
	t.Helper()
	resp, err := c.Get(base + samlsso.StartPath + "?next=" + url.QueryEscape(next))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	u, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	return u.Query().Get("RelayState")
}

func postACS(t *testing.T, c *http.Client, base string, form url.Values) *http.Response {
	t.Helper()
	resp, err := c.PostForm(base+samlsso.ACSPath, form)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func TestSAMLSignInHandsTheIdentityToTheAdmission(t *testing.T) {
	idp := &fakeIdP{identity: samlsso.Identity{NameID: "n-1", Email: "ada@school.example", GivenName: "Ada", Admin: true}}
	k := wayintest.NewKit()
	c, base := samlWay(t, idp, k)
	// Two tabs: two pending sign-ins, each answered on its own.
	first := startSAML(t, c, base, "/courses")
	second := startSAML(t, c, base, "/projects")
	resp := postACS(t, c, base, url.Values{"RelayState": {second}, "SAMLResponse": {"r"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "/projects", resp.Header.Get("Location"))
	require.Len(t, idp.offered[0], 2, "the response is checked against every pending flow of this browser")
	a := k.Admitted()[0]
	assert.Equal(t, samlSource, a.Source)
	assert.Equal(t, "n-1", a.Subject, "the NameID")
	assert.True(t, a.Admin)
	assert.Equal(t, wayin.Landing{How: "SAML identity provider", Via: "Springfield SAML", Next: "/projects"}, k.Arrived()[0].Landing)

	resp = postACS(t, c, base, url.Values{"RelayState": {first}, "SAMLResponse": {"r"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "/courses", resp.Header.Get("Location"), "the other tab's sign-in was kept")
	require.Len(t, idp.offered[1], 1, "the answered flow is used up")

	resp = postACS(t, c, base, url.Values{"RelayState": {first}, "SAMLResponse": {"r"}})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "each flow once")
}

// An IdP-initiated sign-in (no flow) lands on the home page.
func TestSAMLUnsolicitedLandsHome(t *testing.T) {
	k := wayintest.NewKit()
	c, base := samlWay(t, &fakeIdP{identity: samlsso.Identity{NameID: "n", Email: "a@school.example", Unsolicited: true}}, k)
	resp := postACS(t, c, base, url.Values{"SAMLResponse": {"r"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "/", resp.Header.Get("Location"))
}

func TestSAMLRefusals(t *testing.T) {
	tests := []struct {
		err        error
		status     int
		retryAfter int
	}{
		{fmt.Errorf("%w: dial tcp: connection refused", samlsso.ErrUnavailable), http.StatusServiceUnavailable, 30},
		{samlsso.ErrDenied, http.StatusForbidden, 0},
		{samlsso.ErrBadState, http.StatusBadRequest, 0},
		{samlsso.ErrReplayed, http.StatusBadRequest, 0},
		{samlsso.ErrFlowExpired, http.StatusBadRequest, 0},
		{samlsso.ErrExpired, http.StatusBadRequest, 0},
		{samlsso.ErrNotYetValid, http.StatusBadRequest, 0},
		{fmt.Errorf("%w: the signature does not verify", samlsso.ErrInvalid), http.StatusBadRequest, 0},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			k := wayintest.NewKit()
			c, base := samlWay(t, &fakeIdP{finish: tt.err}, k)
			relay := startSAML(t, c, base, "/")
			resp := postACS(t, c, base, url.Values{"RelayState": {relay}, "SAMLResponse": {"r"}})
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, "idp_refused", resp.Header.Get("X-Refusal"))
			r := k.Refused()[0]
			assert.ErrorIs(t, r.Refusal, tt.err)
			assert.Equal(t, "SAML identity provider", r.Source)
			assert.Equal(t, tt.retryAfter, r.Refusal.Info.RetryAfter)
			assert.Empty(t, k.Admitted())
		})
	}
	// A form that cannot be read is an invalid answer.
	k := wayintest.NewKit()
	c, base := samlWay(t, &fakeIdP{}, k)
	req, _ := http.NewRequest(http.MethodPost, base+samlsso.ACSPath, strings.NewReader("RelayState=%zz&SAMLResponse=r"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.ErrorIs(t, k.Refused()[0].Refusal, samlsso.ErrInvalid)
}

func TestSAMLMetadataAndDescription(t *testing.T) {
	idp := &fakeIdP{}
	k := wayintest.NewKit()
	c, base := samlWay(t, idp, k)
	resp, err := c.Get(base + samlsso.MetadataPath)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "application/samlmetadata+xml", resp.Header.Get("Content-Type"))
	assert.Contains(t, string(body), `entityID="sp"`)
	assert.Empty(t, resp.Cookies(), "machines read it: no cookie")

	w := &samlsso.Way{IdP: idp, DisplayName: "Springfield SAML"}
	assert.Equal(t, "saml", w.Name())
	assert.True(t, w.Essential())
	assert.Equal(t, []wayin.Exemption{{Path: samlsso.ACSPath}, {Path: samlsso.MetadataPath, Machine: true}}, w.Exempt())
	name, href := w.Button("/x")
	assert.Equal(t, "Springfield SAML", name)
	assert.Equal(t, samlsso.StartPath+"?next=%2Fx", href)
	idp.ready = samlsso.ErrUnavailable
	assert.ErrorIs(t, w.Ready(t.Context()), samlsso.ErrUnavailable)
	w.Watch(t.Context(), nil) // not an *SP: nothing to read again, returns at once
}
