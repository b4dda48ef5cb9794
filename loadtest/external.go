package loadtest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/internal/loopback"
	"github.com/ssobridge/ssobridge/store"
)

// externalOptions are the settings of the external mode: a running bridge
// (target) and, for the floor, the platform it calls.
type externalOptions struct {
	target   *url.URL
	platform *url.URL // nil: the raw token call is not measured
	pprof    *url.URL // the target's profiler (server.pprof), for --cpuprofile
	cfg      config.Config
	// wrkScript: write a wrk script for the signed-in sessions there, and
	// hold the accounts until stopped instead of measuring.
	wrkScript string
}

// benchEmail is the email of the in-process bench's i-th account.
func benchEmail(i int) string { return fmt.Sprintf("bench%05d@example.com", i) }

// benchRun is one run of the external bench in the target's store: its
// accounts are named by a random run id (so no account of anyone else's
// is ever touched) and signed in with a password made for the run.
type benchRun struct {
	id, password string
	n            int
}

func newBenchRun(n int) benchRun {
	return benchRun{id: strings.ToLower(rand.Text()[:8]), password: rand.Text(), n: n}
}

// email is the run's i-th account.
func (r benchRun) email(i int) string { return fmt.Sprintf("bench-%s-%05d@example.com", r.id, i) }

// processWatch samples another process's CPU time and memory by PID; it
// says why when it cannot (another host, no /proc).
type processWatch struct {
	name string
	pid  int
	err  error
}

func watchListener(name string, u *url.URL) processWatch {
	w := processWatch{name: name}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = 80
		if u.Scheme == "https" {
			port = 443
		}
	}
	if host := u.Hostname(); !loopback.Host(host) {
		w.err = fmt.Errorf("%s is not on this host", host)
		return w
	}
	w.pid, w.err = listenerPID(port)
	return w
}

func (w processWatch) sample() processStat {
	if w.err != nil {
		return processStat{}
	}
	s, _ := readProcessStat(w.pid)
	return s
}

// describe is the report's line for the watched process.
func (w processWatch) describe() string {
	if w.err != nil {
		return fmt.Sprintf("%s: CPU not measured (%v)", w.name, w.err)
	}
	return fmt.Sprintf("%s: pid %d", w.name, w.pid)
}

// usPer is CPU microseconds per operation, "-" when not measured.
func usPer(cpu time.Duration, n int64) string {
	if cpu <= 0 || n <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(cpu.Nanoseconds())/1e3/float64(n))
}

// addAccounts adds the run's accounts to the target's store, all or none.
// One hash serves every account (the bench measures launches, not hashing).
func (r benchRun) addAccounts(ctx context.Context, st store.Store, pw config.Password) error {
	hasher, err := passhash.NewHasher(passhash.HashParams{MemoryKiB: pw.Argon2MemoryKiB, Iterations: pw.Argon2Iterations, Parallelism: pw.Argon2Parallelism}, 1)
	if err != nil {
		return err
	}
	hash, err := hasher.Hash(ctx, r.password)
	if err != nil {
		return err
	}
	ns := make([]store.NewAccount, r.n)
	for i := range ns {
		ns[i] = store.NewAccount{Email: r.email(i), FirstName: "Bench", LastName: strconv.Itoa(i), PasswordHash: hash}
	}
	return st.CreateAccounts(ctx, ns)
}

// removeAccounts deletes the run's accounts (with their links and
// sessions) from the target's store; it returns how many it removed.
func (r benchRun) removeAccounts(ctx context.Context, cfg config.Config) (int, error) {
	st, err := app.OpenStore(ctx, cfg, nil)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	removed := 0
	for i := range r.n {
		acct, err := st.AccountByEmail(ctx, r.email(i))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err == nil {
			err = st.DeleteAccount(ctx, acct.ID)
		}
		if err != nil {
			return removed, fmt.Errorf("remove %s: %w", r.email(i), err)
		}
		removed++
	}
	return removed, nil
}

