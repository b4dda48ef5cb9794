package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/handlers"
	"github.com/ssobridge/ssobridge/internal/pgtest"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/ssobridge/ssobridge/wayin/portal"
)

// answer is one request of the outage test's traffic.
type answer struct {
	instance   int
	kind       string // launch, sign-in, arrival, console
	start, end time.Time
	status     int // -1: no answer
	retryAfter string
	requestID  string
	email      string // an arrival's new user
}

// traffic is what the workers saw.
type traffic struct {
	mu      sync.Mutex
	answers []answer
}

func (tr *traffic) add(a answer) {
	tr.mu.Lock()
	tr.answers = append(tr.answers, a)
	tr.mu.Unlock()
}

func (tr *traffic) all() []answer {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]answer(nil), tr.answers...)
}

// send does one request and records its answer; it returns the body too.
// a names the request (instance, kind, email).
func (tr *traffic) send(c *http.Client, a answer, req *http.Request) (answer, []byte) {
	a.start, a.status = time.Now(), -1
	resp, err := c.Do(req)
	var body []byte
	if err == nil {
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		a.status, a.retryAfter, a.requestID = resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("X-Request-Id")
	}
	a.end = time.Now()
	tr.add(a)
	return a, body
}

// window is a stretch of the test during which the database is away.
type window struct {
	name       string
	from, to   time.Time // the fault in force
	back       time.Time // the database answers again
	errorLines [2]int    // ERROR lines each instance logged for it
}

// TestDatabaseOutages runs two instances on a PostgreSQL server of the
// test's own under steady traffic (launches, sign-ins, portal arrivals of
// new users, the console) while the server is frozen, stopped, killed and
// has its backends terminated. Every request is answered within 5 s
// (within 1 s while the server is stopped or dead), a failure is the 503
// page with Retry-After and never a 500, launches work again within 1 s of
// the server's return without a restart, each instance logs at most a
// handful of ERROR lines per outage, and nothing acknowledged is lost: no
// launch without its audit row, no arrival without its account, no second
// platform user for an email, no session ended.
func TestDatabaseOutages(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server of its own and stops it several times")
	}
	pg := pgtest.StartThrowaway(t)
	sim := sharedPlatform(t, nil)
	o := testOptions{postgres: pg.DSN, platform: sim, yaml: portalYAML + "regulation:\n  max_retries: 0\n  max_retries_per_ip: 0\n"}
	apps := []*testApp{startTestApp(t, o), startTestApp(t, o)}
	apps[0].addAccount(t, "admin@example.com", true)
	launchers := outageLaunchers(t, apps)
	tr := &traffic{}
	stop := outageTraffic(t, apps, launchers, tr)
	time.Sleep(500 * time.Millisecond) // traffic before any fault
	windows := outageFaults(pg, apps)
	stop()

	answers := tr.all()
	checkOutageAnswers(t, answers, windows)
	if t.Failed() {
		for i, a := range apps {
			for _, line := range strings.Split(a.logs.String(), "\n") {
				if strings.Contains(line, "level=ERROR") {
					t.Logf("instance %d: %s", i, line)
				}
			}
		}
	}
	checkNothingLost(t, pg.DSN, sim, answers)
	for _, l := range launchers {
		assert.Equal(t, http.StatusOK, l.b.get("/").status, "still signed in")
	}
}

// outageLauncher is a signed-in user who launches again and again.
type outageLauncher struct {
	b        *browser
	tok      string
	instance int
}

// outageLaunchers signs four users in, two on each instance, each launched
// once (linked) before the faults; two more accounts sign in during them.
func outageLaunchers(t *testing.T, apps []*testApp) []outageLauncher {
	var launchers []outageLauncher
	for i := range 4 {
		email := fmt.Sprintf("l%d@example.com", i)
		apps[0].addAccount(t, email, false)
		br := apps[i%2].browser(t)
		require.Equal(t, http.StatusSeeOther, br.login(email, testPassword).status)
		l := outageLauncher{b: br, tok: br.csrf("/"), instance: i % 2}
		require.Equal(t, http.StatusSeeOther, l.b.post("/launch", url.Values{"_csrf": {l.tok}}).status, "linked before the faults")
		launchers = append(launchers, l)
	}
	for i := range 2 {
		apps[0].addAccount(t, fmt.Sprintf("s%d@example.com", i), false)
	}
	return launchers
}

