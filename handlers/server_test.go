package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/handlers/console"
	"github.com/ssobridge/ssobridge/internal/version"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin/oidc"
	"github.com/ssobridge/ssobridge/wayin/samlsso"
)

func TestHealthz(t *testing.T) {
	f := setup(t)
	f.accts.down() // liveness does not depend on it
	r := f.client().get("/healthz")
	assert.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, `{"status":"ok"}`, r.body)
}

func TestReadyz(t *testing.T) {
	tests := []struct {
		name      string
		storeGone bool
		checkErr  error
		idpErr    error
		samlErr   error
		status    int
		want      ReadyStatus
	}{
		{"ready", false, nil, nil, nil, 200, ReadyStatus{Ready: true, Store: "ok", Platform: "ok", Ways: map[string]string{"portal": "ok", "idp": "ok", "saml": "ok"}}},
		{"store file gone", true, nil, nil, nil, 503, ReadyStatus{Store: "unavailable", Platform: "ok", Ways: map[string]string{"portal": "ok", "idp": "ok", "saml": "ok"}}},
		{"platform refuses", false, apiErr("list_users", 403), nil, nil, 503, ReadyStatus{Store: "ok", Platform: "platform_forbidden", Ways: map[string]string{"portal": "ok", "idp": "ok", "saml": "ok"}}},
		{"platform down", false, &apiclient.TransportError{Err: errors.New("refused")}, nil, nil, 503, ReadyStatus{Store: "ok", Platform: "platform_unavailable", Ways: map[string]string{"portal": "ok", "idp": "ok", "saml": "ok"}}},
		{"identity provider down", false, nil, oidc.ErrUnavailable, nil, 503, ReadyStatus{Store: "ok", Platform: "ok", Ways: map[string]string{"portal": "ok", "idp": "unavailable", "saml": "ok"}}},
		{"SAML metadata never read", false, nil, nil, samlsso.ErrUnavailable, 503, ReadyStatus{Store: "ok", Platform: "ok", Ways: map[string]string{"portal": "ok", "idp": "ok", "saml": "unavailable"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t)
			f.idp.startErr = tt.idpErr
			f.saml.startErr = tt.samlErr
			if tt.storeGone {
				require.NoError(t, os.Remove(f.accts.path))
			}
			f.platform.report = console.CheckReport{Err: tt.checkErr}
			r := f.client().get("/readyz")
			assert.Equal(t, tt.status, r.status)
			var got ReadyStatus
			require.NoError(t, json.Unmarshal([]byte(r.body), &got))
			assert.NotEmpty(t, got.Version, "which build answers")
			got.Version = ""
			assert.Equal(t, tt.want, got)
			var raw map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.body), &raw))
			assert.Equal(t, tt.want.Ways["idp"], raw["idp"], "each way in is a key of its own")
			if tt.storeGone {
				assert.Contains(t, f.logs.String(), "the database file is gone", "the log says why")
			}
		})
	}
}

// Probes do not spend the platform's rate limit: its answer is kept for
// platformCheckTTL.
func TestReadyzCachesThePlatformCheck(t *testing.T) {
	f := setup(t)
	c := f.client()
	for range 5 {
		require.Equal(t, http.StatusOK, c.get("/readyz").status)
	}
	assert.Equal(t, 1, f.platform.checks)
	f.platform.set(func(p *fakePlatform) { p.report = console.CheckReport{Err: apiErr("list_users", 503)} })
	f.clock.Advance(platformCheckTTL - time.Second)
	assert.Equal(t, http.StatusOK, c.get("/readyz").status, "still the cached answer")
	f.clock.Advance(2 * time.Second)
	assert.Equal(t, http.StatusServiceUnavailable, c.get("/readyz").status, "checked again")
	assert.Equal(t, 2, f.platform.checks)
}

func TestSecurityHeaders(t *testing.T) {
	for _, secure := range []bool{false, true} {
		f := setup(t, func(d *Deps) { d.Sessions.Secure = secure })
		c := f.client()
		r := c.get("/login")
		csp := r.header.Get("Content-Security-Policy")
		assert.Contains(t, csp, "default-src 'none'")
		assert.Contains(t, csp, "frame-ancestors 'none'")
		assert.Contains(t, csp, "form-action 'self' https://platform.example", "the launch redirect may land on the platform")
		assert.NotContains(t, csp, "unsafe-inline")
		assert.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"))
		assert.Equal(t, "DENY", r.header.Get("X-Frame-Options"))
		assert.Equal(t, "same-origin", r.header.Get("Referrer-Policy"))
		assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
		if secure {
			assert.Equal(t, "max-age=31536000", r.header.Get("Strict-Transport-Security"))
		} else {
			assert.Empty(t, r.header.Get("Strict-Transport-Security"), "no HSTS over http")
		}
		css := c.get("/static/app.css")
		assert.Equal(t, http.StatusOK, css.status)
		assert.Contains(t, css.header.Get("Content-Type"), "text/css")
		assert.Equal(t, "public, max-age=3600", css.header.Get("Cache-Control"))
	}
}

