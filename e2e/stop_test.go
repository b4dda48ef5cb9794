package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/syncbuf"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// bridgeWithPlatform runs `ssobridge platform-sim --control` and
// `ssobridge serve` as two processes on loopback, with the given accounts
// (password testPassword), and returns the bridge, its URL, the emulator's
// URL and the store's path.
func bridgeWithPlatform(t *testing.T, env []string, emails ...string) (bridge *processUnderTest, base, sim, dsn string) {
	t.Helper()
	simCmd, simOut, _ := startCLI(t, nil, "platform-sim", "--addr", "127.0.0.1:0", "--api-key", "k", "--api-secret", "s", "--control")
	t.Cleanup(func() { _ = simCmd.Process.Kill(); _ = simCmd.Wait() })
	sim = waitForURL(t, simOut, `platform emulator at (\S+)`)
	cfg, dsn := writeConfig(t, "server:\n  addr: 127.0.0.1:0\nplatform:\n  base_url: "+sim+"\n  api_key: k\n  timeout: 30s\n")
	env = append([]string{"SSOBRIDGE_PLATFORM_API_SECRET=s"}, env...)
	for _, e := range emails {
		code, _, stderr := runCLI(t, testPassword+"\n", env, "user", "add", "--config", cfg, "--email", e, "--first-name", "F", "--last-name", "L")
		require.Equal(t, 0, code, stderr)
	}
	cmd, out, errOut := startCLI(t, env, "--config", cfg)
	bridge = &processUnderTest{cmd: cmd, out: out, errOut: errOut}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	base = waitForURL(t, out, `ssobridge listening on (\S+)`)
	return bridge, base, sim, dsn
}

// processUnderTest is a started binary and its live output.
type processUnderTest struct {
	cmd         *exec.Cmd
	out, errOut *syncbuf.Buffer
}

func waitForURL(t *testing.T, out *syncbuf.Buffer, pattern string) string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	var u string
	require.Eventually(t, func() bool {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			u = m[1]
		}
		return u != ""
	}, 30*time.Second, 10*time.Millisecond, "no %q", pattern)
	return u
}

// signedIn is a browser signed in to the bridge at base, with the form
// token of its portal page.
func signedIn(t *testing.T, base, email string) (*browser, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 2 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	require.Equal(t, http.StatusSeeOther, b.login(email, testPassword).status)
	return b, b.csrf("/")
}

