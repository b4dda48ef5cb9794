package e2e

import (
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/demo/samplelms"
	"github.com/ssobridge/ssobridge/handlers"
	"github.com/ssobridge/ssobridge/internal/syncbuf"
	"github.com/ssobridge/ssobridge/launch/pacing"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin"
)

// testApp is the whole bridge, wired by app.New as serve wires it, on
// httptest; the fields are the app's exported parts.
type testApp struct {
	store  store.Store
	hasher *passhash.Hasher
	client *apiclient.Client
	sim    *platformsim.Running // the embedded emulator
	srv    *httptest.Server
	data   string // the data folder (store.dsn's)
	dsn    string // the store's file
	logs   *syncbuf.Buffer
	waits  *waitLog // the waits the Partner API client asked for
	budget *pacing.Budget
	yaml   string             // its configuration (for the commands run on its store)
	stop   func()             // closes the server and the app (as the test's end does), e.g. to restart on the same data
	drain  func()             // stops as serve does on SIGTERM: requests under way answered, waiting launches run to their end
	lms    *samplelms.Running // the demo's sample LMS (with sampleLMS)
}

// waitLog records the back-off waits of the Partner API client, which
// the tests switch off (no real waiting) but still check.
type waitLog struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waitLog) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

// take returns the waits so far and forgets them.
func (w *waitLog) take() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.d
	w.d = nil
	return d
}

type testOptions struct {
	// modules are the ways in registered as modules (nil: app.Modules()).
	modules []wayin.Module
	// patience is how long a launch is waited for before the waiting
	// page (0: the line's default, 2 s).
	patience  time.Duration
	yaml      string // extra YAML appended to the base config
	simConfig func(*platformsim.Config)
	client    func(*apiclient.Options)
	env       []string
	now       func() time.Time // the app's clock (sessions, regulation, store)
	dsn       string           // the store's file; default: one of the test's own
	// postgres, when set, is the store's PostgreSQL URL (session keys are
	// the shared test keys, as instances on one database must have).
	postgres string
	// platform, when set, is an emulator the app calls instead of starting
	// its own (instances sharing one platform).
	platform *platformsim.Running
	// listener, when set, is where the app serves (its URL known before
	// the app is built, e.g. for an IdP's redirect URI).
	listener net.Listener
	// idpHealth is how often the IdP's health is checked (default 15 s).
	idpHealth time.Duration
	// platformYAML is added to the platform section (e.g. its shapes).
	platformYAML string
	// realPacing: the platform budget waits for real (a rate-limit test),
	// where other tests record its waits and go on.
	realPacing bool
	tls        bool // serve https (httptest's certificate)
	// ltiClient reads the LMSs' key sets; ltiRetry is how often an
	// unreadable one is read again (default: the app's).
	ltiClient *http.Client
	ltiRetry  time.Duration
	// sampleLMS serves the demo's sample LMS (off unless a test launches
	// from it: two RSA keys a start).
	sampleLMS bool
}

// Session keys every instance of a test shares.
var (
	sharedHashKey  = strings.Repeat("ab", 32)
	sharedBlockKey = strings.Repeat("cd", 32)
)

const testPassword = "correct horse battery"

