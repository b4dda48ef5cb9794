package launch_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/internal/pgtest"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/launch/pacing"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

type env struct {
	sim     *platformsim.Server
	store   *sqlstore.SQLite
	client  *apiclient.Client
	svc     *launch.Service
	outcome []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	cred := platformsim.NewCredential(true)
	sim, err := platformsim.New(platformsim.Config{Credentials: []platformsim.Credential{cred}})
	require.NoError(t, err)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	client, err := apiclient.New(apiclient.Options{BaseURL: srv.URL,
		Credentials: apiclient.Credentials{Method: apiclient.AuthHMAC, APIKey: cred.Key, APISecret: cred.Secret},
		Sleep:       func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	require.NoError(t, err)
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	e := &env{sim: sim, store: st, client: client}
	e.svc = launch.New(client, st, launch.Options{OnDone: func(o string, _ launch.Path, _ time.Duration) { e.outcome = append(e.outcome, o) }})
	return e
}

func (e *env) account(t *testing.T, email string) store.Account {
	a, err := e.store.CreateAccount(context.Background(), store.NewAccount{Email: email, FirstName: "Ada", LastName: "Lovelace", PasswordHash: "h"})
	require.NoError(t, err)
	return a
}

func (e *env) calls() map[string]int {
	c := e.sim.CallCounts()
	e.sim.ResetCalls()
	return c
}

func TestLaunchCallsAtTheFloor(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acct := e.account(t, "ada@example.com")

	res, err := e.svc.Launch(ctx, acct, "", "r1")
	require.NoError(t, err)
	assert.Equal(t, launch.PathCreated, res.Path)
	assert.Equal(t, 3, res.PlatformCalls)
	assert.Equal(t, map[string]int{"list_users": 1, "create_user": 1, "issue_token": 1}, e.calls(), "new user: lookup, create, token")
	assert.True(t, strings.HasPrefix(res.ExchangeURL, e.client.BaseURL()+"/api/5/login-token/login/"))

	res, err = e.svc.Launch(ctx, acct, "/editor/projects", "r2")
	require.NoError(t, err)
	assert.Equal(t, launch.PathReturning, res.Path)
	assert.Equal(t, 1, res.PlatformCalls)
	assert.Equal(t, map[string]int{"issue_token": 1}, e.calls(), "returning user: token only")

	// An account whose platform user exists but is not linked yet.
	_, err = e.sim.AddUser("Bob", "B", "BOB@example.com")
	require.NoError(t, err)
	bob := e.account(t, "bob@example.com")
	res, err = e.svc.Launch(ctx, bob, "", "r3")
	require.NoError(t, err)
	assert.Equal(t, launch.PathFound, res.Path)
	assert.Equal(t, map[string]int{"list_users": 1, "issue_token": 1}, e.calls(), "existing user: lookup, token")
	assert.Len(t, e.sim.Users("bob@example.com"), 1)

	evs, total, err := e.store.ListEvents(ctx, store.AuditFilter{Kind: store.KindLaunch})
	require.NoError(t, err)
	assert.Equal(t, 3, total, "every launch audited")
	assert.Equal(t, 2, evs[0].PlatformCalls)
	assert.Equal(t, "ok", evs[0].Outcome)
	assert.Equal(t, "r3", evs[0].RequestID)
	assert.Equal(t, []string{"ok", "ok", "ok"}, e.outcome)
}

func TestLaunchStaleLinkIsDroppedAndRelinked(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acct := e.account(t, "ada@example.com")
	first, err := e.svc.Launch(ctx, acct, "", "")
	require.NoError(t, err)
	require.True(t, e.sim.DeleteUser(first.PlatformUserID))
	e.calls()

	res, err := e.svc.Launch(ctx, acct, "", "")
	require.NoError(t, err)
	assert.Equal(t, launch.PathRelinked, res.Path)
	assert.NotEqual(t, first.PlatformUserID, res.PlatformUserID)
	assert.Equal(t, map[string]int{"issue_token": 2, "list_users": 1, "create_user": 1}, e.calls())
	l, err := e.store.LinkFor(ctx, acct.ID)
	require.NoError(t, err)
	assert.Equal(t, res.PlatformUserID, l.PlatformUserID)
	assert.Len(t, e.sim.Users("ada@example.com"), 1)
}

// A platform that hands an id out again (the demo's emulator before it
// kept its users) leaves an account linked to another person's platform
// user. The store holds one account per platform user, so the person's
// own launch takes the link back, and the other account's next launch
// finds its own platform user by its own address: nobody opens anyone
// else's editor.
func TestLaunchTakesBackALinkAnotherAccountHolds(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	admin := e.account(t, "admin@example.com")
	grace := e.account(t, "grace@example.com")
	graceUser, err := e.sim.AddUser("Grace", "Hopper", "grace@example.com")
	require.NoError(t, err)
	require.NoError(t, e.store.SaveLink(ctx, admin.ID, graceUser.ID), "the admin's link points at Grace's platform user")

	res, err := e.svc.Launch(ctx, grace, "", "")
	require.NoError(t, err)
	assert.Equal(t, graceUser.ID, res.PlatformUserID, "Grace lands as herself")
	l, err := e.store.LinkFor(ctx, grace.ID)
	require.NoError(t, err)
	assert.Equal(t, graceUser.ID, l.PlatformUserID)
	_, err = e.store.LinkFor(ctx, admin.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "the wrong link is dropped")
	evs, _, err := e.store.ListEvents(ctx, store.AuditFilter{AccountID: admin.ID, Kind: store.KindProvision})
	require.NoError(t, err)
	require.Len(t, evs, 1, "the dropped link is audited on the account that held it")
	assert.Contains(t, evs[0].Detail, graceUser.ID)

	res, err = e.svc.Launch(ctx, admin, "", "")
	require.NoError(t, err)
	assert.Equal(t, launch.PathCreated, res.Path)
	assert.NotEqual(t, graceUser.ID, res.PlatformUserID, "the admin no longer opens Grace's editor")
	require.Len(t, e.sim.Users("admin@example.com"), 1)
	assert.Equal(t, e.sim.Users("admin@example.com")[0].ID, res.PlatformUserID)
}

func TestLaunchFailuresLeaveNothingHalfDone(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acct := e.account(t, "ada@example.com")
	e.sim.InjectFault(platformsim.EndpointIssueToken, platformsim.Fault{Status: 503, Times: 2})
	_, err := e.svc.Launch(ctx, acct, "", "")
	require.ErrorIs(t, err, apiclient.ErrServer)
	assert.Equal(t, launch.OutcomeUnavailable, launch.Classify(err))
	l, err := e.store.LinkFor(ctx, acct.ID)
	require.NoError(t, err, "the user was created and linked before the token failed")

	res, err := e.svc.Launch(ctx, acct, "", "")
	require.NoError(t, err, "the next attempt succeeds once the fault clears")
	assert.Equal(t, launch.PathReturning, res.Path)
	assert.Equal(t, l.PlatformUserID, res.PlatformUserID)
	assert.Len(t, e.sim.Users("ada@example.com"), 1)
	evs, _, _ := e.store.ListEvents(ctx, store.AuditFilter{Outcome: launch.OutcomeUnavailable})
	require.Len(t, evs, 1)
	assert.Contains(t, evs[0].Detail, "503")
}

func TestLaunchRefusesBadInputWithoutCalls(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acct := e.account(t, "ada@example.com")
	_, err := e.svc.Launch(ctx, acct, "https://evil.example/", "")
	require.ErrorIs(t, err, launch.ErrInvalidReturnTo)
	acct.Disabled = true
	_, err = e.svc.Launch(ctx, acct, "", "")
	require.ErrorIs(t, err, launch.ErrAccountDisabled)
	assert.Empty(t, e.calls())
	_, err = e.store.LinkFor(ctx, acct.ID)
	assert.ErrorIs(t, err, store.ErrNotFound)
}

func TestValidateReturnTo(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"", true},
		{"/", true},
		{"/editor/projects?id=7&tab=a%2Fb", true},
		{"/ü/video", true},
		{"//evil.example/", false},
		{"https://evil.example/", false},
		{"javascript:alert(1)", false},
		{"editor", false},
		{"/\\evil.example", false},
		{"/a\\b", false},
		{"/a\nb", false},
		{"/a\tb", false},
		{"/a\x7fb", false},
		{"/a\u0085b", false},
		{"/" + strings.Repeat("a", launch.MaxReturnTo-1), true},
		{"/" + strings.Repeat("a", launch.MaxReturnTo), false},
		{"/\xff", false},
		// checked decoded and resolved too
		{"/%2F%2Fevil.example", false},
		{"/..//evil", false},
		{"/%09/evil", false},
		{"/x#//evil", false},
		{"/%2e%2e//evil", false},
		{"/%5Cevil.example", false},
	}
	for _, tt := range tests {
		err := launch.ValidateReturnTo(tt.in)
		assert.Equal(t, tt.ok, err == nil, "%q: %v", tt.in, err)
	}
}

