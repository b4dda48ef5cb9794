package oidc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/wayintest"
)

// fakeRP is the IdP's side: Start hands out a flow with a fixed state,
// Finish answers as told.
type fakeRP struct {
	mu       sync.Mutex
	identity Identity
	finish   error
	discover error
	started  []string // the redirect URLs Start was given
}

func (f *fakeRP) Start(_ context.Context, redirectURL, next string) (string, Flow, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, redirectURL)
	flow := Flow{State: "state-1", Nonce: "n", Verifier: "v", Next: next, RedirectURL: redirectURL, Expires: time.Now().Add(FlowTTL)}
	return "https://idp.example/authorize?state=" + flow.State, flow, nil
}

func (f *fakeRP) Finish(_ context.Context, fl Flow, q url.Values) (Identity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if q.Get("state") != fl.State {
		return Identity{}, fmt.Errorf("%w: the state differs", ErrBadState)
	}
	return f.identity, f.finish
}

func (f *fakeRP) Discover(context.Context) error { return f.discover }

var source = signin.Source{ID: "oidc", Name: "Springfield IdP", Key: "oidc"}

func newWay(rp RP) *Way { return &Way{RP: rp, Source: source, DisplayName: "Springfield IdP"} }

// signInStarted is a browser that began a sign-in at /auth/oidc?next=...
func signInStarted(t *testing.T, base string, next string) *http.Client {
	t.Helper()
	c := wayintest.Browser(t)
	resp, err := c.Get(base + StartPath + "?next=" + url.QueryEscape(next))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "https://idp.example/authorize?state=state-1", resp.Header.Get("Location"))
	return c
}

func callback(t *testing.T, c *http.Client, base, query string) *http.Response {
	t.Helper()
	resp, err := c.Get(base + CallbackPath + "?" + query)
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

func TestSignInHandsTheIdentityToTheAdmission(t *testing.T) {
	rp := &fakeRP{identity: Identity{Subject: "sub-1", Email: "ada@school.example", EmailVerified: true, GivenName: "Ada", FamilyName: "L", Admin: true}}
	k := wayintest.NewKit()
	srv := wayintest.Serve(t, newWay(rp), k)
	c := signInStarted(t, srv.URL, "/courses?x=1")
	assert.Equal(t, []string{srv.URL + CallbackPath}, rp.started, "the callback on the bridge's own URL")

	resp := callback(t, c, srv.URL, "state=state-1&code=c")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "/courses?x=1", resp.Header.Get("Location"), "on to where the sign-in was going")
	require.Len(t, k.Admitted(), 1)
	a := k.Admitted()[0]
	assert.Equal(t, source, a.Source)
	assert.Equal(t, "sub-1", a.Subject)
	assert.Equal(t, "ada@school.example", a.Email)
	assert.Equal(t, "Ada", a.Names.Given)
	assert.True(t, a.Admin)
	require.Len(t, k.Arrived(), 1)
	assert.Equal(t, wayin.Landing{How: "identity provider", Via: "Springfield IdP", Next: "/courses?x=1"}, k.Arrived()[0].Landing)

	// The flow is used once: the same answer again has no flow to match.
	resp = callback(t, c, srv.URL, "state=state-1&code=c")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "idp_refused", resp.Header.Get("X-Refusal"))
	assert.ErrorIs(t, k.Refused()[0].Refusal, ErrBadState)
}

func TestFlowCookie(t *testing.T) {
	for _, https := range []bool{false, true} {
		t.Run(fmt.Sprint("https=", https), func(t *testing.T) {
			k := wayintest.NewKit()
			k.HTTPS = https
			srv := wayintest.Serve(t, newWay(&fakeRP{}), k)
			resp, err := wayintest.Browser(t).Get(srv.URL + StartPath)
			require.NoError(t, err)
			resp.Body.Close()
			cookies := resp.Cookies()
			require.Len(t, cookies, 1)
			ck := cookies[0]
			if https {
				assert.Equal(t, "__Host-"+FlowCookie, ck.Name)
				assert.Equal(t, "/", ck.Path)
				assert.True(t, ck.Secure)
			} else {
				assert.Equal(t, FlowCookie, ck.Name)
				assert.Equal(t, StartPath, ck.Path, "kept off every other request")
			}
			assert.True(t, ck.HttpOnly)
			assert.Equal(t, http.SameSiteLaxMode, ck.SameSite, "sent on the IdP's redirect back, a top-level navigation")
			assert.Equal(t, int(FlowTTL/time.Second), ck.MaxAge)
			assert.NotContains(t, ck.Value, "state-1", "sealed")
			assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
		})
	}
}

