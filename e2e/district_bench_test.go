package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/demo/samplelms"
	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/internal/pgtest"
	"github.com/ssobridge/ssobridge/wayin/portal"
)

// A school district's first morning of term, as docs/capacity.md reports
// it: two instances on one PostgreSQL database behind a proxy, the
// platform emulator limiting the one credential to 20 calls a second, three
// LMS courses whose rosters are read at their teachers' launches (NRPS),
// and 1,000 pupils arriving within 2 minutes (half of them within the first
// 30 s, at the bell), 600 by LMS launch and 400 by the portal's handoff, a third of them new to the platform; one pupil in
// five reloads the waiting page at once; one instance is replaced midway
// (taken out of the proxy, stopped, a new one started). Every pupil must
// land in their own editor (the emulator's editor names them) without an
// error page, with no duplicate platform user and under 1% of the calls
// answered 429; the waiting page's first estimate must be within ±25% of
// the wait that followed for at least 90% of the pupils who saw it (on the
// steady morning; the replaced one reports it).
//
//	SSOBRIDGE_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	  go test ./e2e -run '^$' -bench DistrictMorning -benchtime 1x -timeout 20m
//
// Two mornings: "replaced" as above, and "steady", the same without the
// replacement, which shows the estimate as the line alone makes it (an
// instance that comes or goes changes every instance's share of the
// platform's pace after the estimates were given).
func BenchmarkDistrictMorning(b *testing.B) {
	for _, replace := range []bool{false, true} {
		name := map[bool]string{false: "steady", true: "replaced"}[replace]
		b.Run(name, func(b *testing.B) {
			for range b.N {
				r := districtMorning(b, replace)
				r.report(b, !replace)
			}
		})
	}
}

// The district's figures.
const (
	districtCourses      = 3
	districtPerCourse    = 200
	districtPortalPupils = 400
	districtPupils       = districtCourses*districtPerCourse + districtPortalPupils
	districtSpread       = 2 * time.Minute
	districtRate         = 20
	districtRestartAt    = time.Minute // into the arrivals
)

// pupil is one of the morning's pupils.
type pupil struct {
	name  string // as the platform's editor shows it: "Signed in as <name>"
	email string
	lms   *ltiplatformtest.Platform // nil: arrives by the portal's handoff
	hint  string                    // the LMS's login hint
	isNew bool                      // no platform user before the morning
}

// pupilOutcome is what one pupil saw.
type pupilOutcome struct {
	landed   bool
	problem  string        // what they got instead of their editor
	wait     time.Duration // arrival to the editor
	estimate time.Duration // the first waiting page's estimate (0: no page)
	estLeft  time.Duration // the wait that followed that page
	pages    int           // waiting pages shown
	who      string        // how they came, for the record
	arrival  time.Duration // since the first arrival
}

// districtResult is the morning's figures.
type districtResult struct {
	outcomes       []pupilOutcome
	last           time.Duration // first arrival to the last landing
	calls, limited int           // platform calls, and 429s among them
	duplicates     int
	restarted      time.Duration
	byEndpoint     map[string]int
	limitedAt      map[int]int // second of the morning -> 429s in it
}

