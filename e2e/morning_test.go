package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/internal/pgtest"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/ssobridge/ssobridge/wayin/portal"
)

// The first morning of term, as the capacity figures are measured
// (docs/capacity.md): a platform that allows 20 requests a second (429
// with Retry-After past it), the bridge configured with that rate, and
// 400 pupils arriving through the portal handoff within 20 s, each in a
// browser that follows redirects and the waiting page's Refresh (at the
// pace the page asks for). Each figure is logged and asserted.
const (
	morningUsers  = 400
	morningSpread = 20 * time.Second
	morningRate   = 20
)

// morningResult is what the users of a morning saw.
type morningResult struct {
	landed  int
	waits   []time.Duration // arrival to the exchange redirect, of those who landed
	last    time.Duration   // first arrival to the last landing
	other   map[string]int  // the users who did not land, by what they got
	waiting int             // waiting pages shown
}

func (r morningResult) percentile(p float64) time.Duration {
	if len(r.waits) == 0 {
		return 0
	}
	w := slices.Clone(r.waits)
	slices.Sort(w)
	return w[min(len(w)-1, int(p*float64(len(w))))]
}

// morning sends n users (prefix000@example.com…) through the portal
// handoff, spread evenly over spread and over the instances; a user's
// refreshes go round the instances (a load balancer), and a user lands
// on the 303 to the platform's exchange URL.
func morning(t *testing.T, apps []*testApp, sim *platformsim.Running, n int, spread time.Duration, prefix string) morningResult {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: n}
	defer tr.CloseIdleConnections()
	var mu sync.Mutex
	res := morningResult{other: map[string]int{}}
	var lastLanding time.Time
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Until(start.Add(time.Duration(i) * spread / time.Duration(n)))) // this user's arrival
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar, Transport: tr, Timeout: time.Minute,
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			outcome, waited, pages := oneMorningUser(c, apps, sim, i, prefix)
			mu.Lock()
			defer mu.Unlock()
			res.waiting += pages
			if outcome != "landed" {
				res.other[outcome]++
				return
			}
			res.landed++
			res.waits = append(res.waits, waited)
			if now := time.Now(); now.After(lastLanding) {
				lastLanding = now
			}
		}()
	}
	wg.Wait()
	res.last = lastLanding.Sub(start)
	return res
}