func TestCSPFormActionCoversTheExchangeHost(t *testing.T) {
	assert.Equal(t, "'self' https://platform.example https://login.platform.example",
		cspFormAction("https://platform.example", "https://login.platform.example/x/{token}"))
	assert.Equal(t, "'self' https://platform.example", cspFormAction("https://platform.example", "https://platform.example/api/5/login-token/login/{token}"))
}

func TestCSPFormAction(t *testing.T) {
	assert.Equal(t, "'self' https://platform.example:8443", cspFormAction("https://platform.example:8443/base/"))
	assert.Equal(t, "'self'", cspFormAction("not a url"))
	assert.Equal(t, "'self'", cspFormAction(""))
}

// Request ids are always ours: a client's X-Request-Id is not adopted.
func TestRequestIDs(t *testing.T) {
	f := setup(t)
	c := f.client()
	a := c.get("/login", "X-Request-Id", "forged-by-the-client")
	b := c.get("/login")
	assert.Regexp(t, `^[0-9a-f]{16}$`, a.header.Get("X-Request-Id"))
	assert.NotEqual(t, a.header.Get("X-Request-Id"), b.header.Get("X-Request-Id"))
	assert.NotContains(t, f.logs.String(), "forged-by-the-client")
	assert.Contains(t, f.logs.String(), "request_id="+a.header.Get("X-Request-Id"))
}

// A launch is one log line: the request's, with the account, the launch's
// path and its platform calls; never the exchange URL (its token).
func TestLaunchIsOneLogLine(t *testing.T) {
	f := setup(t)
	ada := f.account("ada@example.com", false)
	c := f.client()
	c.signIn("ada@example.com")
	f.launcher.do = func(acct store.Account, _ string) (launch.Result, error) {
		return launch.Result{ExchangeURL: "https://platform.example/api/5/login-token/login/SECRET-TOKEN", Path: launch.PathCreated, PlatformCalls: 3}, nil
	}
	r := c.post("/launch", url.Values{"_csrf": {c.csrf("/")}})
	require.Equal(t, http.StatusSeeOther, r.status)
	var line string
	for _, l := range strings.Split(f.logs.String(), "\n") {
		if strings.Contains(l, "path=/launch") {
			require.Empty(t, line, "one line for the launch")
			line = l
		}
	}
	assert.Contains(t, line, "msg=http method=POST path=/launch status=303")
	assert.Contains(t, line, fmt.Sprintf("request_id=%s account_id=%d launch=created platform_calls=3", r.header.Get("X-Request-Id"), ada.ID))
	assert.NotContains(t, f.logs.String(), "SECRET-TOKEN")
}

// The request log has the path only: no query string (tokens, emails).
func TestRequestLogHasNoQuery(t *testing.T) {
	f := setup(t)
	f.client().get("/login?email=secret%40example.com&token=abc")
	logs := f.logs.String()
	assert.Contains(t, logs, "path=/login")
	assert.NotContains(t, logs, "secret")
	assert.NotContains(t, logs, "token=abc")
}

func TestMetricsEndpoint(t *testing.T) {
	f := setup(t)
	f.account("ada@example.com", false)
	c := f.client()
	c.signIn("ada@example.com")
	f.client().submit("/login", "/login", map[string][]string{"email": {"ada@example.com"}, "password": {"wrong"}})
	r := c.get("/metrics")
	assert.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, r.body, `ssobridge_logins_total{outcome="ok"} 1`)
	assert.Contains(t, r.body, `ssobridge_logins_total{outcome="failed"} 1`)
	assert.True(t, strings.Contains(r.body, "go_goroutines"), "runtime metrics too")
}

// Probes, metrics and static files set no cookie: they are fetched by
// machines and caches, and a cookie would make a static answer private.
func TestNoCookieOnProbesAndStaticFiles(t *testing.T) {
	f := setup(t)
	c := f.client()
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/static/app.css", "/static/favicon.svg"} {
		r := c.get(path)
		assert.Equal(t, http.StatusOK, r.status, path)
		assert.Empty(t, r.header.Values("Set-Cookie"), path)
	}
	assert.NotEmpty(t, setCookieHeader(c.get("/login"), csrfPlainName), "pages with forms still get their token")
}