// fetchProfile asks the target's profiler for a CPU profile of the next d
// and writes it to path; it returns once the profile is written.
func fetchProfile(ctx context.Context, client *http.Client, pprofURL *url.URL, d time.Duration, path string) error {
	u := pprofURL.JoinPath("/debug/pprof/profile")
	u.RawQuery = "seconds=" + strconv.Itoa(max(1, int(d.Round(time.Second)/time.Second)))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("CPU profile from %s: %w", pprofURL.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("CPU profile from %s: status %d (is server.pprof on, on server.metrics_addr?)", pprofURL.Redacted(), resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runExternal drives a running bridge over real sockets: it signs the
// bench's accounts in, launches each once (linking them), then measures
// returning launches for the duration, sampling the target's and the
// platform's CPU from /proc; then the same token call, signed, straight
// to the platform, driven the same way, for the floor.
func runExternal(ctx context.Context, o benchOptions, x externalOptions, out io.Writer) error {
	base := strings.TrimRight(x.target.String(), "/")
	addr := x.target.Host
	if x.target.Port() == "" {
		addr = net.JoinHostPort(x.target.Hostname(), "80")
	}
	bridge := watchListener("bridge", x.target)
	platform := processWatch{name: "platform", err: errors.New("no --platform")}
	raw, err := rawClient(x)
	if err != nil {
		return err
	}
	if raw != nil {
		platform = watchListener("platform", x.platform)
		defer raw.CloseIdleConnections()
	}
	fmt.Fprintf(out, "bench: target %s, %d accounts, concurrency %d, duration %s\n", x.target.Redacted(), o.accounts, o.concurrency, o.duration)
	fmt.Fprintf(out, "%s; %s\n", bridge.describe(), platform.describe())

	// The target's store, open from here until the accounts are linked and
	// no longer: this process's handle (its checkpoints on SQLite, its
	// listener on PostgreSQL) must not run beside the measured launches.
	st, err := app.OpenStore(ctx, x.cfg, nil)
	if err != nil {
		return fmt.Errorf("open the target's store (--config): %w", err)
	}
	closeStore := sync.OnceFunc(func() { st.Close() })
	defer closeStore()
	run := newBenchRun(o.accounts)
	if err := run.addAccounts(ctx, st, x.cfg.Password); err != nil {
		return fmt.Errorf("add the bench's accounts: %w", err)
	}
	defer func() {
		// Also after Ctrl-C: the accounts must not outlive the run.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		closeStore()
		n, err := run.removeAccounts(cctx, x.cfg)
		if err != nil {
			fmt.Fprintf(out, "bench: removing the run's accounts failed after %d: %v (they are bench-%s-*@example.com)\n", n, err, run.id)
			return
		}
		fmt.Fprintf(out, "removed the run's %d accounts (bench-%s-*@example.com) from the target's store\n", n, run.id)
	}()
	launchers := make([]*launcher, o.concurrency)
	for i := range launchers {
		launchers[i] = &launcher{addr: addr}
		defer launchers[i].close()
	}
	sessions, err := signInAndLaunchOnce(ctx, o, x, out, base, run, launchers)
	if err != nil {
		return err
	}
	var platformUser string
	if raw != nil {
		if platformUser, err = linkedPlatformUser(ctx, st, run.email(0)); err != nil {
			return err
		}
	}
	closeStore()

	if x.wrkScript != "" {
		if err := writeWrkScript(x.wrkScript, sessions); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s: %d signed-in sessions, each launched once; e.g. wrk -t2 -c%d -d10s --latency -s %s %s\n",
			x.wrkScript, len(sessions), o.concurrency, x.wrkScript, base)
		fmt.Fprintf(out, "bench: holding the accounts for wrk until stopped (Ctrl-C or SIGTERM); then they are removed\n")
		<-ctx.Done()
		return nil
	}
	m, err := measureLaunches(ctx, o, x, bridge, platform, launchers, sessions)
	if err != nil {
		return err
	}
	if raw != nil {
		if m.raw, err = measureRawCalls(ctx, o, raw, platform, platformUser); err != nil {
			return err
		}
	}
	m.report(out, x, bridge.err == nil)
	if m.launches.failed > 0 {
		return fmt.Errorf("%d launches failed", m.launches.failed)
	}
	return nil
}

// rawClient is the Partner API client that makes the raw token calls
// (--platform, with the credentials of --config); nil without --platform.
func rawClient(x externalOptions) (*apiclient.Client, error) {
	if x.platform == nil {
		return nil, nil
	}
	p := x.cfg.Platform
	raw, err := apiclient.New(apiclient.Options{BaseURL: x.platform.String(), Timeout: p.Timeout,
		Credentials: apiclient.Credentials{Method: apiclient.AuthMethod(p.Auth), APIKey: p.APIKey, APISecret: p.APISecret,
			SchemeHMAC: p.SchemeHMAC, SchemeSimple: p.SchemeSimple}})
	if err != nil {
		return nil, fmt.Errorf("platform client (--platform, credentials from --config): %w", err)
	}
	return raw, nil
}

// signInAndLaunchOnce signs the run's accounts in over HTTP and launches
// each once, so the measured launches are returning users'.
func signInAndLaunchOnce(ctx context.Context, o benchOptions, x externalOptions, out io.Writer, base string, run benchRun, launchers []*launcher) ([]benchSession, error) {
	start := time.Now()
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: o.concurrency, MaxIdleConns: o.concurrency},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	sessions := make([]benchSession, o.accounts)
	// As many sign-ins at once as the target hashes passwords at once: more
	// would wait for a hashing slot and some would get the busy page.
	if err := parallel(ctx, o.accounts, max(1, x.cfg.Password.HashConcurrency), func(_, i int) error {
		s, err := benchSignIn(client, base, run.email(i), run.password)
		sessions[i] = s
		return err
	}); err != nil {
		return nil, fmt.Errorf("sign-in: %w", err)
	}
	fmt.Fprintf(out, "signed in %d accounts in %s\n", o.accounts, time.Since(start).Round(time.Millisecond))
	if err := parallel(ctx, o.accounts, o.concurrency, func(w, i int) error { return launchers[w].launch(sessions[i]) }); err != nil {
		return nil, fmt.Errorf("first launches: %w", err)
	}
	return sessions, nil
}

// externalMeasure is what a run measured from outside.
type externalMeasure struct {
	launches                    driveResult
	elapsed                     time.Duration
	bridgeAfter                 processStat
	bridgeCPU, platformCPU, own time.Duration // CPU over the launches: the bridge's, the platform's, the load tool's
	raw                         *rawMeasure   // nil without --platform
}

// rawMeasure is the raw token calls' run.
type rawMeasure struct {
	run         driveResult
	elapsed     time.Duration
	platformCPU time.Duration
}

// measureLaunches drives returning launches for the run's duration (with
// the bridge's CPU profile fetched meanwhile when asked) and samples the
// processes' CPU around them.
func measureLaunches(ctx context.Context, o benchOptions, x externalOptions, bridge, platform processWatch, launchers []*launcher, sessions []benchSession) (externalMeasure, error) {
	profiled := make(chan error, 1)
	if o.cpuProfile != "" {
		// A client of its own: the profile takes the whole phase to come.
		pc := &http.Client{Timeout: o.duration + time.Minute}
		go func() { profiled <- fetchProfile(ctx, pc, x.pprof, o.duration, o.cpuProfile) }()
	} else {
		profiled <- nil
	}
	bridgeBefore, platformBefore, selfBefore := bridge.sample(), platform.sample(), processCPU()
	phase := time.Now()
	next := ownSessions(o.concurrency, o.accounts)
	res := drive(ctx, o.concurrency, o.rate, o.duration, func(worker int) error {
		return launchers[worker].launch(sessions[next(worker)])
	})
	m := externalMeasure{launches: res, elapsed: time.Since(phase)}
	m.bridgeAfter = bridge.sample()
	platformAfter, selfAfter := platform.sample(), processCPU()
	if err := <-profiled; err != nil {
		return m, err
	}
	for _, l := range launchers {
		l.close()
	}
	m.bridgeCPU, m.platformCPU, m.own = m.bridgeAfter.cpu-bridgeBefore.cpu, platformAfter.cpu-platformBefore.cpu, selfAfter-selfBefore
	return m, nil
}

// measureRawCalls makes the launch's platform call straight from here, for
// the same time: the least a launch can take.
func measureRawCalls(ctx context.Context, o benchOptions, raw *apiclient.Client, platform processWatch, platformUser string) (*rawMeasure, error) {
	before := platform.sample()
	start := time.Now()
	run := drive(ctx, o.concurrency, o.rate, o.duration, func(int) error {
		_, err := raw.IssueLoginToken(ctx, apiclient.UserID(platformUser), apiclient.TokenProperties{})
		return err
	})
	r := &rawMeasure{run: run, elapsed: time.Since(start), platformCPU: platform.sample().cpu - before.cpu}
	if run.failed > 0 {
		return nil, fmt.Errorf("bench: %d raw token calls failed", run.failed)
	}
	return r, nil
}

// report prints the run's figures, and one line of them all for scripts.
func (m externalMeasure) report(out io.Writer, x externalOptions, bridgeSeen bool) {
	res, n := m.launches, m.launches.ok
	perSec := float64(n) / m.elapsed.Seconds()
	q := res.lat.percentiles(0.50, 0.95, 0.99)
	fmt.Fprintf(out, "returning launches: %d in %s, %.0f/s, %d failed\n", n, m.elapsed.Round(time.Millisecond), perSec, res.failed)
	if res.behind > 0 {
		fmt.Fprintf(out, "offered rate not sustained: %d launches fell due and were not sent in time\n", res.behind)
	}
	fmt.Fprintf(out, "launch latency:     p50 %s ms, p95 %s ms, p99 %s ms\n", ms(q[0]), ms(q[1]), ms(q[2]))
	cpuRatio := "-"
	if m.bridgeCPU > 0 && m.platformCPU > 0 {
		cpuRatio = fmt.Sprintf("%.2f", float64(m.bridgeCPU)/float64(m.platformCPU))
	}
	fmt.Fprintf(out, "CPU per launch:     bridge %s µs, platform %s µs, load tool %s µs (bridge / platform %s)\n",
		usPer(m.bridgeCPU, n), usPer(m.platformCPU, n), usPer(m.own, n), cpuRatio)
	line := fmt.Sprintf("bench: launches_per_s=%.0f p50_ms=%s p95_ms=%s p99_ms=%s bridge_cpu_us=%s platform_cpu_us=%s cpu_ratio=%s",
		perSec, ms(q[0]), ms(q[1]), ms(q[2]), usPer(m.bridgeCPU, n), usPer(m.platformCPU, n), cpuRatio)
	if r := m.raw; r != nil {
		rq := r.run.lat.percentiles(0.50, 0.99)
		p50r, p99r := float64(q[0])/float64(max(rq[0], 1)), float64(q[2])/float64(max(rq[1], 1))
		fmt.Fprintf(out, "raw token call:     %d in %s, %.0f/s, p50 %s ms, p99 %s ms, platform CPU %s µs per call (signed, straight to %s)\n",
			r.run.ok, r.elapsed.Round(time.Millisecond), float64(r.run.ok)/r.elapsed.Seconds(), ms(rq[0]), ms(rq[1]),
			usPer(r.platformCPU, r.run.ok), x.platform.Redacted())
		fmt.Fprintf(out, "launch / raw call:  p50 %.3f, p99 %.3f\n", p50r, p99r)
		line += fmt.Sprintf(" raw_per_s=%.0f raw_p50_ms=%s raw_p99_ms=%s raw_platform_cpu_us=%s ratio_p50=%.3f ratio_p99=%.3f",
			float64(r.run.ok)/r.elapsed.Seconds(), ms(rq[0]), ms(rq[1]), usPer(r.platformCPU, r.run.ok), p50r, p99r)
	}
	if bridgeSeen {
		// The peak is the sign-ins' (argon2id's memory, hash_concurrency at
		// a time), which the resident set takes a while to give back.
		fmt.Fprintf(out, "bridge memory:      RSS %.1f MiB at the end of the launches; peak since start %.1f MiB (VmHWM: the sign-ins' password hashing)\n",
			m.bridgeAfter.rss, m.bridgeAfter.hwm)
		line += fmt.Sprintf(" bridge_rss_mib=%.1f bridge_peak_rss_mib=%.1f", m.bridgeAfter.rss, m.bridgeAfter.hwm)
	}
	fmt.Fprintln(out, line)
}

// writeWrkScript writes a wrk Lua script that posts launches of the
// sessions, one chosen at random for each request (wrk reports answers
// other than 2xx/3xx as "Non-2xx or 3xx responses"; a launch answers 303).
// The file holds live session cookies: it is written for the owner alone
// (0600).
func writeWrkScript(path string, sessions []benchSession) error {
	var b strings.Builder
	b.WriteString("-- ssobridge-bench --wrk-script: launches of signed-in sessions (live cookies: keep this file private)\nlocal sessions = {\n")
	for _, s := range sessions {
		fmt.Fprintf(&b, "  {%q, %q},\n", s.cookie, s.body)
	}
	b.WriteString(`}
-- Each of wrk's two threads (wrk -t2) takes its half of the sessions in
-- turn: with at most a thread's connections in flight and more sessions
-- than that in its half, a session never launches twice at once.
local threads, counter = 2, 0
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end
local mine, turn = {}, 0
function init(args)
  for i = 1, #sessions do
    if (i - 1) % threads == id % threads then mine[#mine + 1] = sessions[i] end
  end
end
request = function()
  turn = turn % #mine + 1
  local s = mine[turn]
  return wrk.format("POST", "/launch", {["Content-Type"] = "application/x-www-form-urlencoded", ["Cookie"] = s[1]}, s[2])
end
`)
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// linkedPlatformUser is the platform user linked to the bench's first
// account: the raw token call asks a token for it.
func linkedPlatformUser(ctx context.Context, st store.Store, email string) (string, error) {
	acct, err := st.AccountByEmail(ctx, email)
	if err != nil {
		return "", err
	}
	l, err := st.LinkFor(ctx, acct.ID)
	if err != nil {
		return "", fmt.Errorf("bench: %s has no platform user after its launch: %w", acct.Email, err)
	}
	return l.PlatformUserID, nil
}