// makeDistrict makes the district: its courses, each an LMS of its own
// (public is where its launches go) with a teacher and a roster of
// pupils, and the portal's pupils; it returns every pupil in the order
// they arrive, the teachers, and the lti section that registers the
// LMSs.
func makeDistrict(b *testing.B, sim *platformsim.Running, public string) (order, teachers []pupil, lmsYAML string) {
	// The courses, their rosters and the pupils.
	var pupils []pupil
	lmsYAML = "lti:\n  platforms:\n"
	for c := range districtCourses {
		plat := ltiplatformtest.Start(b, public)
		plat.Course = fmt.Sprintf("Media studies %d", c+1)
		teacher := ltiplatformtest.User{Sub: fmt.Sprintf("c%d-teacher", c), Email: fmt.Sprintf("teacher%d@school.example", c),
			GivenName: "Teacher", FamilyName: strconv.Itoa(c), Roles: []string{ltiplatformtest.RoleInstructor}}
		plat.AddUser("teacher", teacher)
		teachers = append(teachers, pupil{name: teacher.GivenName + " " + teacher.FamilyName, email: teacher.Email, lms: plat, hint: "teacher"})
		roster := []samplelms.Member{{UserID: teacher.Sub, Email: teacher.Email, GivenName: teacher.GivenName, FamilyName: teacher.FamilyName, Roles: teacher.Roles}}
		for i := range districtPerCourse {
			u := ltiplatformtest.User{Sub: fmt.Sprintf("c%d-pupil-%03d", c, i), Email: fmt.Sprintf("c%d.pupil%03d@school.example", c, i),
				GivenName: "Pupil", FamilyName: fmt.Sprintf("C%d-%03d", c, i), Roles: []string{ltiplatformtest.RoleLearner}}
			hint := fmt.Sprintf("p%03d", i)
			plat.AddUser(hint, u)
			roster = append(roster, samplelms.Member{UserID: u.Sub, Email: u.Email, GivenName: u.GivenName, FamilyName: u.FamilyName, Roles: u.Roles})
			pupils = append(pupils, pupil{name: u.GivenName + " " + u.FamilyName, email: u.Email, lms: plat, hint: hint})
		}
		plat.OfferRoster(roster, 50)
		lmsYAML += fmt.Sprintf("    - name: School %d\n      issuer: %q\n      client_id: %q\n      deployment_ids: [%q]\n      auth_url: %q\n      jwks_url: %q\n      token_url: %q\n      email_domains: [school.example]\n",
			c+1, plat.Issuer, plat.ClientID, plat.DeploymentID, plat.AuthURL(), plat.JWKSURL(), plat.TokenURL())
	}
	for i := range districtPortalPupils {
		pupils = append(pupils, pupil{name: fmt.Sprintf("Portal P%03d", i), email: fmt.Sprintf("portal%03d@example.com", i)})
	}
	// Interleave the ways in (an LMS pupil, then a portal one, …) and make
	// every third pupil new to the platform; the others have a platform
	// user already (made by the partner's earlier tools), unlinked.
	order = make([]pupil, 0, len(pupils))
	lms, web := pupils[:districtCourses*districtPerCourse], pupils[districtCourses*districtPerCourse:]
	for len(lms)+len(web) > 0 {
		for range 3 {
			if len(lms) > 0 {
				order, lms = append(order, lms[0]), lms[1:]
			}
		}
		for range 2 {
			if len(web) > 0 {
				order, web = append(order, web[0]), web[1:]
			}
		}
	}
	for i := range order {
		order[i].isNew = i%3 == 0
		if !order[i].isNew {
			first, last, _ := strings.Cut(order[i].name, " ")
			_, err := sim.Server.AddUser(first, last, order[i].email)
			require.NoError(b, err)
		}
	}
	return order, teachers, lmsYAML
}

func districtMorning(b *testing.B, replace bool) districtResult {
	b.Helper()
	sim := sharedPlatform(b, func(c *platformsim.Config) { c.RateLimit, c.RateBurst = districtRate, districtRate })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	public := "http://" + ln.Addr().String()
	proxy := &roundRobin{}
	go func() { _ = http.Serve(ln, proxy) }()
	b.Cleanup(func() { ln.Close() })

	order, teachers, lmsYAML := makeDistrict(b, sim, public)

	o := testOptions{platform: sim, realPacing: true, postgres: pgtest.DSN(b),
		platformYAML: fmt.Sprintf("  rate_limit: %d\n  max_wait: 30m\n", districtRate),
		yaml:         "server:\n  public_url: " + public + "\n" + portalYAML + lmsYAML}
	a, bb := startTestApp(b, o), startTestApp(b, o)
	proxy.set(a.srv.URL, bb.srv.URL)
	require.Eventually(b, func() bool { return a.budget.Stats().Live == 2 && bb.budget.Stats().Live == 2 }, 10*time.Second, 20*time.Millisecond)
	sim.Server.ResetCalls()

	// The teachers open the editor first: their launches read the rosters.
	for _, t := range teachers {
		out := onePupil(public, sim, t, false)
		require.True(b, out.landed, "%s: %s", t.name, out.problem)
	}

	b.ResetTimer()
	start := time.Now()
	limitedAt := map[int]int{} // second of the morning -> 429s in it
	sampling, allDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampling)
		prev := 0
		for sec := 0; ; sec++ {
			select {
			case <-time.After(time.Until(start.Add(time.Duration(sec+1) * time.Second))):
			case <-allDone:
				return
			}
			n := sim.Server.RateLimited()
			if n > prev {
				limitedAt[sec] = n - prev
			}
			prev = n
		}
	}()
	outcomes := make([]pupilOutcome, len(order))
	var lastLanding atomic.Int64
	var wg sync.WaitGroup
	for i, p := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Until(start.Add(arrivalAt(i, len(order)))))
			outcomes[i] = onePupil(public, sim, p, i%5 == 0)
			outcomes[i].who = fmt.Sprintf("%s new=%v reload=%v", p.email, p.isNew, i%5 == 0)
			outcomes[i].arrival = time.Since(start) - outcomes[i].wait
			if outcomes[i].landed {
				for now := int64(time.Since(start)); ; {
					old := lastLanding.Load()
					if now <= old || lastLanding.CompareAndSwap(old, now) {
						break
					}
				}
			}
		}()
	}
	// One instance replaced midway (a rolling upgrade): out of the proxy,
	// stopped as on SIGTERM (its waiting pupils' launches run to their end
	// while their refreshes reach the other instances), a new one in its
	// place.
	var restarted time.Duration
	stopped := make(chan struct{})
	if replace {
		time.Sleep(time.Until(start.Add(districtRestartAt)))
		proxy.set(a.srv.URL)
		go func() { bb.drain(); close(stopped) }()
		fresh := startTestApp(b, o)
		proxy.set(a.srv.URL, fresh.srv.URL)
		restarted = time.Since(start)
	} else {
		close(stopped)
	}
	wg.Wait()
	<-stopped
	b.StopTimer()
	close(allDone)
	<-sampling

	return tallyMorning(sim, order, districtResult{outcomes: outcomes, last: time.Duration(lastLanding.Load()), restarted: restarted, limitedAt: limitedAt})
}

