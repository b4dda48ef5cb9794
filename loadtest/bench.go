// Package loadtest is the load tool behind `ssobridge-bench` (`go run ./cmd/ssobridge-bench`): it wires an
// in-process bridge and emulator (app.New), signs accounts in, drives
// launches over kept-alive loopback connections, and reports latency,
// throughput, platform calls per launch and what the process spent.
package loadtest

import (
	"bufio"
	"context"
	crand "crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/handlers"
	"github.com/ssobridge/ssobridge/internal/loopback"
	"github.com/ssobridge/ssobridge/internal/pgschema"
	"github.com/ssobridge/ssobridge/store"
)

// benchOptions are the load tool's settings.
type benchOptions struct {
	accounts    int
	concurrency int
	duration    time.Duration
	latency     time.Duration
	rate        float64 // offered launches/s; 0: each worker goes again as soon as it is answered
	cpuProfile  string
	memProfile  string
	store       string // sqlite | postgres | both
	dsn         string // PostgreSQL URL (postgres, both)
}

// BenchCmd is `ssobridge-bench` (`go run ./cmd/ssobridge-bench`): it drives launches against an in-process
// bridge and emulator on loopback and reports latency, throughput,
// platform calls per launch, connections and peak RSS; with --target it
// drives a running bridge from outside instead (runExternal). It is
// bounded in count and time.
func BenchCmd(ctx context.Context, env cli.Env, args []string) error {
	if len(args) > 0 && args[0] == "fill" {
		return FillCmd(ctx, env, args[1:])
	}
	cmd := cli.Command{Name: "ssobridge-bench", Program: "ssobridge-bench", Synopsis: "[--accounts N] [--concurrency C] [--duration D] [--latency L] [--rate R] [flags]\n       ssobridge-bench --target URL --config FILE [--platform URL] [--accounts N] [--concurrency C] [--duration D] [flags]\n       ssobridge-bench fill --config FILE [--accounts N] [--sessions N] [--events N] [--days D]",
		Summary: "Load-test launches against an in-process bridge and emulator on loopback, bounded in count and\ntime; or, with --target, a running bridge over real sockets on this machine (its store, from --config,\ngets the run's accounts bench-<run>-00000@example.com..., with a password made for the run, and\nloses them when the run ends). See docs/performance.md."}
	fs := env.Flags(cmd)
	o := benchOptions{}
	fs.IntVar(&o.accounts, "accounts", 1000, "signed-in accounts (1..20000)")
	fs.IntVar(&o.concurrency, "concurrency", 64, "launches in flight (1..1024)")
	fs.DurationVar(&o.duration, "duration", 8*time.Second, "how long to drive returning-user launches (100ms..5m)")
	fs.DurationVar(&o.latency, "latency", 0, "delay injected into every platform call (0..5s)")
	fs.Float64Var(&o.rate, "rate", 0, "offer this many launches/s in all, spread over the connections (0: as fast as answered)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the returning-launch phase to this file (go tool pprof)")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a heap profile taken after the run to this file (go tool pprof)")
	fs.StringVar(&o.store, "store", "sqlite", "the store to measure: sqlite, postgres, or both (one after the other, the same way)")
	fs.StringVar(&o.dsn, "dsn", "", "PostgreSQL URL for --store postgres|both (the bench works in a schema of its own, dropped after)")
	storeDSN := fs.String("store-dsn", "", "the same as --store postgres --dsn URL")
	target := fs.String("target", "", "drive this running bridge (http://host:port) instead of an in-process one")
	cfgPath := fs.String("config", "", "with --target: the target's configuration (its store gets the bench's accounts; the platform credentials sign the raw calls)")
	platformURL := fs.String("platform", "", "with --target: the platform the target calls (e.g. a platform-sim), for the raw token call in the same run")
	targetPprof := fs.String("target-pprof", "", "with --target and --cpuprofile: the target's profiler, http://<server.metrics_addr> with server.pprof on")
	wrkScript := fs.String("wrk-script", "", "with --target: sign the accounts in, launch each once, write a wrk Lua script that posts their launches to this file, and wait until stopped (Ctrl-C, SIGTERM), keeping the accounts for wrk -s FILE URL; then remove them")
	allowRemote := fs.Bool("allow-remote", false, "with --target: allow a target that is not on this machine (a test deployment; never production: the bench adds accounts to its store)")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	if *storeDSN != "" {
		if o.dsn != "" && o.dsn != *storeDSN {
			return cli.UsageError("bench: give --dsn or --store-dsn, not both")
		}
		o.dsn = *storeDSN
		if o.store == "sqlite" {
			o.store = "postgres"
		}
	}
	switch {
	case o.accounts < 1 || o.accounts > 20000:
		return cli.UsageError("bench: --accounts must be 1..20000")
	case o.concurrency < 1 || o.concurrency > 1024:
		return cli.UsageError("bench: --concurrency must be 1..1024")
	case o.duration < 100*time.Millisecond || o.duration > 5*time.Minute:
		return cli.UsageError("bench: --duration must be 100ms..5m")
	case o.latency < 0 || o.latency > 5*time.Second:
		return cli.UsageError("bench: --latency must be 0..5s")
	case !(o.rate >= 0 && o.rate <= 100000): // also refuses NaN
		return cli.UsageError("bench: --rate must be 0..100000 launches/s")
	case o.store != "sqlite" && o.store != "postgres" && o.store != "both":
		return cli.UsageError("bench: --store must be sqlite, postgres or both")
	case *target != "":
		// the external mode's own checks follow (externalFlags)
	case o.store != "sqlite" && !strings.HasPrefix(o.dsn, "postgres://") && !strings.HasPrefix(o.dsn, "postgresql://"):
		return cli.UsageError("bench: --store " + o.store + " needs --dsn postgres://user@host:5432/db?sslmode=disable")
	case o.store == "sqlite" && o.dsn != "":
		return cli.UsageError("bench: --dsn is for --store postgres or both")
	}
	if *target != "" {
		x, err := externalFlags(env, o, fs, *target, *cfgPath, *platformURL, *targetPprof, *allowRemote)
		if err != nil {
			return err
		}
		x.wrkScript = *wrkScript
		return runExternal(ctx, o, x, env.Stdout)
	}
	if *allowRemote {
		return cli.UsageError("bench: --allow-remote is for --target")
	}
	for _, name := range []string{"config", "platform", "target-pprof", "wrk-script"} {
		if fs.Lookup(name).Value.String() != "" {
			return cli.UsageError("bench: --" + name + " is for --target")
		}
	}
	stores := []string{o.store}
	if o.store == "both" {
		stores = []string{"sqlite", "postgres"}
	}
	for _, st := range stores {
		run := o
		run.store = st
		if err := runBench(ctx, run, env.Stdout); err != nil {
			return fmt.Errorf("bench (%s): %w", st, err)
		}
	}
	return nil
}

