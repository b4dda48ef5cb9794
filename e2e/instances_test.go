package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/internal/pgtest"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// sharedPlatform starts one emulator for several instances to call.
func sharedPlatform(t testing.TB, tweak func(*platformsim.Config)) *platformsim.Running {
	t.Helper()
	cfg := platformsim.Config{Credentials: []platformsim.Credential{platformsim.NewCredential(true)}}
	if tweak != nil {
		tweak(&cfg)
	}
	sim, err := platformsim.New(cfg)
	require.NoError(t, err)
	run, err := platformsim.Start(sim, "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { run.Close() })
	return run
}

// instancePair is two bridges on one PostgreSQL schema (shared keys) that
// call one platform, as a partner runs them behind one URL.
func instancePair(t *testing.T, o testOptions) (a, b *testApp) {
	t.Helper()
	o.postgres = pgtest.DSN(t)
	if o.platform == nil {
		o.platform = sharedPlatform(t, o.simConfig)
	}
	return startTestApp(t, o), startTestApp(t, o)
}

// on is the same browser (its cookies) talking to another instance: cookies
// do not tell ports apart, as a load balancer's one URL would not.
func (b *browser) on(ta *testApp) *browser {
	return &browser{t: b.t, base: ta.srv.URL, c: b.c}
}

// Signed in on one instance, the browser launches on the other; signed out
// on the other, the first refuses it.
func TestInstancesShareSessions(t *testing.T) {
	a, b := instancePair(t, testOptions{})
	a.addAccount(t, "ada@example.com", false)
	onA := a.browser(t)
	require.Equal(t, http.StatusSeeOther, onA.login("ada@example.com", testPassword).status)
	onB := onA.on(b)
	r := onB.launch()
	require.Equal(t, http.StatusSeeOther, r.status, "a session made on A launches on B at once")
	assert.True(t, strings.HasPrefix(r.header.Get("Location"), a.sim.URL+"/api/5/login-token/login/"))

	// A copy of the cookie, as a second tab or a thief keeps it: signing
	// out clears the browser's own.
	copyOnA := a.browser(t)
	u, _ := url.Parse(a.srv.URL)
	copyOnA.c.Jar.SetCookies(u, onA.c.Jar.Cookies(u))
	require.Equal(t, http.StatusOK, copyOnA.get("/").status, "the copy is signed in (and A caches the session)")

	r = onB.post("/logout", url.Values{"_csrf": {onB.csrf("/")}})
	require.Equal(t, http.StatusSeeOther, r.status)
	assertRefusedWithin(t, copyOnA, time.Now(), "signed out on B")
}

// assertRefusedWithin checks that the browser's session is refused at the
// latest 1 s after answered (the moment the change's request answered) and
// reports when it first was.
func assertRefusedWithin(t *testing.T, br *browser, answered time.Time, change string) time.Duration {
	t.Helper()
	deadline := answered.Add(time.Second)
	refused := func() bool { return br.get("/").header.Get("Location") == "/login?expired=1" }
	for time.Now().Before(deadline) {
		if refused() {
			took := time.Since(answered)
			t.Logf("%s: refused on the other instance %s after the change answered", change, took.Round(time.Millisecond))
			return took
		}
		time.Sleep(5 * time.Millisecond)
	}
	assert.True(t, refused(), "%s: still served 1 s after the change answered", change)
	return time.Since(answered)
}

// A change made on one instance is in force on the other within 1 s of
// its answer: disabling, a new password, ending sessions, a lifted ban.
func TestInstancesChangesHoldWithinASecond(t *testing.T) {
	a, b := instancePair(t, testOptions{yaml: "regulation:\n  max_retries: 3\n"})
	a.addAccount(t, "root@example.com", true)
	admin := a.browser(t)
	require.Equal(t, http.StatusSeeOther, admin.login("root@example.com", testPassword).status)

	for _, change := range []struct{ name, action string }{
		{"disable", "disable"}, {"end all sessions", "end-sessions"}, {"new password", "password"},
	} {
		t.Run(change.name, func(t *testing.T) {
			email := strings.ReplaceAll(change.action, "-", "") + "@example.com"
			victim := a.addAccount(t, email, false)
			user := b.browser(t)
			require.Equal(t, http.StatusSeeOther, user.login(email, testPassword).status)
			require.Equal(t, http.StatusOK, user.get("/").status, "served by B (and cached there)")
			tok := admin.csrf("/admin/accounts")
			r := admin.post(fmt.Sprintf("/admin/accounts/%d/%s", victim.ID, change.action), url.Values{"_csrf": {tok}, "password": {"another long password"}})
			answered := time.Now()
			require.Equal(t, http.StatusOK, r.status)
			assertRefusedWithin(t, user, answered, change.name)
		})
	}

	t.Run("ban on one, refused on the other; lifted on one, admitted on the other", func(t *testing.T) {
		a.addAccount(t, "banned@example.com", false)
		for range 3 {
			assert.Equal(t, http.StatusUnauthorized, a.browser(t).login("banned@example.com", "wrong password!").status)
		}
		r := b.browser(t).login("banned@example.com", testPassword)
		assert.Equal(t, http.StatusTooManyRequests, r.status, "banned on B after failing on A, right password and all")
		bans, err := b.store.ListBans(context.Background(), time.Now())
		require.NoError(t, err)
		require.NotEmpty(t, bans)
		_, err = a.store.LiftBans(context.Background(), "banned@example.com", "")
		require.NoError(t, err)
		assert.Equal(t, http.StatusSeeOther, b.browser(t).login("banned@example.com", testPassword).status, "lifted on A: admitted on B at once")
	})
}

// Twenty first launches of one email at once, ten through each instance,
// against a platform whose duplicate check races, make exactly one platform
// user: provisioning of an email is serialised through the store. The
// control: two bridges with stores of their own make duplicates on the same
// platform, so the race is real.
func TestInstancesOnePlatformUserPerEmail(t *testing.T) {
	racy := func(c *platformsim.Config) { c.RacyCreate = true; c.RacyPause = 30 * time.Millisecond }
	launchTwenty := func(t *testing.T, a, b *testApp) map[int]int {
		var browsers []*browser
		for _, ta := range []*testApp{a, b} {
			br := ta.browser(t)
			require.Equal(t, http.StatusSeeOther, br.login("ada@example.com", testPassword).status)
			browsers = append(browsers, br)
		}
		tokens := []string{browsers[0].csrf("/"), browsers[1].csrf("/")}
		var mu sync.Mutex
		counts := map[int]int{}
		var wg sync.WaitGroup
		for i, br := range browsers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got := br.postAtOnce("/launch", 10, func(int) url.Values { return url.Values{"_csrf": {tokens[i]}} })
				mu.Lock()
				for k, v := range got {
					counts[k] += v
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		return counts
	}

	t.Run("one store", func(t *testing.T) {
		a, b := instancePair(t, testOptions{simConfig: racy})
		a.addAccount(t, "ada@example.com", false)
		counts := launchTwenty(t, a, b)
		assert.Equal(t, map[int]int{http.StatusSeeOther: 20}, counts)
		users := a.sim.Users("ada@example.com")
		t.Logf("platform users for ada@example.com after 20 concurrent first launches on 2 instances: %d", len(users))
		assert.Len(t, users, 1)
	})
	t.Run("control: a store each", func(t *testing.T) {
		sim := sharedPlatform(t, racy)
		a, b := startTestApp(t, testOptions{platform: sim}), startTestApp(t, testOptions{platform: sim})
		a.addAccount(t, "ada@example.com", false)
		b.addAccount(t, "ada@example.com", false)
		launchTwenty(t, a, b)
		assert.Greater(t, len(sim.Users("ada@example.com")), 1, "without the shared lock the racy platform makes duplicates")
	})
}

// One of two instances (processes) is killed with SIGKILL under load; the
// other keeps serving, and every launch that was answered 303 has its audit
// row in the shared database.
func TestInstanceKilledUnderLoadLosesNoAcknowledgedLaunch(t *testing.T) {
	dsn := pgtest.DSN(t)
	simCmd, simOut, _ := startCLI(t, nil, "platform-sim", "--addr", "127.0.0.1:0", "--api-key", "k", "--api-secret", "s")
	t.Cleanup(func() { _ = simCmd.Process.Kill(); _ = simCmd.Wait() })
	sim := waitForURL(t, simOut, `platform emulator at (\S+)`)
	env := []string{"SSOBRIDGE_STORE_DRIVER=postgres", "SSOBRIDGE_STORE_DSN=" + dsn, "SSOBRIDGE_SESSION_HASH_KEY=" + sharedHashKey,
		"SSOBRIDGE_SESSION_BLOCK_KEY=" + sharedBlockKey, "SSOBRIDGE_PLATFORM_BASE_URL=" + sim, "SSOBRIDGE_PLATFORM_API_KEY=k",
		"SSOBRIDGE_PLATFORM_API_SECRET=s", "SSOBRIDGE_SERVER_ADDR=127.0.0.1:0", "SSOBRIDGE_PASSWORD_ARGON2_MEMORY_KIB=64",
		"SSOBRIDGE_PASSWORD_ARGON2_ITERATIONS=1", "SSOBRIDGE_REGULATION_MAX_RETRIES=0", "SSOBRIDGE_REGULATION_MAX_RETRIES_PER_IP=0"}
	const workers = 8
	for i := range workers {
		code, _, stderr := runCLI(t, testPassword+"\n", env, "user", "add", "--email", fmt.Sprintf("w%d@example.com", i), "--first-name", "W", "--last-name", "L")
		require.Equal(t, 0, code, stderr)
	}
	var bases []string
	var procs []*processUnderTest
	for range 2 {
		cmd, out, errOut := startCLI(t, env)
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		procs = append(procs, &processUnderTest{cmd: cmd, out: out, errOut: errOut})
		bases = append(bases, waitForURL(t, out, `ssobridge listening on (\S+)`))
	}

	type worker struct {
		b        *browser
		tok      string
		instance int
	}
	var ws []worker
	for i := range workers {
		br, tok := signedIn(t, bases[i%2], fmt.Sprintf("w%d@example.com", i))
		ws = append(ws, worker{br, tok, i % 2})
	}
	var mu sync.Mutex
	var acked []string // request ids of the 303s
	var killed atomic.Bool
	var afterKill [2]atomic.Int64 // 303s per instance after the kill
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				resp, err := w.b.c.PostForm(w.b.base+"/launch", url.Values{"_csrf": {w.tok}})
				if err != nil {
					if w.instance == 0 && killed.Load() {
						return // the killed instance: its connections are gone
					}
					time.Sleep(10 * time.Millisecond)
					continue
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusSeeOther {
					mu.Lock()
					acked = append(acked, resp.Header.Get("X-Request-Id"))
					mu.Unlock()
					if killed.Load() {
						afterKill[w.instance].Add(1)
					}
				}
			}
		}()
	}
	time.Sleep(time.Second)
	require.NoError(t, procs[0].cmd.Process.Signal(syscall.SIGKILL))
	killed.Store(true)
	wg.Wait()

	assert.Positive(t, afterKill[1].Load(), "the surviving instance kept serving")
	st, err := sqlstore.OpenPostgres(context.Background(), dsn, nil)
	require.NoError(t, err)
	defer st.Close()
	recorded := recordedLaunches(t, st)
	var lost []string
	for _, id := range acked {
		if !recorded[id] {
			lost = append(lost, id)
		}
	}
	sort.Strings(lost)
	t.Logf("acknowledged launches: %d (%d on the survivor after the kill); audit rows: %d; lost: %d", len(acked), afterKill[1].Load(), len(recorded), len(lost))
	assert.NotEmpty(t, acked)
	assert.Empty(t, lost, "every acknowledged launch has its audit row")
}

