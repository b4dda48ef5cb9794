package handlers

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/accounts/regulation"
	"github.com/ssobridge/ssobridge/handlers/console"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/launch/pacing"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/ssobridge/ssobridge/wayin/lti"
	"github.com/ssobridge/ssobridge/wayin/oidc"
	"github.com/ssobridge/ssobridge/wayin/samlsso"
	"github.com/stretchr/testify/require"
)

// testStore is the real SQLite store, in the test's temporary folder and on
// the fixture's clock, with what the tests need to arrange and read it.
type testStore struct {
	*sqlstore.SQLite
	t       testing.TB
	path    string
	now     func() time.Time
	touches atomic.Int32 // session rows written by TouchSession
}

// TouchSession is the store's, counted.
func (s *testStore) TouchSession(ctx context.Context, id string, at, seenBefore time.Time) (bool, error) {
	wrote, err := s.SQLite.TouchSession(ctx, id, at, seenBefore)
	if wrote {
		s.touches.Add(1)
	}
	return wrote, err
}

func newTestStore(t testing.TB, now func() time.Time) *testStore {
	path := filepath.Join(t.TempDir(), "ssobridge.db")
	s, err := sqlstore.OpenSQLite(t.Context(), path, now)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return &testStore{SQLite: s, t: t, path: path, now: now}
}

// down closes the store: every call fails from now on, as when the
// database is lost.
func (s *testStore) down() { require.NoError(s.t, s.Close()) }

// link links the account to the platform user; a non-zero lastLaunch
// records a successful launch at that time.
func (s *testStore) link(accountID int64, platformUserID string, lastLaunch time.Time) {
	s.t.Helper()
	require.NoError(s.t, s.SaveLink(s.t.Context(), accountID, platformUserID))
	if !lastLaunch.IsZero() {
		require.NoError(s.t, s.RecordLaunch(s.t.Context(), store.Event{At: lastLaunch, AccountID: accountID, Outcome: "ok"}))
	}
}

// ban bans email from signing in until then, as failed sign-ins would.
func (s *testStore) ban(email string, until time.Time) {
	s.t.Helper()
	now := s.now()
	r := store.RegulationConfig{MaxRetries: 1, FindTime: time.Minute, BanTime: until.Sub(now)}
	id, _, err := s.AdmitSignIn(s.t.Context(), store.SignIn{Email: email, IP: "192.0.2.1", At: now}, r)
	require.NoError(s.t, err)
	_, err = s.FailSignIn(s.t.Context(), id, r, now)
	require.NoError(s.t, err)
	require.True(s.t, s.banned(email))
}

// banned reports whether a ban on email is in force.
func (s *testStore) banned(email string) bool {
	s.t.Helper()
	bans, err := s.ListBans(s.t.Context(), s.now())
	require.NoError(s.t, err)
	return slices.ContainsFunc(bans, func(b store.Ban) bool { return b.Kind == store.BanEmail && mailaddr.Equal(b.Value, email) })
}

// eventsOf returns the recorded events of one kind, oldest first.
func (s *testStore) eventsOf(kind string) []store.Event {
	s.t.Helper()
	evs, _, err := s.ListEvents(s.t.Context(), store.AuditFilter{Kind: kind, Limit: 500})
	require.NoError(s.t, err)
	slices.Reverse(evs)
	return evs
}

// fakePasswords "hashes" by prefixing; it counts verifications, dummy ones
// apart.
type fakePasswords struct {
	mu              sync.Mutex
	verified, dummy int
	busy            bool // every call answers accounts.ErrBusy
}

func (p *fakePasswords) Hash(_ context.Context, pw string) (string, error) { return "hash:" + pw, nil }

func (p *fakePasswords) Verify(_ context.Context, pw, encoded string) error {
	p.mu.Lock()
	p.verified++
	busy := p.busy
	p.mu.Unlock()
	if busy {
		return passhash.ErrBusy
	}
	if encoded != "hash:"+pw {
		return passhash.ErrPasswordMismatch
	}
	return nil
}