// oneMorningUser is one pupil's arrival: "landed", or what they got.
func oneMorningUser(c *http.Client, apps []*testApp, sim *platformsim.Running, i int, prefix string) (string, time.Duration, int) {
	tok, err := portal.SignHS256([]byte(e2ePortalSecret), e2ePortalIssuer, e2ePortalAud,
		portal.Claims{Email: fmt.Sprintf("%s%03d@example.com", prefix, i), GivenName: "New", FamilyName: "Pupil"}, time.Now())
	if err != nil {
		return "sign: " + err.Error(), 0, 0
	}
	arrived := time.Now()
	url := apps[i%len(apps)].srv.URL + "/sso/jwt?jwt=" + tok
	for hop, pages := 0, 0; hop < 200; hop++ {
		resp, err := c.Get(url)
		if err != nil {
			return "no answer", 0, pages
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		refresh := metaRefresh(string(body))
		switch loc := resp.Header.Get("Location"); {
		case resp.StatusCode == http.StatusSeeOther && strings.HasPrefix(loc, sim.URL):
			return "landed", time.Since(arrived), pages
		case resp.StatusCode == http.StatusSeeOther && strings.HasPrefix(loc, "/launch/wait/"):
			url = apps[(i+hop+1)%len(apps)].srv.URL + loc // the waiting page's own address
		case resp.StatusCode == http.StatusOK && refresh != "":
			pages++
			secs, next, ok := strings.Cut(refresh, ";url=")
			s, err := strconv.Atoi(secs)
			if !ok || err != nil {
				return "bad refresh " + refresh, 0, pages
			}
			time.Sleep(time.Duration(s) * time.Second) // as the page asks
			url = apps[(i+hop+1)%len(apps)].srv.URL + next
		default:
			return strconv.Itoa(resp.StatusCode) + " " + loc, 0, pages
		}
	}
	return "refreshed 200 times", 0, 0
}

// platformCalls is the emulator's calls since the last reset and how many
// it answered 429.
func platformCalls(sim *platformsim.Running) (total, limited int) {
	for _, n := range sim.Server.CallCounts() {
		total += n
	}
	return total, sim.Server.RateLimited()
}

// assertNoDuplicates: every user of the morning has one platform user.
func assertNoDuplicates(t *testing.T, sim *platformsim.Running, n int, prefix string) {
	t.Helper()
	dups := 0
	for i := range n {
		if len(sim.Server.Users(fmt.Sprintf("%s%03d@example.com", prefix, i))) > 1 {
			dups++
		}
	}
	assert.Zero(t, dups, "no duplicate platform user")
}

func morningPlatform(t *testing.T) *platformsim.Running {
	return sharedPlatform(t, func(c *platformsim.Config) { c.RateLimit, c.RateBurst = morningRate, morningRate })
}

func morningOptions(sim *platformsim.Running) testOptions {
	return testOptions{platform: sim, realPacing: true, yaml: portalYAML,
		platformYAML: fmt.Sprintf("  rate_limit: %d\n", morningRate)}
}

// logMorning logs a morning's figures.
func logMorning(t *testing.T, what string, r morningResult, calls, limited int) {
	t.Logf("%s: %d of %d landed, the last %.1f s after the first arrival; wait p50 %.1f s, p95 %.1f s, max %.1f s; %d waiting pages; not landed %v; %d platform calls, %d answered 429 (%.1f%%)",
		what, r.landed, morningUsers, r.last.Seconds(), r.percentile(0.5).Seconds(), r.percentile(0.95).Seconds(), r.percentile(1).Seconds(),
		r.waiting, r.other, calls, limited, 100*float64(limited)/float64(max(1, calls)))
}

// assertFirstMorning is the done-when of a morning of never-provisioned
// users: at least 396 of 400 land, the last within 90 s, at most 5% of
// the platform calls meet a 429, no duplicate.
func assertFirstMorning(t *testing.T, sim *platformsim.Running, r morningResult, prefix string) {
	t.Helper()
	calls, limited := platformCalls(sim)
	logMorning(t, prefix, r, calls, limited)
	assert.GreaterOrEqual(t, r.landed, 396)
	assert.LessOrEqual(t, r.last, 90*time.Second)
	assert.LessOrEqual(t, float64(limited), 0.05*float64(calls), "at most 5%% of the calls meet a 429")
	assert.Positive(t, r.waiting, "users waited on the page, not on a blank tab")
	assertNoDuplicates(t, sim, morningUsers, prefix)
}

// TestFirstMorningNeverProvisioned: 400 new pupils (3 platform calls
// each: 60 s of the platform's pace) on one instance.
func TestFirstMorningNeverProvisioned(t *testing.T) {
	if testing.Short() {
		t.Skip("a first morning takes about 70 s")
	}
	t.Parallel()
	sim := morningPlatform(t)
	ta := startTestApp(t, morningOptions(sim))
	sim.Server.ResetCalls()
	r := morning(t, []*testApp{ta}, sim, morningUsers, morningSpread, "new")
	assertFirstMorning(t, sim, r, "new")
}

// TestFirstMorningTwoInstances: the same on two instances sharing one
// PostgreSQL database: the figures counted together (the budget is
// shared, not doubled).
func TestFirstMorningTwoInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("a first morning takes about 70 s")
	}
	t.Parallel()
	sim := morningPlatform(t)
	o := morningOptions(sim)
	o.postgres = pgtest.DSN(t)
	apps := []*testApp{startTestApp(t, o), startTestApp(t, o)}
	require.Eventually(t, func() bool {
		return apps[0].budget.Stats().Live == 2 && apps[1].budget.Stats().Live == 2
	}, 5*time.Second, 10*time.Millisecond, "the instances count each other")
	sim.Server.ResetCalls()
	r := morning(t, apps, sim, morningUsers, morningSpread, "pair")
	assertFirstMorning(t, sim, r, "pair")
}

// morningCSV writes the roll of a morning's users, as a partner exports
// it.
func morningCSV(t *testing.T, n int, prefix string) string {
	var b strings.Builder
	b.WriteString("email,firstName,lastName\n")
	for i := range n {
		fmt.Fprintf(&b, "%s%03d@example.com,New,Pupil\n", prefix, i)
	}
	path := filepath.Join(t.TempDir(), "roll.csv")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path
}