// tallyMorning adds the platform's counts to r: its calls by endpoint
// (the browsers' exchanges are not the bridge's), the 429s, and the
// pupils with more than one platform user.
func tallyMorning(sim *platformsim.Running, order []pupil, r districtResult) districtResult {
	r.byEndpoint = sim.Server.CallCounts()
	for endpoint, n := range r.byEndpoint {
		if endpoint != "exchange" { // the browsers' own, not the bridge's
			r.calls += n
		}
	}
	r.limited = sim.Server.RateLimited()
	for _, p := range order {
		if len(sim.Server.Users(p.email)) > 1 {
			r.duplicates++
		}
	}
	return r
}

// arrivalAt is when the ith of n pupils arrives: most at the first bell,
// the rest later, within districtSpread (the ith at spread·(i/n)²: half
// within the first 30 s, three quarters within 68 s).
func arrivalAt(i, n int) time.Duration {
	f := float64(i) / float64(n)
	return time.Duration(f * f * float64(districtSpread))
}

// onePupil is one pupil's morning through the proxy at public: the LMS's
// launch or the portal's handoff, the waiting page reloaded as it asks
// (at once, too, when reload), then their editor on the platform.
func onePupil(public string, sim *platformsim.Running, p pupil, reload bool) pupilOutcome {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 2 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	arrived := time.Now()
	var resp *http.Response
	var err error
	if p.lms != nil {
		resp, err = lmsArrival(c, public, p)
	} else {
		tok, serr := portal.SignHS256([]byte(e2ePortalSecret), e2ePortalIssuer, e2ePortalAud,
			portal.Claims{Email: p.email, GivenName: "Portal", FamilyName: strings.TrimPrefix(p.name, "Portal ")}, time.Now())
		if serr != nil {
			return pupilOutcome{problem: serr.Error()}
		}
		resp, err = c.PostForm(public+"/sso/jwt", url.Values{"jwt": {tok}})
	}
	var out pupilOutcome
	var firstPage time.Time
	for hop := 0; hop < 500; hop++ {
		if err != nil {
			out.problem = "no answer: " + err.Error()
			return out
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		switch {
		case resp.StatusCode == http.StatusSeeOther && strings.HasPrefix(loc, sim.URL):
			out.wait = time.Since(arrived)
			if !firstPage.IsZero() {
				out.estLeft = time.Since(firstPage)
			}
			out.landed, out.problem = landsAs(c, loc, p.name)
			return out
		case resp.StatusCode == http.StatusSeeOther && strings.HasPrefix(loc, "/"):
			resp, err = c.Get(public + loc)
		case resp.StatusCode == http.StatusOK && waitingRefresh(page{status: resp.StatusCode, body: string(body)}) != "":
			out.pages++
			next := waitingRefresh(page{status: resp.StatusCode, body: string(body)})
			if firstPage.IsZero() {
				firstPage, out.estimate = time.Now(), waitEstimate(string(body))
			}
			if reload && out.pages <= 2 {
				resp, err = c.Get(public + next) // the pupil reloads at once
				continue
			}
			secs, _, _ := strings.Cut(metaRefresh(string(body)), ";")
			s, _ := strconv.Atoi(secs)
			time.Sleep(time.Duration(max(1, s)) * time.Second) // as the page asks
			resp, err = c.Get(public + next)
		default:
			out.problem = fmt.Sprintf("%d %s %s", resp.StatusCode, errorClassOf(string(body)), loc)
			return out
		}
	}
	out.problem = "500 hops"
	return out
}

// lmsArrival is a pupil's click on the course's link: the LMS's login
// posted to the bridge, the LMS's authorization page, the id_token posted
// back (cross-site, as the LMS's pages post them).
func lmsArrival(c *http.Client, public string, p pupil) (*http.Response, error) {
	post := func(path string, form url.Values) (*http.Response, error) {
		req, _ := http.NewRequest("POST", public+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.Header.Set("Origin", p.lms.Server.URL)
		return c.Do(req)
	}
	resp, err := post("/lti/login", p.lms.LoginForm(p.hint))
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("/lti/login answered %d", resp.StatusCode)
	}
	form, err := p.lms.AnswerForm(resp.Header.Get("Location"))
	if err != nil {
		return nil, err
	}
	return post("/lti/launch", form)
}

// landsAs follows the exchange URL to the platform's editor and checks it
// is name's.
func landsAs(c *http.Client, exchange, name string) (bool, string) {
	resp, err := c.Get(exchange)
	if err != nil {
		return false, "exchange: " + err.Error()
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return false, fmt.Sprintf("exchange answered %d", resp.StatusCode)
	}
	editor, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
	if err != nil {
		return false, err.Error()
	}
	resp, err = c.Get(editor.String())
	if err != nil {
		return false, "editor: " + err.Error()
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(body, []byte("Signed in as "+name)) {
		return false, "someone else's editor"
	}
	return true, ""
}

// waitEstimate is the waiting page's estimate: its progress bar runs from
// the time waited (value) to the time waited plus the estimate (max).
func waitEstimate(body string) time.Duration {
	m := progressRe.FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	total, _ := strconv.Atoi(m[1])
	waited, _ := strconv.Atoi(m[2])
	return time.Duration(total-waited) * time.Second
}

var progressRe = regexp.MustCompile(`<progress id="wait-progress"[^>]* max="(\d+)" value="(\d+)"`)

// errorClassOf is an error page's class ("" on other pages).
func errorClassOf(body string) string {
	m := errorClassRe.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

var errorClassRe = regexp.MustCompile(`id="error-page"[^>]*data-class="([^"]+)"`)

// roundRobin is the proxy in front of the instances: each request to the
// next instance in turn, and to the next again if one cannot be reached
// (an instance being replaced).
type roundRobin struct {
	mu       sync.Mutex
	backends []*url.URL
	next     int
}

func (p *roundRobin) set(backends ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backends = p.backends[:0]
	for _, s := range backends {
		u, _ := url.Parse(s)
		p.backends = append(p.backends, u)
	}
}

func (p *roundRobin) pick() []*url.URL {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	n := len(p.backends)
	out := make([]*url.URL, 0, n)
	for i := range n {
		out = append(out, p.backends[(p.next+i)%n])
	}
	return out
}

func (p *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body) // kept, to send again to another instance
	for _, target := range p.pick() {
		failed := false
		rp := &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(target)
				pr.Out.Host = pr.In.Host // the bridge's public name
				pr.Out.Body = io.NopCloser(bytes.NewReader(body))
				pr.Out.ContentLength = int64(len(body))
			},
			ErrorHandler: func(http.ResponseWriter, *http.Request, error) { failed = true },
		}
		rp.ServeHTTP(w, r) // a failed try writes nothing: ErrorHandler only notes it
		if !failed {
			return
		}
	}
	http.Error(w, "no instance answered", http.StatusBadGateway)
}