func startTestApp(t testing.TB, o testOptions) *testApp {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	dsn := filepath.Join(dir, "ssobridge.db")
	if o.dsn != "" {
		dsn, dir = o.dsn, filepath.Dir(o.dsn)
	}
	store := fmt.Sprintf("store:\n  dsn: %s\n", dsn)
	if o.postgres != "" {
		// With postgres the data directory is ./data: the embedded demo
		// would write its portal key into the source tree.
		require.NotNil(t, o.platform, "a bridge on PostgreSQL needs a platform of its own (sharedPlatform)")
		store = fmt.Sprintf("store:\n  driver: postgres\n  dsn: %q\nsession:\n  hash_key: %s\n  block_key: %s\n", o.postgres, sharedHashKey, sharedBlockKey)
	}
	platform := "platform:\n  timeout: 2s\n" + o.platformYAML
	if o.platform != nil {
		cred := o.platform.Credentials()[0]
		platform += fmt.Sprintf("  base_url: %s\n  api_key: %s\n  api_secret: %s\n", o.platform.URL, cred.Key, cred.Secret)
	}
	yml := store + `password:
  argon2_memory_kib: 64
  argon2_iterations: 1
log:
  level: debug
` + platform + o.yaml
	if !strings.Contains(o.yaml, "outbound:") {
		// The tests' IdPs and LMSs are on this machine, over plain http.
		yml += "outbound:\n  allow_local: \"true\"\n"
	}
	if o.modules == nil {
		o.modules = app.Modules()
	}
	cfg, err := config.Parse([]byte(yml), o.env, wayin.Sections(o.modules)...)
	require.NoError(t, err)
	logs, waits := &syncbuf.Buffer{}, &waitLog{}
	clientOpts := func(co *apiclient.Options) {
		// No real waiting in tests: backoff waits are recorded and return at once.
		co.Sleep = waits.sleep
		if o.client != nil {
			o.client(co)
		}
	}
	// The platform budget's pauses (a 429's backoff) are recorded as the
	// client's waits were, and not waited for.
	pacingOpts := func(pc *pacing.Config) {
		pc.OnPause = func(d time.Duration) { _ = waits.sleep(context.Background(), d) }
		pc.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	}
	if o.realPacing {
		pacingOpts = nil
	}
	a, err := app.New(context.Background(), cfg, app.Options{Modules: o.modules, LogOutput: logs, Emulator: o.simConfig, Client: clientOpts, Pacing: pacingOpts,
		Now: o.now, IdPHealthInterval: o.idpHealth, HTTPClient: o.ltiClient, RetryEvery: o.ltiRetry, SkipDemos: skipDemos(o), LinePatience: o.patience})
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(a.Handler())
	if o.listener != nil {
		srv.Listener.Close()
		srv.Listener = o.listener
	}
	if o.tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	stop := sync.OnceFunc(func() {
		srv.Close()
		a.Close()
	})
	// drain stops as serve does: no new request, those under way answered,
	// the waiting users' launches run to their end (within 65 s), then
	// closed.
	drain := sync.OnceFunc(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 65*time.Second)
		defer cancel()
		_ = srv.Config.Shutdown(ctx)
		a.Drain(ctx)
		stop()
	})
	t.Cleanup(stop)
	sim := a.Emulator()
	if o.platform != nil {
		sim = o.platform
	}
	return &testApp{store: a.Store(), hasher: a.Hasher(), client: a.Client(), sim: sim, srv: srv, data: dir, dsn: dsn, logs: logs, waits: waits, budget: a.Budget(), yaml: yml, stop: stop, drain: drain, lms: sampleLMS(a)}
}

func (ta *testApp) addAccount(t testing.TB, email string, admin bool) store.Account {
	t.Helper()
	return ta.addNamedAccount(t, email, "Ada", "Lovelace", admin)
}

// addNamedAccount adds an account with these names and testPassword.
func (ta *testApp) addNamedAccount(t testing.TB, email, first, last string, admin bool) store.Account {
	t.Helper()
	hash, err := ta.hasher.Hash(context.Background(), testPassword)
	require.NoError(t, err)
	acct, err := ta.store.CreateAccount(context.Background(), store.NewAccount{Email: email, FirstName: first, LastName: last, PasswordHash: hash, Admin: admin})
	require.NoError(t, err)
	return acct
}

// browser is a plain HTTP client with a cookie jar that does not follow
// redirects, so each answer can be checked.
type browser struct {
	t    testing.TB
	base string
	c    *http.Client
	// lang is the browser's Accept-Language ("": none sent).
	lang string
}

func (ta *testApp) browser(t testing.TB) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: ta.srv.URL, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	header http.Header
	body   string
}

// do sends req and returns the answer; a waiting page (the line for the
// platform's pace) is followed as a browser follows its Refresh, though
// sooner (within linePoll), until the launch's own answer.
func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	p := b.doOnce(req)
	if loc := p.header.Get("Location"); p.status == http.StatusSeeOther && strings.HasPrefix(loc, "/arrive?") {
		// An arrival by a cross-site post goes on at /arrive, where the
		// session cookie is sent: a browser follows it at once.
		r, _ := http.NewRequest("GET", b.base+loc, nil)
		p = b.doOnce(r)
	}
	if loc := p.header.Get("Location"); p.status == http.StatusSeeOther && strings.HasPrefix(loc, "/launch/wait/") {
		// A launch that must wait answers with its waiting page's own
		// address, which a browser loads at once.
		r, _ := http.NewRequest("GET", b.base+loc, nil)
		p = b.doOnce(r)
	}
	for deadline := time.Now().Add(3 * time.Minute); ; {
		next := waitingRefresh(p)
		if next == "" || time.Now().After(deadline) {
			return p
		}
		time.Sleep(linePoll) // the page asks for a reload later; a browser would wait
		r, _ := http.NewRequest("GET", b.base+next, nil)
		p = b.doOnce(r)
	}
}