// FuzzValidateReturnTo: whatever passes is a path a browser resolves on the
// platform's own origin.
func FuzzValidateReturnTo(f *testing.F) {
	for _, s := range []string{"/", "/editor?x=1", "//x", "/\\x", "http://x", "/%2F%2Fx", "/\u2028", " /x", "/..//evil", "/%09/evil", "/x#//evil"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if launch.ValidateReturnTo(s) != nil {
			return
		}
		if s == "" {
			return
		}
		assert.True(t, s[0] == '/' && (len(s) == 1 || s[1] != '/'))
		assert.NotContains(t, s, "\\")
		assert.LessOrEqual(t, len(s), launch.MaxReturnTo)
		for _, r := range s {
			assert.False(t, r < 0x20 || r == 0x7f, "control character in %q", s)
		}
		ref, err := url.Parse(s)
		if err != nil {
			return // not a URL a browser could follow differently either
		}
		base, _ := url.Parse("https://platform.example/app/")
		resolved := base.ResolveReference(ref)
		assert.Equal(t, "platform.example", resolved.Host, "stays on the platform's origin: %q", s)
		assert.False(t, strings.HasPrefix(resolved.Path, "//"), "%q resolves to %q", s, resolved.Path)
		assert.Empty(t, ref.Fragment, "%q", s)
	})
}