// TestFirstMorningProvisioned: the night before, `ssobridge provision
// --csv` creates the 400 platform users (800 calls at 20/s: 40 s); in the
// morning every pupil lands with one platform call, p95 wait at most 3 s.
func TestFirstMorningProvisioned(t *testing.T) {
	if testing.Short() {
		t.Skip("provisioning and a morning take about 65 s")
	}
	t.Parallel()
	sim := morningPlatform(t)
	ta := startTestApp(t, morningOptions(sim))
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(ta.yaml), 0o600))
	roll := morningCSV(t, morningUsers, "roll")

	sim.Server.ResetCalls()
	start := time.Now()
	code, out, errOut := runCLI(t, "", nil, "provision", "--csv", roll, "--config", cfgPath)
	took := time.Since(start)
	require.Equal(t, 0, code, "stdout: %s\nstderr: %s", out, errOut)
	calls, limited := platformCalls(sim)
	t.Logf("provision --csv of %d accounts: %.1f s, %d platform calls, %d answered 429\n%s", morningUsers, took.Seconds(), calls, limited, out)
	assert.LessOrEqual(t, took, 60*time.Second)
	assert.Contains(t, out, fmt.Sprintf("created %d, existed 0, already linked 0, failed 0", morningUsers))
	report, err := os.ReadFile(reportOf(t, out))
	require.NoError(t, err)
	assert.Equal(t, morningUsers+1, strings.Count(string(report), "\n"), "a report line per account")

	sim.Server.ResetCalls()
	r := morning(t, []*testApp{ta}, sim, morningUsers, morningSpread, "roll")
	calls, limited = platformCalls(sim)
	logMorning(t, "provisioned", r, calls, limited)
	assert.Equal(t, morningUsers, r.landed)
	assert.LessOrEqual(t, r.percentile(0.95), 3*time.Second)
	assert.InDelta(t, morningUsers, calls, morningUsers*0.05, "about one platform call each")
	assertNoDuplicates(t, sim, morningUsers, "roll")
}

// TestProvisionKilledAndRunAgain: `ssobridge provision` killed (kill -9)
// halfway and run again provisions every account once, none twice.
func TestProvisionKilledAndRunAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("provisions 300 accounts at 20/s")
	}
	t.Parallel()
	const n = 300
	sim := morningPlatform(t)
	cred := sim.Credentials()[0]
	cfg, dsn := writeConfig(t, fmt.Sprintf("platform:\n  base_url: %s\n  api_key: %s\n  api_secret: %s\n  rate_limit: %d\n", sim.URL, cred.Key, cred.Secret, morningRate))
	roll := morningCSV(t, n, "kill")
	created := func() int {
		c := 0
		for i := range n {
			c += len(sim.Server.Users(fmt.Sprintf("kill%03d@example.com", i)))
		}
		return c
	}

	cmd, _, _ := startCLI(t, nil, "provision", "--csv", roll, "--config", cfg)
	require.Eventually(t, func() bool { return created() >= n/2 }, 2*time.Minute, 50*time.Millisecond)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	before := created()
	t.Logf("killed with %d of %d platform users created", before, n)
	require.Less(t, before, n)

	code, out, errOut := runCLI(t, "", nil, "provision", "--csv", roll, "--config", cfg)
	require.Equal(t, 0, code, "stdout: %s\nstderr: %s", out, errOut)
	t.Logf("run again:\n%s", out)
	for i := range n {
		assert.Len(t, sim.Server.Users(fmt.Sprintf("kill%03d@example.com", i)), 1, "kill%03d: one platform user", i)
	}
	s, err := sqlstore.OpenSQLite(t.Context(), dsn, nil)
	require.NoError(t, err)
	defer s.Close()
	linked, unlinked, err := s.CountLinks(t.Context())
	require.NoError(t, err)
	assert.Equal(t, [2]int{n, 0}, [2]int{linked, unlinked}, "every account linked")
}

// TestFirstMorningRateNotConfigured: the same morning on one instance of
// a bridge that was not told the platform's rate: it learns it from the
// 429s (every caller pauses for the Retry-After, then paces at a rate
// lowered at each 429 and raised each calm second).
func TestFirstMorningRateNotConfigured(t *testing.T) {
	if testing.Short() {
		t.Skip("a first morning takes about 70 s")
	}
	t.Parallel()
	sim := morningPlatform(t)
	o := morningOptions(sim)
	o.platformYAML = ""
	ta := startTestApp(t, o)
	sim.Server.ResetCalls()
	r := morning(t, []*testApp{ta}, sim, morningUsers, morningSpread, "learn")
	calls, limited := platformCalls(sim)
	logMorning(t, "rate not configured", r, calls, limited)
	t.Logf("learned rate at the end: %.1f/s", ta.budget.Stats().Learned)
	assert.GreaterOrEqual(t, r.landed, 396)
	assert.LessOrEqual(t, float64(limited), 0.10*float64(calls), "at most 10%% of the calls meet a 429")
	assertNoDuplicates(t, sim, morningUsers, "learn")
}
