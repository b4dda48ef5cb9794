package e2e

import (
	"math"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"testing"
	"testing/fstest"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/internal/gctune"
	"github.com/ssobridge/ssobridge/loadtest"
)

// BenchmarkLoginStorm signs in 300 users at once with the production
// argon2id parameters (19 MiB, 2 passes) and the memory limit serve sets
// (gctune.LimitMemory), and reports the process's peak RSS: hashing runs
// under password.hash_concurrency, and the limit keeps the garbage of
// finished hashes from piling up. Run alone for a clean peak:
//
//	go test -run '^$' -bench LoginStorm -benchtime 1x ./e2e
func BenchmarkLoginStorm(b *testing.B) {
	ta := startTestApp(b, testOptions{yaml: "regulation:\n  max_retries: 0\n  max_retries_per_ip: 0\n",
		env: []string{"SSOBRIDGE_PASSWORD_ARGON2_MEMORY_KIB=19456", "SSOBRIDGE_PASSWORD_ARGON2_ITERATIONS=2", "SSOBRIDGE_PASSWORD_HASH_CONCURRENCY=" + stormConcurrency()}})
	const users = 300
	limit := gctune.LimitMemory(config.Password{Argon2MemoryKiB: 19456, HashConcurrency: 2}, fstest.MapFS{}).Bytes // as outside a container
	defer debug.SetMemoryLimit(math.MaxInt64)
	for i := range users {
		ta.addAccount(b, "user"+strconv.Itoa(i)+"@example.com", false)
	}
	// One browser's anti-forgery cookie and token serve every sign-in.
	br := ta.browser(b)
	tok := br.csrf("/login")
	setupPeak := loadtest.PeakRSS() // the accounts hashed one at a time
	b.ResetTimer()
	var signedIn, busy int
	for b.Loop() {
		counts := br.postAtOnce("/login", users, func(i int) url.Values {
			return url.Values{"_csrf": {tok}, "email": {"user" + strconv.Itoa(i) + "@example.com"}, "password": {testPassword}}
		})
		// Each sign-in is in, or told to come back (no slot within 5 s).
		if counts[http.StatusSeeOther]+counts[http.StatusServiceUnavailable] != users {
			b.Fatalf("answers %v", counts)
		}
		signedIn, busy = signedIn+counts[http.StatusSeeOther], busy+counts[http.StatusServiceUnavailable]
	}
	b.ReportMetric(float64(signedIn)/float64(b.N), "signed_in/op")
	b.ReportMetric(float64(busy)/float64(b.N), "busy_503/op")
	b.ReportMetric(setupPeak, "setup_peak_rss_MiB")
	b.ReportMetric(loadtest.PeakRSS(), "peak_rss_MiB")
	b.ReportMetric(float64(signedIn)/b.Elapsed().Seconds(), "logins/s")
	b.ReportMetric(float64(limit>>20), "memory_limit_MiB")
}

// stormConcurrency is password.hash_concurrency for the storm (default 2;
// STORM_CONCURRENCY overrides it to compare).
func stormConcurrency() string {
	if v := os.Getenv("STORM_CONCURRENCY"); v != "" {
		return v
	}
	return "2"
}