func TestClassify(t *testing.T) {
	ae := func(status int) error { return &apiclient.APIError{Status: status} }
	tests := []struct {
		err  error
		want string
	}{
		{nil, launch.OutcomeOK},
		{ae(403), launch.OutcomeForbidden},
		{ae(401), launch.OutcomeUnauthorized},
		{&apiclient.ClockSkewError{Offset: time.Hour, Err: &apiclient.APIError{Status: 401}}, launch.OutcomeClockSkew},
		{ae(429), launch.OutcomeRateLimited},
		{ae(500), launch.OutcomeUnavailable},
		{ae(409), launch.OutcomeUnavailable},
		{&apiclient.TransportError{Timeout: true, Err: context.DeadlineExceeded}, launch.OutcomeUnavailable},
		{&apiclient.TransportError{Err: errors.New("refused")}, launch.OutcomeUnavailable},
		{ae(404), launch.OutcomeNotFound},
		{ae(400), launch.OutcomeBadRequest},
		{fmt.Errorf("wrapped: %w", launch.ErrInvalidReturnTo), launch.OutcomeInvalidInput},
		{launch.ErrAccountDisabled, launch.OutcomeDisabled},
		{launch.ErrSessionEnded, launch.OutcomeSessionEnded},
		{errors.New("disk on fire"), launch.OutcomeInternalError},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, launch.Classify(tt.err), "%v", tt.err)
	}
}