// externalFlags checks the flags of the external mode and loads the
// target's configuration.
func externalFlags(env cli.Env, o benchOptions, fs *flag.FlagSet, target, cfgPath, platformURL, pprofURL string, allowRemote bool) (externalOptions, error) {
	var x externalOptions
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range []string{"store", "dsn", "store-dsn", "latency", "memprofile"} {
		if set[name] {
			return x, cli.UsageError("bench: --" + name + " is for the in-process bench, not --target (set latency on the platform, e.g. platform-sim --latency)")
		}
	}
	parse := func(flagName, raw string) (*url.URL, error) {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, cli.UsageError(fmt.Sprintf("bench: --%s must be an http(s) URL such as http://127.0.0.1:8080, not %q", flagName, raw))
		}
		return u, nil
	}
	var err error
	if x.target, err = parse("target", target); err != nil {
		return x, err
	}
	if x.target.Scheme != "http" {
		return x, cli.UsageError("bench: --target must be http:// (the load tool writes plain HTTP/1.1; measure the bridge, not a TLS proxy)")
	}
	if !loopback.Host(x.target.Hostname()) && !allowRemote {
		return x, cli.UsageError(fmt.Sprintf("bench: --target %s is not on this machine; the bench adds accounts to the target's store and drives it hard, "+
			"so it runs against loopback (127.0.0.1, localhost) unless --allow-remote says the target is a test deployment (never production)", x.target.Host))
	}
	if platformURL != "" {
		if x.platform, err = parse("platform", platformURL); err != nil {
			return x, err
		}
	}
	if pprofURL != "" {
		if x.pprof, err = parse("target-pprof", pprofURL); err != nil {
			return x, err
		}
	}
	switch {
	case cfgPath == "":
		return x, cli.UsageError("bench: --target needs --config FILE, the target's configuration (the bench adds its accounts to the target's store)")
	case o.cpuProfile != "" && x.pprof == nil:
		return x, cli.UsageError("bench: --cpuprofile with --target needs --target-pprof http://<server.metrics_addr> (server.pprof: true)")
	}
	if x.cfg, err = env.LoadConfig(cfgPath); err != nil {
		return x, err
	}
	if x.platform != nil && x.cfg.Platform.APIKey == "" {
		return x, cli.UsageError("bench: --platform needs the platform credentials in --config (platform.api_key and the secret)")
	}
	return x, nil
}

