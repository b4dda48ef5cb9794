package metrics

import (
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/store"
)

// What the handlers and the wiring count is served in Prometheus's text
// format on the metrics' own registry, with the labels they gave.
func TestServedAsCounted(t *testing.T) {
	m := New()
	m.Login("ok")
	m.Login("failed")
	m.Login("failed")
	m.Probe("/readyz", 503)
	m.SessionTouched()
	m.LineRefused()
	m.Launch("ok", launch.Path("linked"), 120*time.Millisecond)
	m.PlatformAttempt("issue_token", 429, time.Second)
	m.WatchStore(func() store.OutageStats { return store.OutageStats{Up: true, Timeouts: 2} })
	m.WatchPlatformBudget(func() PlatformBudget { return PlatformBudget{Rate: 10, Share: 5, Instances: 2} })

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, err := io.ReadAll(rec.Result().Body)
	require.NoError(t, err)
	for _, want := range []string{
		`ssobridge_logins_total{outcome="failed"} 2`,
		`ssobridge_logins_total{outcome="ok"} 1`,
		`ssobridge_probes_total{path="/readyz",status="503"} 1`,
		`ssobridge_session_touches_total 1`,
		`ssobridge_line_refused_total 1`,
		`ssobridge_launches_total{outcome="ok",path="linked"} 1`,
		`ssobridge_platform_requests_total{endpoint="issue_token",status="429"} 1`,
	} {
		assert.Contains(t, string(body), want)
	}
}