func TestExplain(t *testing.T) {
	wrapped := func(err error) error { return fmt.Errorf("ensure user: %w", err) }
	tests := []struct {
		name string
		err  error
		want launch.Failure
	}{
		{"429 with Retry-After", wrapped(&apiclient.APIError{Endpoint: "list_users", Status: 429, RetryAfter: 7 * time.Second}),
			launch.Failure{Outcome: launch.OutcomeRateLimited, Endpoint: "list_users", RetryAfter: 7 * time.Second}},
		{"clock skew", &apiclient.ClockSkewError{Offset: -10 * time.Minute, Err: &apiclient.APIError{Endpoint: "issue_token", Status: 401}},
			launch.Failure{Outcome: launch.OutcomeClockSkew, Endpoint: "issue_token", ClockSkew: -10 * time.Minute}},
		{"platform call timed out", wrapped(&apiclient.TransportError{Endpoint: "list_users", Timeout: true, Err: context.DeadlineExceeded}),
			launch.Failure{Outcome: launch.OutcomeUnavailable, Timeout: true}},
		{"the launch's own bound is not a platform timeout", context.DeadlineExceeded,
			launch.Failure{Outcome: launch.OutcomeUnavailable}},
		{"not the platform's", launch.ErrAccountDisabled, launch.Failure{Outcome: launch.OutcomeDisabled}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, launch.Explain(tt.err))
		})
	}
}

// Provision is a launch's check-then-create without the token: a new
// account's user is created and linked (2 calls), an existing one found
// and linked (1), a linked account left alone (0), a disabled one
// refused; each but the last-linked is audited as provisioning, and the
// launch after it is one call.
func TestProvision(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ada := e.account(t, "ada@example.com")
	p, err := e.svc.Provision(ctx, ada)
	require.NoError(t, err)
	assert.Equal(t, launch.PathCreated, p.Path)
	assert.Equal(t, 2, p.PlatformCalls)
	assert.Equal(t, map[string]int{"list_users": 1, "create_user": 1}, e.calls(), "no token")

	p, err = e.svc.Provision(ctx, ada)
	require.NoError(t, err)
	assert.Equal(t, launch.PathReturning, p.Path, "linked already: left alone")
	assert.Zero(t, p.PlatformCalls)
	assert.Empty(t, e.calls())

	_, err = e.sim.AddUser("Bob", "B", "bob@example.com")
	require.NoError(t, err)
	bob := e.account(t, "bob@example.com")
	p, err = e.svc.Provision(ctx, bob)
	require.NoError(t, err)
	assert.Equal(t, launch.PathFound, p.Path)
	assert.Len(t, e.sim.Users("bob@example.com"), 1, "found, not created again")
	e.calls()

	res, err := e.svc.Launch(ctx, bob, "", "r1")
	require.NoError(t, err)
	assert.Equal(t, launch.PathReturning, res.Path)
	assert.Equal(t, map[string]int{"issue_token": 1}, e.calls(), "the launch after provisioning: one call")

	eve := e.account(t, "eve@example.com")
	require.NoError(t, e.store.SetDisabled(ctx, eve.ID, true))
	eve.Disabled = true
	_, err = e.svc.Provision(ctx, eve)
	assert.ErrorIs(t, err, launch.ErrAccountDisabled)
	assert.Empty(t, e.calls())

	evs, total, err := e.store.ListEvents(ctx, store.AuditFilter{Kind: store.KindProvision})
	require.NoError(t, err)
	assert.Equal(t, 3, total, "created, found, refused: audited; already linked: not")
	assert.Equal(t, launch.OutcomeDisabled, evs[0].Outcome)
}