// storeYAML is the bench's store configuration: a SQLite file in dir, or a
// schema of its own on the PostgreSQL server (dropped by the cleanup).
func storeYAML(ctx context.Context, o benchOptions, dir string) (yaml string, cleanup func(), err error) {
	if o.store != "postgres" {
		return fmt.Sprintf("store:\n  dsn: %s/bench.db\n", dir), func() {}, nil
	}
	// A schema of its own, so a bench meets no earlier run's accounts.
	dsn, drop, err := pgschema.Create(ctx, o.dsn, "bench_")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = drop(ctx)
	}
	return fmt.Sprintf("store:\n  driver: postgres\n  dsn: %q\nsession:\n  hash_key: %s\n  block_key: %s\n", dsn,
		strings.Repeat("ab", 32), strings.Repeat("cd", 32)), cleanup, nil
}

// latencies collects durations from many goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) { l.mu.Lock(); l.d = append(l.d, d); l.mu.Unlock() }

// percentiles returns the p-th fraction of the samples for each p
// (0 when there are none), sorting them once.
func (l *latencies) percentiles(ps ...float64) []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	slices.Sort(l.d)
	out := make([]time.Duration, len(ps))
	for i, p := range ps {
		if len(l.d) > 0 {
			out[i] = l.d[min(len(l.d)-1, int(float64(len(l.d))*p))]
		}
	}
	return out
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }

