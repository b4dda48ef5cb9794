package loadtest

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/internal/syncbuf"
)

// runBenchCmd runs `ssobridge-bench args...` in-process.
func runBenchCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runBenchCmdCtx(t, context.Background(), args...)
}

func runBenchCmdCtx(t *testing.T, ctx context.Context, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut syncbuf.Buffer
	err = BenchCmd(ctx, cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}, args)
	return out.String(), errOut.String(), err
}

// The load tool itself: both load modes finish, every launch succeeds, and
// the figures that are exact (platform calls per launch, new connections)
// are at the floor. Its speed figures are reported, never asserted.
func TestBenchCommand(t *testing.T) {
	for _, mode := range [][]string{
		{"--concurrency", "4"},
		{"--concurrency", "4", "--rate", "400"},
	} {
		t.Run(strings.Join(mode, " "), func(t *testing.T) {
			args := append([]string{"--accounts", "20", "--duration", "300ms"}, mode...)
			out, errOut, err := runBenchCmd(t, args...)
			require.NoError(t, err, errOut)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			last := lines[len(lines)-1]
			for _, want := range []string{"calls_returning=1.00", "calls_unlinked=2.00", "calls_new=3.00", "behind=", "cpu_us_per_launch=", "sched_p99_ms="} {
				assert.Contains(t, last, want)
			}
			m := regexp.MustCompile(`conns=(\d+)`).FindStringSubmatch(last)
			require.NotNil(t, m, last)
			conns, _ := strconv.Atoi(m[1])
			// net/http dials for a call that finds no idle connection and
			// keeps the new one even when another freed up first: at most
			// about twice the launches in flight, never one per call.
			assert.LessOrEqual(t, conns, 2*4, "kept alive over every phase")
			assert.Positive(t, conns)
			assert.Contains(t, out, ", 0 failed")
			assert.Contains(t, out, "goroutines created per launch")
		})
	}
}

// The process cost is the difference of two samples; the scheduler latency
// quantiles come from the histogram counts added between them: the upper
// bound of the bucket (counts[i] is [buckets[i], buckets[i+1])), the last
// finite bound for the open-ended bucket.
func TestProcessCostSince(t *testing.T) {
	buckets := []float64{0, 1e-6, 1e-3, 1e-2, math.Inf(1)}
	before := processSample{cpu: time.Second, created: 100, gcs: 3, sched: []uint64{5, 5, 5, 5}, buckets: buckets}
	tests := []struct {
		name     string
		counts   []uint64
		p50, p99 time.Duration
	}{
		{"mostly fast", []uint64{5 + 98, 5 + 1, 5 + 1, 5}, time.Microsecond, time.Millisecond},
		{"a slow tail", []uint64{5 + 60, 5 + 20, 5 + 20, 5}, time.Microsecond, 10 * time.Millisecond},
		{"open-ended bucket", []uint64{5, 5, 5, 5 + 10}, 10 * time.Millisecond, 10 * time.Millisecond},
		{"nothing ran", []uint64{5, 5, 5, 5}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after := processSample{cpu: 3 * time.Second, created: 300, gcs: 5, sched: tt.counts, buckets: buckets}
			c := after.since(before)
			assert.Equal(t, 2*time.Second, c.cpu)
			assert.Equal(t, uint64(200), c.created)
			assert.Equal(t, uint32(2), c.gcs)
			assert.Equal(t, tt.p50, c.schedP50)
			assert.Equal(t, tt.p99, c.schedP99)
			assert.Equal(t, "20000", c.cpuPerLaunch(100))
			assert.Contains(t, c.perLaunch(100), "CPU 20000 µs per launch, 2.0 goroutines created per launch, 2 GCs")
			c.cpu = 0
			assert.Equal(t, "-", c.cpuPerLaunch(100), "not measured is not zero")
		})
	}
}

func TestBenchRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--rate", "-1"},
		{"--rate", "NaN"},
		{"--concurrency", "0"},
		{"--duration", "1h"},
		{"--accounts", "0"},
	} {
		out, _, err := runBenchCmd(t, args...)
		var ue cli.UsageError
		require.ErrorAs(t, err, &ue, args)
		assert.Contains(t, ue.Error(), "bench: --", args)
		assert.Empty(t, out, "nothing ran: %v", args)
	}
}

// startTarget serves a bridge in this process, on loopback, against an
// emulator of its own, and writes the configuration the external bench
// reads (the same store, the platform's credentials).
func startTarget(t *testing.T) (target, platform, cfgPath string) {
	t.Helper()
	admin := platformsim.Credential{Key: "bench-key", Secret: "bench-secret-bench-secret", Admin: true}
	sim, err := platformsim.New(platformsim.Config{Credentials: []platformsim.Credential{admin}})
	require.NoError(t, err)
	run, err := platformsim.Start(sim, "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { run.Close() })
	dir := t.TempDir()
	yaml := fmt.Sprintf("store:\n  dsn: %s/ssobridge.db\nplatform:\n  base_url: %s\n  api_key: %s\n  api_secret: %s\n"+
		"password:\n  argon2_memory_kib: 64\n  argon2_iterations: 1\nlog:\n  level: error\n", dir, run.URL, admin.Key, admin.Secret)
	cfgPath = filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(yaml), 0o600))
	cfg, err := config.Parse([]byte(yaml), nil)
	require.NoError(t, err)
	a, err := app.New(context.Background(), cfg, app.Options{LogOutput: io.Discard})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- a.Serve(ctx, ln, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		<-served
		a.Close()
	})
	return "http://" + ln.Addr().String(), run.URL, cfgPath
}