// outageTraffic keeps launches, sign-ins, portal arrivals of new users and
// the console going on both instances, each answer recorded in tr, until
// the returned stop (which waits for the workers).
func outageTraffic(t *testing.T, apps []*testApp, launchers []outageLauncher, tr *traffic) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var arrivals atomic.Int64
	consoles := []*browser{apps[0].browser(t), apps[1].browser(t)}
	for _, c := range consoles {
		require.Equal(t, http.StatusSeeOther, c.login("admin@example.com", testPassword).status)
	}
	// Each worker is a person: after a failure they wait a moment before
	// trying again (a tenth of the page's Retry-After, to keep the load up).
	run := func(f func() int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if f() == http.StatusServiceUnavailable {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}
	for _, l := range launchers {
		run(func() int {
			req, _ := http.NewRequest("POST", l.b.base+"/launch", strings.NewReader(url.Values{"_csrf": {l.tok}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			a, _ := tr.send(l.b.c, answer{instance: l.instance, kind: "launch"}, req)
			return a.status
		})
	}
	for i := range 2 {
		run(func() int { // a sign-in from a new browser each time
			br := apps[i].browser(t)
			req, _ := http.NewRequest("GET", br.base+"/login", nil)
			a, body := tr.send(br.c, answer{instance: i, kind: "sign-in"}, req)
			tok := handlers.FormToken(body)
			if a.status != http.StatusOK || tok == "" {
				return a.status
			}
			form := url.Values{"_csrf": {tok}, "email": {fmt.Sprintf("s%d@example.com", i)}, "password": {testPassword}}
			req, _ = http.NewRequest("POST", br.base+"/login", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			a, _ = tr.send(br.c, answer{instance: i, kind: "sign-in"}, req)
			return a.status
		})
		run(func() int { // a new pupil arriving from the portal
			br := apps[i].browser(t)
			email := fmt.Sprintf("new%d@example.com", arrivals.Add(1))
			tok, err := portal.SignHS256([]byte(e2ePortalSecret), e2ePortalIssuer, e2ePortalAud, portal.Claims{Email: email, GivenName: "New", FamilyName: "Pupil"}, time.Now())
			if err != nil {
				return 0
			}
			req, _ := http.NewRequest("GET", br.base+"/sso/jwt?jwt="+tok, nil)
			a, _ := tr.send(br.c, answer{instance: i, kind: "arrival", email: email}, req)
			return a.status
		})
		run(func() int {
			req, _ := http.NewRequest("GET", consoles[i].base+"/admin/accounts", nil)
			a, _ := tr.send(consoles[i].c, answer{instance: i, kind: "console"}, req)
			return a.status
		})
	}

	return func() {
		cancel()
		wg.Wait()
	}
}

// errorLines counts each instance's ERROR lines so far.
func errorLines(apps []*testApp) [2]int {
	return [2]int{strings.Count(apps[0].logs.String(), "level=ERROR"), strings.Count(apps[1].logs.String(), "level=ERROR")}
}

// outageFaults freezes, stops, kills the server and terminates its
// backends, one after the other, with traffic running. Each fault's window
// is from when it is in force to when the database is being brought back;
// back is when it answers again.
func outageFaults(pg *pgtest.Throwaway, apps []*testApp) []*window {
	var windows []*window
	fault := func(name string, in func(), hold time.Duration, out func()) {
		before := errorLines(apps)
		in()
		w := &window{name: name, from: time.Now()}
		time.Sleep(hold) // the outage's length: traffic runs meanwhile
		w.to = time.Now()
		out()
		w.back = time.Now()
		time.Sleep(1500 * time.Millisecond) // traffic after the return
		after := errorLines(apps)
		w.errorLines = [2]int{after[0] - before[0], after[1] - before[1]}
		windows = append(windows, w)
	}
	fault("frozen (SIGSTOP)", pg.Freeze, 6*time.Second, pg.Thaw)
	fault("stopped (pg_ctl stop -m fast)", pg.Stop, 2*time.Second, pg.Start)
	fault("killed (SIGKILL)", pg.Kill, time.Second, pg.Start)
	fault("backends terminated", func() { pg.TerminateBackends(context.Background()) }, 0, func() {})
	return windows
}

// checkOutageAnswers: every request answered within 5 s (1 s while the
// server is stopped or dead), success or the 503 page with Retry-After,
// never a 500; launches again within 1 s of each return; few ERROR lines.
func checkOutageAnswers(t *testing.T, answers []answer, windows []*window) {
	byStatus := map[int]int{}
	for _, a := range answers {
		byStatus[a.status]++
		d := a.end.Sub(a.start)
		assert.LessOrEqual(t, d, 5*time.Second, "%s on instance %d at %s took %s", a.kind, a.instance, a.start.Format("15:04:05.000"), d)
		switch a.status {
		case http.StatusOK, http.StatusSeeOther:
		case http.StatusServiceUnavailable:
			assert.NotEmpty(t, a.retryAfter, "a 503 says when to try again (%s)", a.kind)
		default:
			assert.Failf(t, "an answer that is neither success nor 503", "%s on instance %d: %d", a.kind, a.instance, a.status)
		}
	}
	t.Logf("%d requests: %v", len(answers), byStatus)
	for _, w := range windows {
		var in, failed int
		var slowest time.Duration
		var slowestKind string
		for _, a := range answers {
			if a.start.Before(w.from) || !a.start.Before(w.to) {
				continue
			}
			in++
			if a.status != http.StatusOK && a.status != http.StatusSeeOther {
				failed++
			}
			if d := a.end.Sub(a.start); d > slowest {
				slowest, slowestKind = d, a.kind
			}
		}
		// Launches again after the return, on each instance.
		var relaunch [2]time.Duration
		for i := range 2 {
			relaunch[i] = -1
			for _, a := range answers {
				if a.instance == i && a.kind == "launch" && a.status == http.StatusSeeOther && a.end.After(w.back) {
					relaunch[i] = a.end.Sub(w.back)
					break
				}
			}
		}
		t.Logf("%s for %s: %d requests began meanwhile, %d failed, slowest %s (%s); launches again after %s / %s; ERROR lines %v",
			w.name, w.to.Sub(w.from).Round(time.Millisecond), in, failed, slowest.Round(time.Millisecond), slowestKind,
			relaunch[0].Round(time.Millisecond), relaunch[1].Round(time.Millisecond), w.errorLines)
		if strings.HasPrefix(w.name, "stopped") || strings.HasPrefix(w.name, "killed") {
			assert.LessOrEqual(t, slowest, time.Second, "%s: answered within 1 s", w.name)
		}
		for i := range 2 {
			assert.True(t, relaunch[i] >= 0 && relaunch[i] <= time.Second, "%s: instance %d launches again within 1 s (%s)", w.name, i, relaunch[i])
			assert.LessOrEqual(t, w.errorLines[i], 3, "%s: ERROR lines on instance %d", w.name, i)
		}
	}
	assert.Zero(t, byStatus[http.StatusInternalServerError], "never the 500 page")
}

// checkNothingLost: every acknowledged launch has its audit row, every
// arrival its account and one platform user.
func checkNothingLost(t *testing.T, dsn string, sim *platformsim.Running, answers []answer) {
	st, err := sqlstore.OpenPostgres(context.Background(), dsn, nil)
	require.NoError(t, err)
	defer st.Close()
	recorded := recordedLaunches(t, st)
	var lost, arrived []string
	for _, a := range answers {
		if a.kind == "launch" && a.status == http.StatusSeeOther && !recorded[a.requestID] {
			lost = append(lost, a.requestID)
		}
		if a.kind == "arrival" && a.status == http.StatusSeeOther {
			arrived = append(arrived, a.email)
			if _, err := st.AccountByEmail(context.Background(), a.email); err != nil {
				lost = append(lost, a.email+": "+err.Error())
			}
			if n := len(sim.Users(a.email)); n != 1 {
				lost = append(lost, fmt.Sprintf("%s: %d platform users", a.email, n))
			}
		}
	}
	sort.Strings(lost)
	assert.Empty(t, lost, "every acknowledged launch has its audit row, every arrival its account and one platform user")
	assert.NotEmpty(t, arrived)
}