// A launch that has waited (in the line, or for a slow platform) reads its
// account again before asking for the login token: disabled, or its
// sessions ended meanwhile (on whichever instance), it gets no token.
func TestLaunchThatWaitedChecksItsAccountBeforeTheToken(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(e *env, a store.Account) error
		want   error
	}{
		{"disabled meanwhile", func(e *env, a store.Account) error { return e.store.SetDisabled(context.Background(), a.ID, true) }, launch.ErrAccountDisabled},
		{"sessions ended meanwhile", func(e *env, a store.Account) error { return e.store.EndSessions(context.Background(), a.ID) }, launch.ErrSessionEnded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			acct := e.account(t, "ada@example.com")
			var tick time.Time
			slow := launch.New(e.client, e.store, launch.Options{Now: func() time.Time { tick = tick.Add(2 * time.Second); return tick }})
			require.NoError(t, tc.change(e, acct)) // acct, as the launch holds it, is from before
			_, err := slow.Launch(ctx, acct, "", "")
			require.ErrorIs(t, err, tc.want)
			assert.Zero(t, e.calls()["issue_token"], "no login token asked for")

			// A quick launch of the same stale account is not read again:
			// the request's own session check stands for it.
			fresh, err := e.store.AccountByID(ctx, acct.ID)
			require.NoError(t, err)
			if !fresh.Disabled {
				_, err = e.svc.Launch(ctx, fresh, "", "")
				require.NoError(t, err)
			}
		})
	}
}

// turnPacer records the priority of each wait for the platform's pace;
// the first background wait blocks until release is closed.
type turnPacer struct {
	mu      sync.Mutex
	waits   []bool // Background, per wait
	release chan struct{}
	waiting chan struct{} // closed when the first wait blocks
}

func (p *turnPacer) Wait(ctx context.Context) error {
	pr, _ := pacing.PriorityOf(ctx)
	p.mu.Lock()
	first := len(p.waits) == 0
	p.waits = append(p.waits, pr.Background)
	p.mu.Unlock()
	if first {
		close(p.waiting)
		<-p.release
	}
	return nil
}

func (p *turnPacer) Pause(time.Duration) {}

// Background provisioning waits for its turn of the platform's pace
// before it takes an email's provisioning lock, then makes its calls at
// a user's priority: a pupil's launch that needs the lock never waits for
// it behind the line's background work.
func TestBackgroundProvisioningHoldsTheLockOnlyWhileItCalls(t *testing.T) {
	type stores struct{ provisioner, other store.Store } // the other: the instance whose pupil would wait for the lock
	for name, open := range map[string]func(t *testing.T, e *env) stores{
		"sqlite": func(_ *testing.T, e *env) stores { return stores{e.store, e.store} },
		"postgres, two instances": func(t *testing.T, _ *env) stores {
			dsn := pgtest.DSN(t)
			var s [2]store.Store
			for i := range s {
				pg, err := sqlstore.OpenPostgres(context.Background(), dsn, nil)
				require.NoError(t, err)
				t.Cleanup(func() { pg.Close() })
				s[i] = pg
			}
			return stores{s[0], s[1]}
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			st := open(t, e)
			pacer := &turnPacer{release: make(chan struct{}), waiting: make(chan struct{})}
			cred := e.sim.Credentials()[0]
			client, err := apiclient.New(apiclient.Options{BaseURL: e.client.BaseURL(), Pacer: pacer,
				Credentials: apiclient.Credentials{Method: apiclient.AuthHMAC, APIKey: cred.Key, APISecret: cred.Secret},
				Sleep:       func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
			require.NoError(t, err)
			svc := launch.New(client, st.provisioner, launch.Options{})
			ada, err := st.provisioner.CreateAccount(context.Background(), store.NewAccount{Email: "ada@example.com", FirstName: "Ada", LastName: "Lovelace", PasswordHash: "h"})
			require.NoError(t, err)

			done := make(chan error, 1)
			go func() {
				_, err := svc.Provision(pacing.WithPriority(context.Background(), pacing.Priority{Background: true, Since: time.Now()}), ada)
				done <- err
			}()
			<-pacer.waiting
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			unlock, err := st.other.LockProvisioning(ctx, ada.Email)
			require.NoError(t, err, "the lock is free while the background work waits for its turn")
			unlock()
			close(pacer.release)
			require.NoError(t, <-done)
			assert.Equal(t, []bool{true, false}, pacer.waits, "a background turn, taken by the look-up; the creation at a user's priority")
			assert.Equal(t, map[string]int{"list_users": 1, "create_user": 1}, e.calls())
		})
	}
}
