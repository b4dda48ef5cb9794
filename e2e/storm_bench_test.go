package e2e

import (
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ssobridge/ssobridge/loadtest"
)

// BenchmarkLoginStorm signs in 200 users at once with the production
// argon2id parameters (19 MiB, 2 passes) and reports the process's peak
// RSS: hashing runs under password.hash_concurrency, so memory stays
// bounded. Run alone for a clean peak:
//
//	go test -run '^$' -bench LoginStorm -benchtime 1x ./e2e
func BenchmarkLoginStorm(b *testing.B) {
	ta := startTestApp(b, testOptions{yaml: "regulation:\n  max_retries: 0\n  max_retries_per_ip: 0\n",
		env: []string{"SSOBRIDGE_PASSWORD_ARGON2_MEMORY_KIB=19456", "SSOBRIDGE_PASSWORD_ARGON2_ITERATIONS=2", "SSOBRIDGE_PASSWORD_HASH_CONCURRENCY=" + stormConcurrency()}})
	const users = 200
	for i := range users {
		ta.addAccount(b, "user"+strconv.Itoa(i)+"@example.com", false)
	}
	// One browser's anti-forgery cookie and token serve every sign-in.
	br := ta.browser(b)
	tok := br.csrf("/login")
	var csrfCookie *http.Cookie
	for _, ck := range br.c.Jar.Cookies(mustURL(b, ta.srv.URL)) {
		if ck.Name == "_csrf" {
			csrfCookie = ck
		}
	}
	if csrfCookie == nil {
		b.Fatal("no _csrf cookie")
	}
	setupPeak := loadtest.PeakRSS() // 200 accounts hashed one at a time
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{MaxIdleConnsPerHost: users}}
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for i := range users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				form := url.Values{"_csrf": {tok}, "email": {"user" + strconv.Itoa(i) + "@example.com"}, "password": {testPassword}}
				req, _ := http.NewRequest("POST", ta.srv.URL+"/login", strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.AddCookie(csrfCookie)
				resp, err := client.Do(req)
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusSeeOther {
						mu.Lock()
						ok++
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		if ok != users {
			b.Fatalf("%d of %d sign-ins succeeded", ok, users)
		}
	}
	b.ReportMetric(setupPeak, "setup_peak_rss_MiB")
	b.ReportMetric(loadtest.PeakRSS(), "peak_rss_MiB")
	b.ReportMetric(float64(users*b.N)/b.Elapsed().Seconds(), "logins/s")
}

// stormConcurrency is password.hash_concurrency for the storm (default 2;
// STORM_CONCURRENCY overrides it to compare).
func stormConcurrency() string {
	if v := os.Getenv("STORM_CONCURRENCY"); v != "" {
		return v
	}
	return "2"
}