func TestRefusals(t *testing.T) {
	verified := Identity{Subject: "s", Email: "kim@school.example", EmailVerified: true}
	tests := []struct {
		name     string
		rp       *fakeRP
		allow    bool // AllowUnverifiedEmail
		query    string
		noCookie bool
		status   int
		is       error
		email    string
	}{
		{"no sign-in started here", &fakeRP{identity: verified}, false, "state=state-1", true, http.StatusBadRequest, ErrBadState, ""},
		{"another flow's answer", &fakeRP{identity: verified}, false, "state=other", false, http.StatusBadRequest, ErrBadState, ""},
		{"the IdP refused", &fakeRP{finish: fmt.Errorf("%w: access_denied", ErrDenied)}, false, "state=state-1", false, http.StatusForbidden, ErrDenied, ""},
		{"too late", &fakeRP{finish: ErrExpired}, false, "state=state-1", false, http.StatusBadRequest, ErrExpired, ""},
		{"the IdP is down", &fakeRP{finish: fmt.Errorf("%w: dial tcp: connection refused", ErrUnavailable)}, false, "state=state-1", false, http.StatusBadGateway, ErrUnavailable, ""},
		{"its token does not verify", &fakeRP{finish: ErrInvalidToken}, false, "state=state-1", false, http.StatusBadGateway, ErrInvalidToken, ""},
		{"an unverified email", &fakeRP{identity: Identity{Subject: "s", Email: "kim@school.example"}}, false, "state=state-1", false, http.StatusForbidden, ErrUnverified, "kim@school.example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := wayintest.NewKit()
			w := newWay(tt.rp)
			w.AllowUnverifiedEmail = tt.allow
			srv := wayintest.Serve(t, w, k)
			c := wayintest.Browser(t)
			if !tt.noCookie {
				c = signInStarted(t, srv.URL, "/")
			}
			resp := callback(t, c, srv.URL, tt.query)
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, "idp_refused", resp.Header.Get("X-Refusal"))
			require.Len(t, k.Refused(), 1)
			r := k.Refused()[0]
			assert.ErrorIs(t, r.Refusal, tt.is)
			assert.Equal(t, "identity provider", r.Source)
			assert.Equal(t, tt.email, r.Email)
			assert.Empty(t, k.Admitted(), "nothing reaches the admission")
		})
	}
}

func TestUnverifiedEmailWhenAllowed(t *testing.T) {
	k := wayintest.NewKit()
	w := newWay(&fakeRP{identity: Identity{Subject: "s", Email: "kim@school.example"}})
	w.AllowUnverifiedEmail = true
	srv := wayintest.Serve(t, w, k)
	resp := callback(t, signInStarted(t, srv.URL, "/"), srv.URL, "state=state-1")
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Len(t, k.Arrived(), 1)
}

// A replayed callback (its cookie and URL copied to another browser) is
// refused on every instance: its state is used once.
func TestReplayedCallbackRefused(t *testing.T) {
	k := wayintest.NewKit()
	srv := wayintest.Serve(t, newWay(&fakeRP{identity: Identity{Subject: "s", Email: "a@school.example", EmailVerified: true}}), k)
	c := signInStarted(t, srv.URL, "/")
	u, _ := url.Parse(srv.URL)
	copied := wayintest.Browser(t)
	copied.Jar.SetCookies(u, c.Jar.Cookies(u))
	require.Equal(t, http.StatusSeeOther, callback(t, c, srv.URL, "state=state-1").StatusCode)
	resp := callback(t, copied, srv.URL, "state=state-1")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.ErrorIs(t, k.Refused()[0].Refusal, ErrBadState)
	assert.Len(t, k.Arrived(), 1)
}

// The admission's refusal is the bridge's to render: the way hands it on.
func TestAdmissionRefusalHandedOn(t *testing.T) {
	k := wayintest.NewKit()
	refused := wayin.Refused(signin.ErrDisabled, "disabled")
	k.Decide = func(signin.Arrival) (store.Account, error) { return store.Account{}, refused }
	srv := wayintest.Serve(t, newWay(&fakeRP{identity: Identity{Subject: "s", Email: "a@school.example", EmailVerified: true}}), k)
	resp := callback(t, signInStarted(t, srv.URL, "/"), srv.URL, "state=state-1")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, "disabled", resp.Header.Get("X-Refusal"))
	assert.Empty(t, k.Arrived())
}

func TestWayDescribesItself(t *testing.T) {
	rp := &fakeRP{}
	w := newWay(rp)
	assert.Equal(t, "idp", w.Name())
	assert.True(t, w.Essential(), "sign-in needs the IdP")
	assert.Empty(t, w.Exempt(), "its callback is a GET")
	name, href := w.Button("/courses")
	assert.Equal(t, "Springfield IdP", name)
	assert.Equal(t, StartPath+"?next=%2Fcourses", href)
	assert.NoError(t, w.Ready(context.Background()))
	rp.discover = ErrUnavailable
	assert.ErrorIs(t, w.Ready(context.Background()), ErrUnavailable, "readiness is the IdP's discovery")
}

// watchedRP reports a health change to the Way's Watch: down, then back.
type watchedRP struct {
	fakeRP
	reports []error
}

func (w *watchedRP) Watch(_ context.Context, _ time.Duration, report func(error)) {
	for _, err := range w.reports {
		report(err)
	}
}

func TestWatchLogsDownAndBack(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	w := newWay(&watchedRP{reports: []error{errors.New("connection refused"), nil}})
	w.Watch(context.Background(), logger)
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], "identity provider unavailable")
	assert.Contains(t, lines[0], "connection refused")
	assert.Contains(t, lines[1], "identity provider is back")
	assert.Contains(t, lines[1], "down_for=")

	// An RP that does not watch: nothing runs.
	logs.Reset()
	newWay(&fakeRP{}).Watch(context.Background(), logger)
	assert.Empty(t, logs.String())
}