// Size and method are checked before CSRF: an oversized body (chunked, so
// no Content-Length to refuse up front) is a 413, a wrong method a 405, an
// unknown path a 404, whether or not a token came with them.
func TestSizeMethodAndRouteBeforeCSRF(t *testing.T) {
	f := setup(t)
	c := f.client()
	big := func() io.Reader {
		return io.MultiReader(strings.NewReader("email=a%40b.example&password="), strings.NewReader(strings.Repeat("x", 10<<20)))
	}
	req, _ := http.NewRequest("POST", c.base+"/login", big())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.ContentLength = -1 // chunked
	r := c.do(req)
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.status)
	assert.Equal(t, "bad-request", r.class())

	for _, tt := range []struct {
		method, path string
		status       int
		class        string
	}{
		{"PUT", "/login", http.StatusMethodNotAllowed, "bad-request"},
		{"DELETE", "/launch", http.StatusMethodNotAllowed, "bad-request"},
		{"POST", "/healthz", http.StatusMethodNotAllowed, "bad-request"},
		{"POST", "/no/such/page", http.StatusNotFound, "not-found"},
		{"POST", "/launchx", http.StatusNotFound, "not-found"},
		{"POST", "/launch/x", http.StatusNotFound, "not-found"},
		{"POST", "/login/", http.StatusNotFound, "not-found"},
	} {
		req, _ := http.NewRequest(tt.method, c.base+tt.path, strings.NewReader("a=b"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r := c.do(req)
		assert.Equal(t, tt.status, r.status, "%s %s", tt.method, tt.path)
		assert.Equal(t, tt.class, r.class(), "%s %s", tt.method, tt.path)
	}
}

// With metrics on a listener of their own, the public router has none.
func TestMetricsElsewhere(t *testing.T) {
	f := setup(t, func(d *Deps) { d.MetricsElsewhere = true })
	r := f.client().get("/metrics")
	assert.Equal(t, http.StatusNotFound, r.status)
	assert.NotContains(t, r.body, "ssobridge_")
}

// While the process drains, /readyz fails at once, without asking the
// store or the platform.
func TestReadyzWhileStopping(t *testing.T) {
	stopping := false
	f := setup(t, func(d *Deps) { d.Stopping = func() bool { return stopping } })
	c := f.client()
	require.Equal(t, http.StatusOK, c.get("/readyz").status)
	stopping = true
	r := c.get("/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.JSONEq(t, `{"ready":false,"stopping":true,"version":"`+version.Get().Short()+`"}`, r.body)
	assert.Contains(t, f.logs.String(), `msg="not ready" state="ready=false store= platform= stopping=true"`, "the stop logged once")
	assert.Equal(t, 1, f.platform.checks, "no platform call while stopping")
}

// Probes are no access-log lines (one every few seconds, all day): they
// are counted in ssobridge_probes_total, and a change of readiness is
// logged once, with its cause, and once again when it is back.
func TestProbesAreCountedAndReadinessChangesLogged(t *testing.T) {
	f := setup(t)
	c := f.client()
	for range 3 {
		require.Equal(t, http.StatusOK, c.get("/healthz").status)
		require.Equal(t, http.StatusOK, c.get("/readyz").status)
	}
	f.platform.set(func(p *fakePlatform) { p.report = console.CheckReport{Err: apiErr("list_users", 503)} })
	f.clock.Advance(platformCheckTTL + time.Second)
	for range 3 {
		require.Equal(t, http.StatusServiceUnavailable, c.get("/readyz").status)
	}
	f.platform.set(func(p *fakePlatform) { p.report = console.CheckReport{} })
	f.clock.Advance(platformCheckTTL + time.Second)
	require.Equal(t, http.StatusOK, c.get("/readyz").status)
	c.get("/login") // an ordinary request is logged as before

	logs := f.logs.String()
	assert.NotContains(t, logs, "path=/healthz", "no access-log line for a probe")
	assert.NotContains(t, logs, "path=/readyz")
	assert.Contains(t, logs, "path=/login")
	assert.Equal(t, 2, strings.Count(logs, `msg=ready `), "ready at the first probe and when it is back:\n%s", logs)
	assert.Equal(t, 1, strings.Count(logs, `msg="not ready"`), "not ready once, for three probes")
	assert.Contains(t, logs, "platform=platform_unavailable")

	m := c.get("/metrics").body
	assert.Contains(t, m, `ssobridge_probes_total{path="/healthz",status="200"} 3`)
	assert.Contains(t, m, `ssobridge_probes_total{path="/readyz",status="200"} 4`)
	assert.Contains(t, m, `ssobridge_probes_total{path="/readyz",status="503"} 3`)
}