// linePoll is how soon the test browser reloads a waiting page.
const linePoll = 100 * time.Millisecond

func (b *browser) doOnce(req *http.Request) page {
	b.t.Helper()
	if b.lang != "" {
		req.Header.Set("Accept-Language", b.lang)
	}
	resp, err := b.c.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

// waitingRefresh is the path a waiting page reloads ("" if p is not one).
func waitingRefresh(p page) string {
	if p.status != http.StatusOK {
		return ""
	}
	_, next, ok := strings.Cut(metaRefresh(p.body), ";url=")
	if !ok || !strings.HasPrefix(next, "/launch/wait/") {
		return ""
	}
	return next
}

// metaRefresh is a page's refresh for browsers without JavaScript (the
// waiting page's is inside <noscript>: with JavaScript its script checks
// the line in place), "" if it has none.
func metaRefresh(body string) string {
	m := metaRefreshRe.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

var metaRefreshRe = regexp.MustCompile(`<meta http-equiv="refresh" content="([^"]+)"`)

func (b *browser) get(path string) page {
	req, _ := http.NewRequest("GET", b.base+path, nil)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values, header ...string) page {
	req, _ := http.NewRequest("POST", b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

// postAtOnce sends n forms to path at once, with a copy of the browser's
// cookies and a connection each, and counts the answers by status (-1: no
// answer). form(i) is the i-th form. It asserts nothing, so it runs in
// benchmarks and from goroutines alike.
func (b *browser) postAtOnce(path string, n int, form func(i int) url.Values) map[int]int {
	u, _ := url.Parse(b.base)
	jar, _ := cookiejar.New(nil)
	jar.SetCookies(u, b.c.Jar.Cookies(u))
	client := &http.Client{Jar: jar, Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: n},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, err := client.PostForm(b.base+path, form(i))
			status := -1
			if err == nil {
				resp.Body.Close()
				status = resp.StatusCode
			}
			mu.Lock()
			counts[status]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return counts
}

var csrfRE = regexp.MustCompile(`name="_csrf" value="([^"]*)"`)

// csrf fetches path and returns the form's CSRF token.
func (b *browser) csrf(path string) string {
	b.t.Helper()
	p := b.get(path)
	tok := handlers.FormToken([]byte(p.body))
	require.NotEmpty(b.t, tok, "no _csrf on %s (%d)", path, p.status)
	return tok
}

func (b *browser) login(email, password string) page {
	tok := b.csrf("/login")
	return b.post("/login", url.Values{"_csrf": {tok}, "email": {email}, "password": {password}})
}

func (b *browser) launch(extra ...string) page {
	form := url.Values{"_csrf": {b.csrf("/")}}
	for i := 0; i+1 < len(extra); i += 2 {
		form.Set(extra[i], extra[i+1])
	}
	return b.post("/launch", form)
}

// calls returns and resets the emulator's per-endpoint call counts.
func (ta *testApp) calls() map[string]int {
	c := ta.sim.CallCounts()
	ta.sim.ResetCalls()
	if c == nil {
		c = map[string]int{}
	}
	return c
}

// platformFault answers every call of an endpoint with status until cleared.
func platformFault(status int) platformsim.Fault { return platformsim.Fault{Status: status} }

// skipDemos leaves the demo's sample LMS out unless the test launches
// from it.
func skipDemos(o testOptions) []string {
	if o.sampleLMS {
		return nil
	}
	return []string{"lti"}
}

// sampleLMS is the demo's sample LMS a's LTI module started (nil: none).
func sampleLMS(a *app.App) *samplelms.Running {
	if d := a.Demo("sample LMS"); d != nil {
		return d.Double.(*samplelms.Running)
	}
	return nil
}
