package e2e

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ssobridge/ssobridge/demo/platformsim"
)

// TestFaultMatrix is one integration test per fault. Each row ends with
// exactly one platform user for the email and a launch that succeeds once
// the fault clears.
func TestFaultMatrix(t *testing.T) {
	rows := faultRows()
	passed := 0
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			runFaultRow(t, r)
			if !t.Failed() {
				passed++
			}
		})
	}
	t.Logf("fault matrix: %d of %d rows passed", passed, len(rows))
}

// faultRow is one row of the fault matrix: a fault, and what a launch
// under it must answer and cost.
type faultRow struct {
	name   string
	opts   testOptions
	setup  func(t *testing.T, ta *testApp, b *browser) // e.g. a first launch
	fault  func(sim *platformsim.Server)
	status int    // of the launch under the fault
	class  string // error page class; "" for success
	calls  map[string]int
	// waits are the back-offs the client asks for (sleeps are switched
	// off, so they are checked, not waited): 429s 1 s, 2 s, 4 s ...
	// (the pauses it puts on the platform budget)
	// ±25%, one 250 ms pause before the retry of a 5xx or network error.
	waits []time.Duration
	// latency is injected into every platform call; the page must come
	// before it passes (the per-call timeout ends the wait).
	latency time.Duration
	clear   func(sim *platformsim.Server)
	// leakCheck: requests were cut off mid-flight, so check that no
	// goroutine of them is left behind.
	leakCheck bool
}

// faultRows are the platform's faults a user can meet.
func faultRows() []faultRow {
	return []faultRow{
		{name: "429 twice then OK",
			fault:  func(s *platformsim.Server) { s.InjectFault("list_users", platformsim.Fault{Status: 429, Times: 2}) },
			status: http.StatusSeeOther, calls: map[string]int{"list_users": 3, "create_user": 1, "issue_token": 1}, waits: backoff(2)},
		{name: "429 always: gives up after 5 retries",
			fault:  func(s *platformsim.Server) { s.InjectFault("list_users", platformsim.Fault{Status: 429}) },
			status: http.StatusServiceUnavailable, class: "platform-unavailable", calls: map[string]int{"list_users": 6}, waits: backoff(5)},
		{name: "5xx once on lookup",
			fault:  func(s *platformsim.Server) { s.InjectFault("list_users", platformsim.Fault{Status: 503, Times: 1}) },
			status: http.StatusSeeOther, calls: map[string]int{"list_users": 2, "create_user": 1, "issue_token": 1}, waits: pause(1)},
		{name: "5xx always",
			fault:  func(s *platformsim.Server) { s.InjectFault("list_users", platformsim.Fault{Status: 500}) },
			status: http.StatusServiceUnavailable, class: "platform-unavailable", calls: map[string]int{"list_users": 2}, waits: pause(1)},
		{name: "ghost create: POST answers 500 after creating",
			fault:  func(s *platformsim.Server) { s.InjectFault("create_user", platformsim.Fault{Ghost: true, Times: 1}) },
			status: http.StatusSeeOther, calls: map[string]int{"list_users": 2, "create_user": 1, "issue_token": 1}},
		{name: "409 race: lookup misses, create conflicts",
			fault: func(s *platformsim.Server) {
				// someone else creates the user between our lookup and create
				s.InjectFault("create_user", platformsim.Fault{Ghost: true, Status: 409, Times: 1})
			},
			status: http.StatusSeeOther, calls: map[string]int{"list_users": 2, "create_user": 1, "issue_token": 1}},
		{name: "connection reset on create",
			fault:  func(s *platformsim.Server) { s.InjectFault("create_user", platformsim.Fault{Reset: true, Times: 1}) },
			status: http.StatusSeeOther, calls: map[string]int{"list_users": 2, "create_user": 2, "issue_token": 1}},
		{name: "connection reset on token, twice",
			fault:  func(s *platformsim.Server) { s.InjectFault("issue_token", platformsim.Fault{Reset: true, Times: 2}) },
			status: http.StatusServiceUnavailable, class: "platform-unavailable", calls: map[string]int{"list_users": 1, "create_user": 1, "issue_token": 2}, waits: pause(1)},
		{name: "platform slower than the timeout", opts: testOptions{env: []string{"SSOBRIDGE_PLATFORM_TIMEOUT=300ms"}},
			latency: 30 * time.Second,
			status:  http.StatusGatewayTimeout, class: "platform-unavailable", calls: map[string]int{"list_users": 2}, waits: pause(1), leakCheck: true},
		{name: "platform clock 10 minutes off",
			fault:  func(s *platformsim.Server) { s.SetClockOffset(10 * time.Minute) },
			status: http.StatusBadGateway, class: "platform-clock-skew", calls: map[string]int{"list_users": 1},
			clear: func(s *platformsim.Server) { s.SetClockOffset(0) }},
		{name: "stale link: token 404",
			setup: func(t *testing.T, ta *testApp, b *browser) {
				require.Equal(t, http.StatusSeeOther, b.launch().status)
				for _, u := range ta.sim.Users("ada@example.com") {
					ta.sim.DeleteUser(u.ID)
				}
			},
			status: http.StatusSeeOther, calls: map[string]int{"issue_token": 2, "list_users": 1, "create_user": 1}},
		{name: "member credential: 403",
			fault:  func(s *platformsim.Server) { s.SetAdmin(s.Credentials()[0].Key, false) },
			status: http.StatusBadGateway, class: "platform-forbidden", calls: map[string]int{"list_users": 1},
			clear: func(s *platformsim.Server) { s.SetAdmin(s.Credentials()[0].Key, true) }},
	}
}

