package apiclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckVerdicts(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		verdict Verdict
		mention string
	}{
		{"ok", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, emptyPage) }, VerdictOK, "OK"},
		{"clock skew", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Date", fixedNow.Add(-10*time.Minute).Format(http.TimeFormat))
			writeErr(w, 401, "date")
		}, VerdictClockSkew, "10m0s behind"},
		{"credentials", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Date", fixedNow.Format(http.TimeFormat)) // clocks agree: the secret is wrong
			writeErr(w, 401, "bad signature")
		}, VerdictCredentials, "Credentials refused"},
		{"forbidden", func(w http.ResponseWriter, r *http.Request) { writeErr(w, 403, "no") }, VerdictForbidden, "not an admin of the Instance"},
		{"not found", func(w http.ResponseWriter, r *http.Request) { writeErr(w, 404, "no") }, VerdictNotFound, "Not found"},
		{"rate limited", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "9")
			writeErr(w, 429, "slow")
		}, VerdictRateLimited, "asked to wait 9s"},
		{"server error", func(w http.ResponseWriter, r *http.Request) { writeErr(w, 502, "down") }, VerdictServerError, "(502)"},
		{"unexpected", func(w http.ResponseWriter, r *http.Request) { writeErr(w, 418, "teapot") }, VerdictUnexpected, "Unexpected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := setup(t)
			var calls int
			h.mux.HandleFunc("GET /api/5/public/users", func(w http.ResponseWriter, r *http.Request) {
				calls++
				assert.Equal(t, "1", r.URL.Query().Get("size"))
				tt.handler(w, r)
			})
			r := h.client.Check(context.Background())
			assert.Equal(t, tt.verdict, r.Verdict)
			assert.Contains(t, r.Summary, tt.mention)
			assert.Equal(t, tt.verdict == VerdictOK, r.OK())
			assert.Equal(t, 1, calls, "a check is one call: no retries")
			assert.NotContains(t, r.Summary, testSecret)
			assert.Equal(t, tt.verdict == VerdictOK, r.Err == nil)
		})
	}
}

func TestCheckTransportVerdicts(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer tlsSrv.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer slow.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	for _, tt := range []struct {
		url     string
		timeout time.Duration // short only where the timeout is the point: a TLS handshake under -race is slow
		verdict Verdict
	}{{tlsSrv.URL, 10 * time.Second, VerdictTLS}, {slow.URL, 200 * time.Millisecond, VerdictTimeout}, {closedURL, 10 * time.Second, VerdictUnreachable}} {
		c, err := New(Options{BaseURL: tt.url, Timeout: tt.timeout, Credentials: Credentials{Method: AuthSimple, APISecret: testSecret}})
		require.NoError(t, err)
		r := c.Check(context.Background())
		assert.Equal(t, tt.verdict, r.Verdict, r.Summary)
		assert.Error(t, r.Err)
	}
	r := CheckResult{ClockOffset: 90 * time.Second, HaveOffset: true}
	assert.Equal(t, "1m30s ahead of this server's", r.DescribeClock())
	assert.Equal(t, "", CheckResult{}.DescribeClock())
}