func runBench(ctx context.Context, o benchOptions, out io.Writer) error {
	a, addr, stop, err := startBench(ctx, o)
	if err != nil {
		return err
	}
	defer stop()
	sim := a.Emulator()
	sim.SetLatency("", o.latency)

	unlinked := max(10, o.accounts/10)
	load := "closed loop: each connection goes again when answered"
	if o.rate > 0 {
		load = fmt.Sprintf("open loop: %.0f launches/s offered", o.rate)
	}
	fmt.Fprintf(out, "bench: store %s, %d accounts (+%d unlinked), concurrency %d, duration %s, platform latency %s, %s\n", o.store, o.accounts, unlinked, o.concurrency, o.duration, o.latency, load)
	sessions, err := benchSessions(ctx, a, o, unlinked, "http://"+addr, out)
	if err != nil {
		return err
	}

	r := benchResult{concurrency: o.concurrency, rate: o.rate}
	callsPerLaunch := func(n int) float64 {
		counts := sim.CallCounts()
		sim.ResetCalls()
		total := counts[platformsim.EndpointListUsers] + counts[platformsim.EndpointCreateUser] + counts[platformsim.EndpointIssueToken]
		return float64(total) / float64(n)
	}
	sim.ResetCalls()
	// Keep-alive: the bridge's connections to the platform, opened from the
	// first launch on, are at most the launches in flight. (Counted over
	// every phase: the measured one may still open the connection that the
	// earlier ones, never at full concurrency, did not.)
	connsBefore := sim.Connections()
	// One kept-alive connection per worker, for every launch phase.
	launchers := make([]*launcher, o.concurrency)
	for i := range launchers {
		launchers[i] = &launcher{addr: addr}
		defer launchers[i].close()
	}
	if err := parallel(ctx, o.accounts, o.concurrency, func(w, i int) error { return launchers[w].launch(sessions[i]) }); err != nil {
		return fmt.Errorf("first launches: %w", err)
	}
	r.callsNew = callsPerLaunch(o.accounts)
	if err := parallel(ctx, unlinked, o.concurrency, func(w, i int) error { return launchers[w].launch(sessions[o.accounts+i]) }); err != nil {
		return fmt.Errorf("unlinked launches: %w", err)
	}
	r.callsUnlinked = callsPerLaunch(unlinked)

	// Returning users: the measured phase.
	if err := measureReturning(ctx, o, &r, launchers, sessions); err != nil {
		return err
	}
	r.conns = sim.Connections() - connsBefore
	r.callsReturning = callsPerLaunch(int(r.run.ok))

	// The floor: the same token call, signed, straight to the emulator.
	if r.raw, err = rawTokenLatency(ctx, a, sim, o); err != nil {
		return err
	}
	if o.memProfile != "" {
		if err := writeHeapProfile(o.memProfile); err != nil {
			return err
		}
	}
	r.report(out)
	if r.run.failed > 0 {
		return fmt.Errorf("%d launches failed", r.run.failed)
	}
	return nil
}