// runFaultRow launches under the row's fault, checks the answer, the calls
// and the waits, then clears the fault and launches again: one platform
// user, whatever happened.
func runFaultRow(t *testing.T, r faultRow) {
	ta := startTestApp(t, r.opts)
	ta.addAccount(t, "ada@example.com", false)
	b := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, b.login("ada@example.com", testPassword).status)
	if r.setup != nil {
		r.setup(t, ta, b)
	}
	tok := b.csrf("/")
	ta.calls()
	if r.fault != nil {
		r.fault(ta.sim.Server)
	}
	ta.sim.SetLatency("", r.latency)
	ta.waits.take()
	leaks := goleak.IgnoreCurrent()
	start := time.Now()
	p := b.post("/launch", url.Values{"_csrf": {tok}})
	took := time.Since(start)
	assert.Equal(t, r.status, p.status)
	if r.class != "" {
		assert.Contains(t, p.body, `data-class="`+r.class+`"`)
	}
	assert.Equal(t, r.calls, withoutExchange(ta.calls()), "platform calls under the fault")
	assertWaits(t, r.waits, ta.waits.take())
	if r.latency > 0 {
		assert.Less(t, took, r.latency, "the page comes without waiting for the platform")
	}

	if r.leakCheck {
		ta.sim.ClearFaults() // lets the slow handlers finish
		b.c.CloseIdleConnections()
		ta.client.CloseIdleConnections()
		goleak.VerifyNone(t, leaks,
			goleak.IgnoreTopFunction("net/http.(*conn).serve"),
			goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
			goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"))
	}

	ta.sim.ClearFaults()
	if r.clear != nil {
		r.clear(ta.sim.Server)
	}
	p = b.launch()
	assert.Equal(t, http.StatusSeeOther, p.status, "a later launch succeeds once the fault clears")
	assert.Len(t, ta.sim.Users("ada@example.com"), 1, "exactly one platform user")
}

// backoff is the client's first n waits after a 429: 1 s, 2 s, 4 s ...
func backoff(n int) []time.Duration {
	w := make([]time.Duration, n)
	for i := range w {
		w[i] = time.Second << i
	}
	return w
}

// pause is n of the 250 ms waits before retrying a 5xx or network error.
func pause(n int) []time.Duration {
	w := make([]time.Duration, n)
	for i := range w {
		w[i] = 250 * time.Millisecond
	}
	return w
}

// assertWaits checks the waits asked for against the nominal ones, each
// within the ±25% jitter.
func assertWaits(t *testing.T, want, got []time.Duration) {
	t.Helper()
	if !assert.Len(t, got, len(want), "waits asked for: %v", got) {
		return
	}
	for i, w := range want {
		assert.InDelta(t, float64(w), float64(got[i]), float64(w)/4, "wait %d: got %s, want %s ±25%%", i+1, got[i], w)
	}
}

func withoutExchange(m map[string]int) map[string]int {
	delete(m, "exchange")
	return m
}

// TestConcurrentFirstLaunches: 200 launches at once for one account create
// exactly one platform user; every launch succeeds or gets the retry page.
func TestConcurrentFirstLaunches(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	ta.addAccount(t, "ada@example.com", false)
	b := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, b.login("ada@example.com", testPassword).status)
	tok := b.csrf("/")
	statuses := b.postAtOnce("/launch", 200, func(int) url.Values { return url.Values{"_csrf": {tok}} })
	assert.Equal(t, 200, statuses[http.StatusSeeOther]+statuses[http.StatusServiceUnavailable], "%v", statuses)
	assert.Len(t, ta.sim.Users("ada@example.com"), 1)
	assert.Equal(t, 1, ta.sim.Calls("create_user"))
	t.Logf("200 concurrent first launches: %v, platform users: %d", statuses, len(ta.sim.Users("ada@example.com")))
}

// TestTwoBridgesOnePlatform: two bridges with separate stores share one
// platform, so only the platform's 409 arbitrates; still one user.
func TestTwoBridgesOnePlatform(t *testing.T) {
	first := startTestApp(t, testOptions{})
	admin := first.sim.Credentials()[0]
	second := startTestApp(t, testOptions{env: []string{"SSOBRIDGE_PLATFORM_BASE_URL=" + first.sim.URL,
		"SSOBRIDGE_PLATFORM_API_KEY=" + admin.Key, "SSOBRIDGE_PLATFORM_API_SECRET=" + admin.Secret}})
	var wg sync.WaitGroup
	results := make([]map[int]int, 2)
	for i, ta := range []*testApp{first, second} {
		ta.addAccount(t, "ada@example.com", false)
		b := ta.browser(t)
		require.Equal(t, http.StatusSeeOther, b.login("ada@example.com", testPassword).status)
		tok := b.csrf("/")
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = b.postAtOnce("/launch", 100, func(int) url.Values { return url.Values{"_csrf": {tok}} })
		}()
	}
	wg.Wait()
	for _, r := range results {
		assert.Equal(t, 100, r[http.StatusSeeOther]+r[http.StatusServiceUnavailable], "%v", r)
	}
	users := first.sim.Users("ada@example.com")
	require.Len(t, users, 1, "exactly one platform user")
	l1, err := first.store.LinkFor(t.Context(), 1)
	require.NoError(t, err)
	l2, err := second.store.LinkFor(t.Context(), 1)
	require.NoError(t, err)
	assert.Equal(t, users[0].ID, l1.PlatformUserID)
	assert.Equal(t, users[0].ID, l2.PlatformUserID, "both bridges link the same user")
	t.Logf("two bridges: %v / %v, platform users: %d", results[0], results[1], len(users))
}