func (p *fakePasswords) VerifyDummy(context.Context, string) error {
	p.mu.Lock()
	p.dummy++
	busy := p.busy
	p.mu.Unlock()
	if busy {
		return passhash.ErrBusy
	}
	return passhash.ErrPasswordMismatch
}

func (p *fakePasswords) counts() (verified, dummy int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.verified, p.dummy
}

// fakeRegulator refuses what the test bans and records what it is told.
type fakeRegulator struct {
	mu        sync.Mutex
	banned    map[string]time.Time // by email or IP: Admit refuses until then
	banOnFail bool                 // Fail answers "a ban started"
	admitted  []string             // "email ip"
	failed    int
	succeeded int
}

func (r *fakeRegulator) Admit(_ context.Context, email, ip string) (regulation.Attempt, time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.banned[email]; ok {
		return regulation.Attempt{}, t, nil
	}
	if t, ok := r.banned[ip]; ok {
		return regulation.Attempt{}, t, nil
	}
	r.admitted = append(r.admitted, email+" "+ip)
	return regulation.Attempt{}, time.Time{}, nil
}

func (r *fakeRegulator) Fail(context.Context, regulation.Attempt) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed++
	return r.banOnFail, nil
}

func (r *fakeRegulator) Succeed(context.Context, regulation.Attempt) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.succeeded++
	return nil
}

// launchCall is one call of the fake launcher.
type launchCall struct {
	account             store.Account
	returnTo, requestID string
	hasDeadline         bool
	place               time.Time // its place in the line (pacing.Priority.Since)
}

// fakeLauncher answers with do (default: an exchange URL) and records the
// calls.
type fakeLauncher struct {
	mu    sync.Mutex
	calls []launchCall
	do    func(acct store.Account, returnTo string) (launch.Result, error)
	// untilCancelled: a launch runs until its context ends.
	untilCancelled bool
}

func (l *fakeLauncher) Launch(ctx context.Context, acct store.Account, returnTo, requestID string) (launch.Result, error) {
	_, hasDeadline := ctx.Deadline()
	p, _ := pacing.PriorityOf(ctx)
	l.mu.Lock()
	l.calls = append(l.calls, launchCall{account: acct, returnTo: returnTo, requestID: requestID, hasDeadline: hasDeadline, place: p.Since})
	do, block := l.do, l.untilCancelled
	l.mu.Unlock()
	if block {
		<-ctx.Done()
		return launch.Result{}, ctx.Err()
	}
	if do != nil {
		return do(acct, returnTo)
	}
	return launch.Result{ExchangeURL: "https://platform.example/api/5/login-token/login/TOKEN-" + acct.Email, Path: launch.PathReturning}, nil
}

func (l *fakeLauncher) made() []launchCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// fakePlatform answers the console's calls with what the test set.
type fakePlatform struct {
	mu      sync.Mutex
	conn    console.Connection
	report  console.CheckReport
	checks  int
	users   console.UserPage
	listErr error
	listed  []string // "query page size"
}

func (p *fakePlatform) Connection() console.Connection { return p.conn }

func (p *fakePlatform) Check(context.Context) console.CheckReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.checks++
	return p.report
}

func (p *fakePlatform) ListUsers(_ context.Context, query string, page, size int) (console.UserPage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listed = append(p.listed, strings.Join([]string{query, strconv.Itoa(page), strconv.Itoa(size)}, " "))
	return p.users, p.listErr
}

func (p *fakePlatform) set(f func(p *fakePlatform)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

// fakeIdP starts flows with a fresh state each and finishes them as the
// test set: an error, or the identity.
type fakeIdP struct {
	mu        sync.Mutex
	n         int
	startErr  error
	finishErr error
	id        oidc.Identity
}

func (i *fakeIdP) Start(_ context.Context, redirectURL, next string) (string, oidc.Flow, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.startErr != nil {
		return "", oidc.Flow{}, i.startErr
	}
	i.n++
	state := fmt.Sprintf("state-%d", i.n)
	return "https://idp.example/auth?state=" + state, oidc.Flow{State: state, Next: next, RedirectURL: redirectURL, Expires: time.Now().Add(oidc.FlowTTL)}, nil
}

func (i *fakeIdP) Finish(_ context.Context, f oidc.Flow, q url.Values) (oidc.Identity, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if q.Get("state") != f.State {
		return oidc.Identity{}, oidc.ErrBadState
	}
	if i.finishErr != nil {
		return oidc.Identity{}, i.finishErr
	}
	return i.id, nil
}

func (i *fakeIdP) Discover(context.Context) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.startErr
}