// The external mode drives a running bridge over sockets: it adds its
// accounts to the bridge's store, signs them in, launches, measures the
// raw token call on the platform in the same run, and reads the target's
// CPU (found by its port: this process, here). Each run names its
// accounts and their password afresh and removes the accounts when it
// ends; with --wrk-script it holds them until stopped. Its speed figures
// are reported, never asserted.
func TestBenchExternalMode(t *testing.T) {
	target, platform, cfgPath := startTarget(t)
	cfg, err := config.Load(cfgPath, nil)
	require.NoError(t, err)
	st, err := app.OpenStore(context.Background(), cfg, nil)
	require.NoError(t, err)
	defer st.Close()
	count := func() int { n, err := st.CountAccounts(context.Background()); require.NoError(t, err); return n }
	runIDs := map[string]bool{}
	for run := range 2 {
		out, errOut, err := runBenchCmd(t, "--target", target, "--config", cfgPath, "--platform", platform,
			"--accounts", "10", "--concurrency", "4", "--duration", "300ms")
		require.NoError(t, err, "run %d: %s", run, errOut)
		assert.Contains(t, out, "signed in 10 accounts")
		assert.Contains(t, out, ", 0 failed")
		assert.Contains(t, out, "raw token call:")
		last := regexp.MustCompile(`(?m)^bench: launches_per_s=.*$`).FindString(out)
		for _, want := range []string{"launches_per_s=", "p99_ms=", "raw_p99_ms=", "ratio_p99=", "bridge_rss_mib="} {
			assert.Contains(t, last, want)
		}
		if runtime.GOOS == "linux" {
			assert.Regexp(t, `bridge_cpu_us=[0-9.]+ platform_cpu_us=[0-9.]+`, out, "CPU read from /proc for both")
		}
		m := regexp.MustCompile(`removed the run's 10 accounts \(bench-([a-z0-9]+)-\*@example.com\)`).FindStringSubmatch(out)
		require.NotNil(t, m, out)
		runIDs[m[1]] = true
		assert.Zero(t, count(), "run %d left no account behind", run)
	}
	assert.Len(t, runIDs, 2, "each run names its accounts afresh")

	script := filepath.Join(t.TempDir(), "launch.lua")
	ctx, stop := context.WithCancel(context.Background())
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, err := runBenchCmdCtx(t, ctx, "--target", target, "--config", cfgPath, "--accounts", "5", "--wrk-script", script)
		done <- result{out + errOut, err}
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(script); return err == nil && count() == 5 }, 30*time.Second, 10*time.Millisecond,
		"the script is written and the accounts held for wrk")
	stop()
	res := <-done
	require.NoError(t, res.err, res.out)
	out := res.out
	assert.Zero(t, count(), "removed once stopped")
	assert.Contains(t, out, "wrote "+script)
	b, err := os.ReadFile(script)
	require.NoError(t, err)
	assert.Equal(t, 5, strings.Count(string(b), "ssobridge_session="), "one entry per session")
	assert.Contains(t, string(b), `wrk.format("POST", "/launch"`)
	fi, err := os.Stat(script)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "live cookies: the owner's alone")
}

func TestBenchExternalRejectsBadFlags(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte("store:\n  dsn: "+dir+"/x.db\n"), 0o600))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "http://127.0.0.1:1"}, "needs --config"},
		{[]string{"--target", "127.0.0.1:8080", "--config", cfgPath}, "--target must be an http(s) URL"},
		{[]string{"--target", "https://127.0.0.1:1", "--config", cfgPath}, "must be http://"},
		{[]string{"--target", "http://127.0.0.1:1", "--config", cfgPath, "--latency", "20ms"}, "--latency is for the in-process bench"},
		{[]string{"--target", "http://127.0.0.1:1", "--config", cfgPath, "--store", "postgres"}, "--store is for the in-process bench"},
		{[]string{"--target", "http://127.0.0.1:1", "--config", cfgPath, "--cpuprofile", "x"}, "needs --target-pprof"},
		{[]string{"--target", "http://127.0.0.1:1", "--config", cfgPath, "--platform", "http://127.0.0.1:2"}, "needs the platform credentials"},
		{[]string{"--platform", "http://127.0.0.1:2"}, "--platform is for --target"},
		{[]string{"--wrk-script", "x.lua"}, "--wrk-script is for --target"},
		{[]string{"--target", "http://192.0.2.7:8080", "--config", cfgPath}, "is not on this machine"},
		{[]string{"--target", "http://sso.partner.example", "--config", cfgPath}, "--allow-remote"},
		{[]string{"--allow-remote"}, "--allow-remote is for --target"},
	} {
		out, _, err := runBenchCmd(t, tc.args...)
		var ue cli.UsageError
		require.ErrorAs(t, err, &ue, tc.args)
		assert.Contains(t, ue.Error(), tc.want, tc.args)
		assert.Empty(t, out, "nothing ran: %v", tc.args)
	}
}

// Each worker launches sessions of its own, every one of them in turn, so
// no session launches twice at once; with fewer sessions than workers they
// are shared.
func TestOwnSessions(t *testing.T) {
	const c, n = 64, 200
	next := ownSessions(c, n)
	owner := map[int]int{}
	for w := range c {
		seen := map[int]bool{}
		for range 8 {
			i := next(w)
			require.True(t, i >= 0 && i < n)
			if o, ok := owner[i]; ok {
				assert.Equal(t, w, o, "session %d launched by workers %d and %d", i, o, w)
			}
			owner[i] = w
			seen[i] = true
		}
		assert.Len(t, seen, (n-w+c-1)/c, "worker %d goes round all its own", w)
	}
	assert.Len(t, owner, n, "every session is someone's")
	few := ownSessions(8, 3)
	for w := range 8 {
		assert.Less(t, few(w), 3)
	}
}