// recordedLaunches is the request ids of the successful launches in the
// store's audit log.
func recordedLaunches(t *testing.T, st store.Store) map[string]bool {
	t.Helper()
	recorded := map[string]bool{}
	for off := 0; ; off += 500 {
		evs, _, err := st.ListEvents(context.Background(), store.AuditFilter{Kind: store.KindLaunch, Outcome: "ok", Offset: off, Limit: 500})
		require.NoError(t, err)
		for _, e := range evs {
			recorded[e.RequestID] = true
		}
		if len(evs) < 500 {
			return recorded
		}
	}
}

// A platform slower than the launch's patience is known by every
// instance: once a launch on A waited on it past its patience, a launch
// on B goes in line at once and its person gets the waiting page (its own
// address) instead of a blank tab, then the editor.
func TestSlowPlatformKnownByEveryInstance(t *testing.T) {
	sim := sharedPlatform(t, nil)
	a, b := instancePair(t, testOptions{platform: sim, patience: 500 * time.Millisecond})
	for _, e := range []string{"ada@example.com", "bob@example.com"} {
		a.addAccount(t, e, false)
	}
	ada, bob := a.browser(t), b.browser(t)
	require.Equal(t, http.StatusSeeOther, ada.login("ada@example.com", testPassword).status)
	require.Equal(t, http.StatusSeeOther, bob.login("bob@example.com", testPassword).status)
	// Linked first: each later launch is one platform call.
	require.Equal(t, http.StatusSeeOther, ada.launch().status)
	require.Equal(t, http.StatusSeeOther, bob.launch().status)

	sim.Server.SetLatency("issue_token", time.Second) // past the launch's patience, within platform.timeout
	// The first launch to meet the slow platform, on A, runs in its
	// request: cut off at the patience, its person gets the waiting page.
	started := time.Now()
	first := ada.startLaunch(t)
	assert.Less(t, time.Since(started), 900*time.Millisecond, "the page at the patience (500 ms), not when the platform answers (1 s)")
	require.Eventually(t, func() bool { return b.budget.Stats().Slow }, 5*time.Second, 20*time.Millisecond, "B learns the platform is slow")

	// On B a launch goes in line at once and its person gets the page.
	second := bob.startLaunch(t)
	for _, w := range []struct {
		c        *browser
		location string
	}{{ada, first}, {bob, second}} {
		require.Eventually(t, func() bool {
			landed := w.c.get(w.location)
			return strings.HasPrefix(landed.header.Get("Location"), sim.URL)
		}, 10*time.Second, 200*time.Millisecond, "then the editor")
	}
}

// startLaunch posts "Open video editor" and requires the waiting page's
// own address as its answer, which it returns.
func (c *browser) startLaunch(t *testing.T) string {
	t.Helper()
	req, _ := http.NewRequest("POST", c.base+"/launch", strings.NewReader(url.Values{"_csrf": {c.csrf("/")}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	answer := c.doOnce(req)
	require.Equal(t, http.StatusSeeOther, answer.status, answer.body)
	loc := answer.header.Get("Location")
	require.True(t, strings.HasPrefix(loc, "/launch/wait/"), "the waiting page: %s", loc)
	return loc
}