// idpAnswer starts a flow with the client and answers it with the given
// extra query.
func idpAnswer(c *client, extra string) *response {
	r := c.get("/auth/oidc")
	u, _ := url.Parse(r.header.Get("Location"))
	return c.get("/auth/oidc/callback?state=" + u.Query().Get("state") + extra)
}

// fakeSAML is the SAML IdP of the handler tests: Start and Finish answer
// as set (the real service provider is tested in samlsso and e2e).
type fakeSAML struct {
	mu        sync.Mutex
	n         int
	startErr  error
	finishErr error
	id        samlsso.Identity
}

func (s *fakeSAML) Start(_ context.Context, next string) (string, samlsso.Flow, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.startErr != nil {
		return "", samlsso.Flow{}, s.startErr
	}
	s.n++
	f := samlsso.Flow{RequestID: fmt.Sprintf("id-%d", s.n), Relay: fmt.Sprintf("relay-%d", s.n), Next: next, Expires: time.Now().Add(samlsso.FlowTTL)}
	return "https://idp.example/sso?RelayState=" + f.Relay, f, nil
}

func (s *fakeSAML) Finish(_ context.Context, flows []samlsso.Flow, form url.Values) (samlsso.Identity, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finishErr != nil {
		return samlsso.Identity{}, s.finishErr
	}
	for _, f := range flows {
		if f.Relay == form.Get("RelayState") {
			id := s.id
			id.Flow = f
			return id, nil
		}
	}
	return samlsso.Identity{}, samlsso.ErrBadState
}

func (s *fakeSAML) Metadata() ([]byte, error) { return []byte("<EntityDescriptor/>"), nil }
func (s *fakeSAML) Ready(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startErr
}

// samlAnswer starts a SAML sign-in with c and posts the IdP's answer to
// the ACS as a cross-site form.
func samlAnswer(c *client) *response {
	r := c.get("/auth/saml")
	u, _ := url.Parse(r.header.Get("Location"))
	return c.post("/saml/acs", url.Values{"SAMLResponse": {"PFJlc3BvbnNlLz4="}, "RelayState": {u.Query().Get("RelayState")}})
}

// fakeLTI answers logins and launches with what the test set (the real
// lti.Tool against a platform is in lti_test.go).
type fakeLTI struct {
	loginErr, launchErr error
	id                  lti.Identity
	course              string // CourseURL's answer
}

func (l *fakeLTI) Login(context.Context, string, url.Values) (string, lti.Flow, error) {
	if l.loginErr != nil {
		return "", lti.Flow{}, l.loginErr
	}
	return "https://lms.example/auth", lti.Flow{State: "s", Nonce: "n", Expires: time.Now().Add(lti.FlowTTL)}, nil
}

func (l *fakeLTI) Launch(context.Context, string, []lti.Flow, url.Values) (lti.Identity, error) {
	return l.id, l.launchErr
}

func (l *fakeLTI) Platforms() []lti.Platform   { return []lti.Platform{l.id.Platform} }
func (l *fakeLTI) Ready() error                { return nil }
func (l *fakeLTI) CourseURL(url.Values) string { return l.course }

// withLTI serves f's app with LTI answering as l does.
func (f *fixture) withLTI(l *fakeLTI) {
	if l.id.Platform.Name == "" {
		l.id.Platform = lti.Platform{Name: "Springfield LMS", Issuer: "https://lms.example", AuthURL: "https://lms.example/auth"}
	}
	f.reconfigure(func(d *Deps) {
		withWay(d, &lti.Way{LMS: l, KeySet: []byte(`{"keys":[]}`)})
	})
}