// report logs the morning's figures and fails the benchmark when a pupil
// did not land as they should have.
func (r districtResult) report(b *testing.B, checkEstimate bool) {
	var waits []time.Duration
	problems := map[string]int{}
	saw, within := 0, 0
	landed, pages := 0, 0
	var errs []float64
	for _, o := range r.outcomes {
		pages += o.pages
		if !o.landed {
			problems[o.problem]++
			continue
		}
		landed++
		waits = append(waits, o.wait)
		if o.estimate > 0 {
			saw++
			e := (o.estimate - o.estLeft).Seconds() / max(1, o.estLeft.Seconds())
			errs = append(errs, e)
			if e >= -0.25 && e <= 0.25 {
				within++
			}
		}
	}
	slices.Sort(waits)
	slices.Sort(errs)
	pct := func(d []time.Duration, p float64) time.Duration {
		if len(d) == 0 {
			return 0
		}
		return d[min(len(d)-1, int(p*float64(len(d))))]
	}
	errAt := func(p float64) float64 {
		if len(errs) == 0 {
			return 0
		}
		return errs[min(len(errs)-1, int(p*float64(len(errs))))]
	}
	share := float64(within) / float64(max(1, saw))
	limitedPct := 100 * float64(r.limited) / float64(max(1, r.calls))
	b.Logf("district morning: %d of %d pupils landed in their own editor; last %.1f s after the first arrival; wait p50 %.1f s, p95 %.1f s, max %.1f s; "+
		"%d saw the waiting page (%d pages), first estimate within ±25%% for %d (%.0f%%), error p5 %+.0f%% p50 %+.0f%% p95 %+.0f%%; "+
		"%d platform calls (%.2f a pupil), %d answered 429 (%.2f%%); %d duplicates; instance replaced at %.0f s (0: none); not landed: %v",
		landed, len(r.outcomes), r.last.Seconds(), pct(waits, 0.5).Seconds(), pct(waits, 0.95).Seconds(), pct(waits, 1).Seconds(),
		saw, pages, within, 100*share, 100*errAt(0.05), 100*errAt(0.5), 100*errAt(0.95),
		r.calls, float64(r.calls)/float64(len(r.outcomes)), r.limited, limitedPct, r.duplicates, r.restarted.Seconds(), problems)
	worst := slices.Clone(r.outcomes)
	slices.SortFunc(worst, func(x, y pupilOutcome) int {
		return int(((y.estLeft - y.estimate).Abs() - (x.estLeft - x.estimate).Abs()) / time.Millisecond)
	})
	for _, o := range worst[:min(5, len(worst))] {
		b.Logf("estimate %v, waited %v more (in all %v, arrived at %.1f s, %d pages): %s", o.estimate, o.estLeft.Round(100*time.Millisecond), o.wait.Round(100*time.Millisecond), o.arrival.Seconds(), o.pages, o.who)
	}
	if path := os.Getenv("SSOBRIDGE_DISTRICT_DUMP"); path != "" {
		var dump strings.Builder
		for _, o := range r.outcomes {
			fmt.Fprintf(&dump, "%.1f\t%.1f\t%.1f\t%d\t%s\n", o.arrival.Seconds(), o.estimate.Seconds(), o.estLeft.Seconds(), o.pages, o.who)
		}
		_ = os.WriteFile(path, []byte(dump.String()), 0o600)
	}
	b.Logf("platform calls by endpoint: %v; 429s by second of the morning: %v", r.byEndpoint, r.limitedAt)
	for _, o := range r.outcomes {
		if !o.landed {
			b.Logf("not landed: %s (arrived at %.1f s): %s", o.who, o.arrival.Seconds(), o.problem)
		}
	}
	b.ReportMetric(r.last.Seconds(), "last_s")
	b.ReportMetric(pct(waits, 0.5).Seconds(), "p50_s")
	b.ReportMetric(pct(waits, 0.95).Seconds(), "p95_s")
	b.ReportMetric(100*share, "est_ok_%")
	b.ReportMetric(limitedPct, "429_%")
	b.ReportMetric(float64(r.calls)/float64(len(r.outcomes)), "calls/pupil")
	if landed != len(r.outcomes) {
		b.Errorf("%d pupils did not land: %v", len(r.outcomes)-landed, problems)
	}
	if r.duplicates > 0 {
		b.Errorf("%d duplicate platform users", r.duplicates)
	}
	if limitedPct >= 1 {
		b.Errorf("%.2f%% of the calls answered 429", limitedPct)
	}
	if checkEstimate && share < 0.9 {
		b.Errorf("the first estimate was within ±25%% for %.0f%% of the pupils who waited", 100*share)
	}
}