// startBench builds the bridge (with the embedded emulator) on the store
// --store names and serves it on loopback; stop ends it all.
func startBench(ctx context.Context, o benchOptions) (a *app.App, addr string, stop func(), err error) {
	var undo []func()
	stop = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	dir, err := os.MkdirTemp("", "ssobridge-bench-")
	if err != nil {
		return nil, "", nil, err
	}
	undo = append(undo, func() { os.RemoveAll(dir) })
	storeConf, dropStore, err := storeYAML(ctx, o, dir)
	if err != nil {
		return nil, "", nil, err
	}
	undo = append(undo, dropStore)
	// Cheap hashing: the bench measures launches, not sign-ins.
	cfg, err := config.Parse([]byte(storeConf+"password:\n  argon2_memory_kib: 64\n  argon2_iterations: 1\nlog:\n  level: error\nregulation:\n  max_retries: 0\n  max_retries_per_ip: 0\n"), nil)
	if err != nil {
		return nil, "", nil, err
	}
	if a, err = app.New(ctx, cfg, app.Options{LogOutput: io.Discard}); err != nil {
		return nil, "", nil, err
	}
	undo = append(undo, func() { a.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	undo = append(undo, func() { srv.Close() })
	return a, ln.Addr().String(), stop, nil
}

// benchSessions adds the accounts, N new to the platform and U that exist
// there but are not linked, with a password made for the run, and signs
// each in over HTTP.
func benchSessions(ctx context.Context, a *app.App, o benchOptions, unlinked int, base string, out io.Writer) ([]benchSession, error) {
	password := crand.Text() // this run's; never a fixed one
	hash, err := a.Hasher().Hash(ctx, password)
	if err != nil {
		return nil, err
	}
	var ns []store.NewAccount
	for i := range o.accounts + unlinked {
		email := benchEmail(i)
		ns = append(ns, store.NewAccount{Email: email, FirstName: "Bench", LastName: strconv.Itoa(i), PasswordHash: hash})
		if i >= o.accounts {
			if _, err := a.Emulator().AddUser("Bench", strconv.Itoa(i), email); err != nil {
				return nil, err
			}
		}
	}
	if err := a.Store().CreateAccounts(ctx, ns); err != nil {
		return nil, err
	}
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: o.concurrency, MaxIdleConns: o.concurrency},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	start := time.Now()
	sessions := make([]benchSession, len(ns))
	if err := parallel(ctx, len(ns), o.concurrency, func(_, i int) error {
		s, err := benchSignIn(client, base, ns[i].Email, password)
		sessions[i] = s
		return err
	}); err != nil {
		return nil, fmt.Errorf("sign-in: %w", err)
	}
	fmt.Fprintf(out, "signed in %d sessions in %s\n", len(sessions), time.Since(start).Round(time.Millisecond))
	return sessions, nil
}

// benchResult is what an in-process run measured.
type benchResult struct {
	concurrency                             int
	rate                                    float64
	run                                     driveResult // the returning launches
	elapsed                                 time.Duration
	cost                                    processCost
	raw                                     *latencies // the raw token call's
	conns                                   int64
	callsNew, callsUnlinked, callsReturning float64
}

// measureReturning drives returning users' launches for the run's duration
// (under the CPU profiler when asked) and samples the process around them.
func measureReturning(ctx context.Context, o benchOptions, r *benchResult, launchers []*launcher, sessions []benchSession) error {
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	before := sampleProcess()
	phase := time.Now()
	next := ownSessions(o.concurrency, o.accounts)
	r.run = drive(ctx, o.concurrency, o.rate, o.duration, func(worker int) error {
		return launchers[worker].launch(sessions[next(worker)])
	})
	r.elapsed = time.Since(phase)
	r.cost = sampleProcess().since(before)
	return nil
}

// report prints the run's figures, and one line of them all for scripts.
func (r benchResult) report(out io.Writer) {
	n := r.run.ok
	perSec := float64(n) / r.elapsed.Seconds()
	q := r.run.lat.percentiles(0.50, 0.95, 0.99)
	p50, p95, p99 := q[0], q[1], q[2]
	rq := r.raw.percentiles(0.50, 0.99)
	rp50, rp99 := rq[0], rq[1]
	ratio := float64(p50) / float64(max(rp50, 1))
	rss := PeakRSS()
	fmt.Fprintf(out, "returning launches: %d in %s, %.0f/s, %d failed\n", n, r.elapsed.Round(time.Millisecond), perSec, r.run.failed)
	if r.run.behind > 0 {
		fmt.Fprintf(out, "offered rate not sustained: %d launches fell due and were not sent in time (latency of those sent still counts from when they were due)\n", r.run.behind)
	}
	fmt.Fprintf(out, "launch latency:     p50 %s ms, p95 %s ms, p99 %s ms\n", ms(p50), ms(p95), ms(p99))
	fmt.Fprintf(out, "raw token call:     p50 %s ms, p99 %s ms (signed client straight to the emulator)\n", ms(rp50), ms(rp99))
	fmt.Fprintf(out, "launch p50 / raw p50: %.3f\n", ratio)
	fmt.Fprintf(out, "platform calls per launch: new %.2f, unlinked %.2f, returning %.2f\n", r.callsNew, r.callsUnlinked, r.callsReturning)
	fmt.Fprintf(out, "TCP connections opened to the platform while launching (every phase): %d (concurrency %d)\n", r.conns, r.concurrency)
	fmt.Fprintf(out, "whole process while launching (bridge, emulator, load generator): %s\n", r.cost.perLaunch(n))
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fmt.Fprintf(out, "peak RSS: %.1f MiB (now: Go heap in use %.1f MiB, goroutine stacks %.1f MiB, Go runtime total %.1f MiB, %d GCs)\n",
		rss, mib(m.HeapInuse), mib(m.StackInuse), mib(m.Sys-m.HeapReleased), m.NumGC)
	fmt.Fprintf(out, "bench: launches_per_s=%.0f p50_ms=%s p99_ms=%s raw_p50_ms=%s ratio_p50=%.3f calls_returning=%.2f calls_unlinked=%.2f calls_new=%.2f conns=%d rss_mib=%.1f offered_per_s=%.0f behind=%d cpu_us_per_launch=%s sched_p99_ms=%s\n",
		perSec, ms(p50), ms(p99), ms(rp50), ratio, r.callsReturning, r.callsUnlinked, r.callsNew, r.conns, rss, r.rate, r.run.behind,
		r.cost.cpuPerLaunch(n), ms(r.cost.schedP99))
}

// ownSessions gives each of c workers sessions of its own among n (those
// whose index is the worker's number modulo c), in turn: as a person does,
// a session never launches twice at once (the line would hold the second
// behind the first, and the bench would measure that wait). With fewer
// sessions than workers, workers share them.
func ownSessions(c, n int) func(worker int) int {
	turn := make([]int, c)
	return func(w int) int {
		if n < c {
			return rand.IntN(n)
		}
		own := (n - w + c - 1) / c // indices w, w+c, ... below n
		i := w + (turn[w]%own)*c
		turn[w]++
		return i
	}
}

// parallel runs f(worker, 0..n-1) on min(c, n) workers (numbered from 0)
// and returns the first error.
func parallel(ctx context.Context, n, c int, f func(worker, i int) error) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for w := range min(c, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(w, i); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

// benchSession is a signed-in browser as a launch needs it: its cookies
// (session and anti-forgery) and the launch form with its token.
type benchSession struct {
	cookie string // the Cookie header
	body   string // the form: _csrf=<token>
}

// benchSignIn signs email in as a browser does: the sign-in page gives the
// anti-forgery cookie and token, the sign-in the session, and the portal
// the token issued after sign-in (the cookie is rotated then).
func benchSignIn(client *http.Client, base, email, password string) (benchSession, error) {
	page := func(path string, cookies []*http.Cookie) (string, []*http.Cookie, error) {
		req, _ := http.NewRequest("GET", base+path, nil)
		for _, ck := range cookies {
			req.AddCookie(ck)
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		token := handlers.FormToken(b)
		if err != nil || token == "" {
			return "", nil, fmt.Errorf("%s of %s: status %d, no form token", path, email, resp.StatusCode)
		}
		return token, resp.Cookies(), nil
	}
	token, cookies, err := page("/login", nil)
	if err != nil {
		return benchSession{}, err
	}
	form := url.Values{"_csrf": {token}, "email": {email}, "password": {password}}
	req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, ck := range cookies {
		req.AddCookie(ck)
	}
	resp, err := client.Do(req)
	if err != nil {
		return benchSession{}, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var session *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == handlers.SessionCookie {
			session = ck
		}
	}
	if session == nil {
		return benchSession{}, fmt.Errorf("sign-in of %s: status %d, no session", email, resp.StatusCode)
	}
	token, cookies, err = page("/", []*http.Cookie{session})
	if err != nil {
		return benchSession{}, err
	}
	header := session.Name + "=" + session.Value
	for _, ck := range cookies {
		if ck.Name != handlers.SessionCookie {
			header += "; " + ck.Name + "=" + ck.Value
		}
	}
	return benchSession{cookie: header, body: url.Values{"_csrf": {token}}.Encode()}, nil
}

// drive runs op on workers goroutines for d. With rate 0 (closed loop) each
// worker goes again as soon as it is answered: the load is as high as the
// machine allows, and latency is mostly the queue that load builds. With a
// rate, operations are due at fixed times (rate per second in all) and each
// latency is measured from when the operation was due, not when a worker got
// to it, so time spent waiting for a free worker counts (no coordinated
// omission, as in wrk2).
func drive(ctx context.Context, workers int, rate float64, d time.Duration, op func(worker int) error) driveResult {
	var lat latencies
	var ok, failed atomic.Int64
	var next atomic.Int64
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				begin := time.Now()
				if !begin.Before(deadline) {
					return // also in open loop: launches still due when time is up are not sent (see behind)
				}
				if rate > 0 {
					due := start.Add(time.Duration(float64(next.Add(1)-1) * float64(time.Second) / rate))
					if !due.Before(deadline) {
						return
					}
					time.Sleep(time.Until(due))
					begin = due
				}
				if err := op(w); err != nil {
					failed.Add(1)
					continue
				}
				lat.add(time.Since(begin))
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	r := driveResult{lat: &lat, ok: ok.Load(), failed: failed.Load()}
	if rate > 0 {
		r.behind = max(0, int64(math.Ceil(rate*d.Seconds()))-r.ok-r.failed)
	}
	return r
}

// driveResult is what drive measured. behind counts, in open loop, the
// operations that fell due but were not sent before time was up: the
// offered rate was more than could be served.
type driveResult struct {
	lat                *latencies
	ok, failed, behind int64
}

// launcher drives launches over one kept-alive connection of its own,
// writing the request and reading the answer in the calling goroutine (as
// wrk does). net/http's client hands every request to a writer and a
// reader goroutine; with 64 of them on 2 cores those hand-offs were the
// load generator's largest cost and added scheduling delay to what the
// bench reports as the bridge's latency.
type launcher struct {
	addr string
	conn net.Conn
	r    *bufio.Reader
	req  []byte
}

func (l *launcher) close() {
	if l.conn != nil {
		l.conn.Close()
		l.conn = nil
	}
}

// launch posts one launch with session and expects the 303 to the editor.
func (l *launcher) launch(session benchSession) error {
	if l.conn == nil {
		c, err := net.Dial("tcp", l.addr)
		if err != nil {
			return err
		}
		l.conn, l.r = c, bufio.NewReader(c)
	}
	l.req = fmt.Appendf(l.req[:0], "POST /launch HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\n"+
		"Content-Length: %d\r\nCookie: %s\r\n\r\n%s", l.addr, len(session.body), session.cookie, session.body)
	if _, err := l.conn.Write(l.req); err != nil {
		l.close()
		return err
	}
	resp, err := http.ReadResponse(l.r, nil)
	if err != nil {
		l.close()
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.Close {
		l.close()
	}
	if resp.StatusCode != http.StatusSeeOther {
		return fmt.Errorf("launch: status %d", resp.StatusCode)
	}
	return err
}

// rawTokenLatency measures the token call alone: a signed client of its
// own straight to the emulator, driven like the launches (same concurrency
// and rate), for a bounded time.
func rawTokenLatency(ctx context.Context, a *app.App, sim *platformsim.Running, o benchOptions) (*latencies, error) {
	admin := sim.Credentials()[0]
	raw, err := apiclient.New(apiclient.Options{BaseURL: sim.URL,
		Credentials: apiclient.Credentials{Method: apiclient.AuthHMAC, APIKey: admin.Key, APISecret: admin.Secret}})
	if err != nil {
		return nil, err
	}
	defer raw.CloseIdleConnections()
	l, err := a.Store().LinkFor(ctx, 1)
	if err != nil {
		return nil, errors.New("bench: no linked account to issue raw tokens for")
	}
	run := drive(ctx, o.concurrency, o.rate, min(o.duration/2, 5*time.Second), func(int) error {
		_, err := raw.IssueLoginToken(ctx, apiclient.UserID(l.PlatformUserID), apiclient.TokenProperties{})
		return err
	})
	if run.failed > 0 {
		return nil, fmt.Errorf("bench: %d raw token calls failed", run.failed)
	}
	return run.lat, nil
}

// PeakRSS is the process's peak resident set (VmHWM) in MiB; 0 where the
// OS does not say (readProcessStat).
func PeakRSS() float64 {
	s, _ := readProcessStat(os.Getpid())
	return s.hwm
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