// simControl posts a JSON body to the emulator's control endpoint.
func simControl(t *testing.T, sim, path, body string) {
	t.Helper()
	resp, err := http.Post(sim+path, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestStopLetsLaunchesFinish: a SIGTERM while launches wait 16 s for the
// platform (longer than the old 15 s grace) makes /readyz fail at once and
// takes no new connection, but every launch in flight finishes with its
// audit row, and the process exits 0: a launch without a line ends in its
// request with its 303; one whose user got the waiting page is kept with
// its ticket, done, for the user's next refresh on any instance.
func TestStopLetsLaunchesFinish(t *testing.T) {
	t.Parallel() // mostly waiting (on a slow platform, on a lock): overlaps the other
	emails := []string{"a@example.com", "b@example.com", "c@example.com"}
	bridge, base, sim, dsn := bridgeWithPlatform(t, nil, emails...)
	type launchClient struct {
		b   *browser
		tok string
	}
	var clients []launchClient
	launchOnce := func(lc launchClient) (int, string, error) {
		// The browser's client, not its helpers: they assert, and this runs
		// in goroutines too.
		resp, err := lc.b.c.PostForm(base+"/launch", url.Values{"_csrf": {lc.tok}})
		if err != nil {
			return 0, "", err
		}
		resp.Body.Close()
		return resp.StatusCode, waitingRefresh(page{status: resp.StatusCode, header: resp.Header}), nil
	}
	for _, e := range emails {
		b, tok := signedIn(t, base, e)
		lc := launchClient{b, tok}
		code, _, err := launchOnce(lc) // links the account: returning launches are one token call
		require.NoError(t, err)
		require.Equal(t, http.StatusSeeOther, code)
		clients = append(clients, lc)
	}
	req, _ := http.NewRequest("DELETE", sim+"/_sim/calls", nil)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	simControl(t, sim, "/_sim/latency", `{"endpoint":"issue_token","latency_ms":16000}`)

	type result struct {
		code int
		next string // the waiting page's refresh
		err  error
	}
	results := make(chan result, len(clients))
	for _, lc := range clients {
		go func() {
			code, next, err := launchOnce(lc)
			results <- result{code, next, err}
		}()
	}
	require.Eventually(t, func() bool {
		resp, err := http.Get(sim + "/_sim/calls")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var calls map[string]int
		return json.NewDecoder(resp.Body).Decode(&calls) == nil && calls["issue_token"] == len(clients)
	}, 30*time.Second, 20*time.Millisecond, "the launches reached the platform")

	stopped := time.Now()
	require.NoError(t, bridge.cmd.Process.Signal(syscall.SIGTERM))
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return true // no new connection
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	}, 5*time.Second, 10*time.Millisecond, "/readyz fails at once")

	var tickets []string
	for range clients {
		r := <-results
		require.NoError(t, r.err, "a launch in flight was cut")
		if r.next != "" {
			tickets = append(tickets, strings.TrimPrefix(r.next, "/launch/wait/"))
		} else {
			assert.Equal(t, http.StatusSeeOther, r.code)
		}
	}
	assert.NoError(t, bridge.cmd.Wait(), "exit 0; stderr: %s", bridge.errOut.String())
	assert.Greater(t, time.Since(stopped), 15*time.Second, "the launches did wait for the platform")

	s, err := sqlstore.OpenSQLite(context.Background(), dsn, nil)
	require.NoError(t, err)
	defer s.Close()
	for _, id := range tickets { // users who got the waiting page (a line had formed)
		tk, err := s.TicketByID(context.Background(), id)
		require.NoError(t, err)
		assert.Equal(t, store.TicketDone, tk.State, "its end is kept for the next refresh")
		assert.NotEmpty(t, tk.Sealed)
	}
	_, total, err := s.ListEvents(context.Background(), store.AuditFilter{Kind: store.KindLaunch, Outcome: "ok"})
	require.NoError(t, err)
	assert.Equal(t, 2*len(clients), total, "every launch has its audit row")
}

// With server.metrics_addr, /metrics answers there and not on the public
// listener.
func TestMetricsOnTheirOwnListener(t *testing.T) {
	cfg, _ := writeConfig(t, "server:\n  addr: 127.0.0.1:0\n  metrics_addr: 127.0.0.1:0\n")
	cmd, out, errOut := startCLI(t, nil, "--config", cfg)
	base := waitForURL(t, out, `ssobridge listening on (\S+)`)
	metrics := waitForURL(t, out, `metrics at (\S+)`)
	resp, err := http.Get(metrics)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(b), "go_goroutines")
	resp, err = http.Get(base + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "not on the public listener")
	assert.Equal(t, 0, stop(t, cmd), errOut.String())
}

// With server.pprof, Go's profiler answers on the metrics listener, and
// never on the public one; without it, not at all.
func TestProfilerOnlyOnTheMetricsListener(t *testing.T) {
	status := func(u string) int {
		t.Helper()
		resp, err := http.Get(u)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, on := range []bool{true, false} {
		cfg, _ := writeConfig(t, fmt.Sprintf("server:\n  addr: 127.0.0.1:0\n  metrics_addr: 127.0.0.1:0\n  pprof: %v\n", on))
		cmd, out, errOut := startCLI(t, nil, "--config", cfg)
		base := waitForURL(t, out, `ssobridge listening on (\S+)`)
		metrics := strings.TrimSuffix(waitForURL(t, out, `metrics at (\S+)`), "/metrics")
		want := http.StatusNotFound
		if on {
			want = http.StatusOK
			// Its own line, written after the metrics line: waited for, not
			// read at once (the two writes can land apart).
			assert.Equal(t, metrics+"/debug/pprof/", waitForURL(t, out, `profiler at (\S+)`))
		}
		assert.Equal(t, want, status(metrics+"/debug/pprof/goroutine?debug=1"), "pprof %v", on)
		assert.Equal(t, http.StatusOK, status(metrics+"/metrics"))
		assert.NotEqual(t, http.StatusOK, status(base+"/debug/pprof/goroutine?debug=1"), "never on the public listener")
		assert.Equal(t, 0, stop(t, cmd), errOut.String())
	}
}
