package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// BenchmarkLaunchReturning measures POST /launch end to end for a
// returning user: session check, link, signed token call to the embedded
// emulator, audit, 303.
func BenchmarkLaunchReturning(b *testing.B) {
	ta := startTestApp(b, testOptions{env: []string{"SSOBRIDGE_LOG_LEVEL=error"}})
	ta.addAccount(b, "ada@example.com", false)
	br := ta.browser(b)
	if p := br.login("ada@example.com", testPassword); p.status != http.StatusSeeOther {
		b.Fatalf("sign-in: %d", p.status)
	}
	if p := br.launch(); p.status != http.StatusSeeOther { // links the user
		b.Fatalf("first launch: %d", p.status)
	}
	u, _ := url.Parse(ta.srv.URL)
	var cookie []string
	for _, c := range br.c.Jar.Cookies(u) {
		cookie = append(cookie, c.Name+"="+c.Value)
	}
	tok := br.csrf("/")
	body := url.Values{"_csrf": {tok}}.Encode()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	b.ReportAllocs()
	b.SetParallelism(32) // 64 launches in flight on 2 cores, as the bench's default
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("POST", ta.srv.URL+"/launch", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Cookie", strings.Join(cookie, "; "))
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther {
				b.Errorf("launch: %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "launches/s")
}
