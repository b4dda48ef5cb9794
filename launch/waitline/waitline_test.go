package waitline_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/handlers"
	"github.com/ssobridge/ssobridge/internal/fakeclock"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/launch/pacing"
	"github.com/ssobridge/ssobridge/launch/waitline"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// launcher finishes a launch when the test lets it (release closed; nil:
// at once), with err if set.
type launcher struct {
	release chan struct{}
	err     error
	started atomic.Int32
	// paced: a call would wait for the platform's pace, so a launch told
	// not to wait says so (pacing.ErrWouldWait).
	paced bool
	// slow: the launch takes this long on clock (a slow platform).
	slow  time.Duration
	clock *fakeclock.Clock

	mu     sync.Mutex
	places []time.Time // the place in line (pacing.Priority.Since) of each launch
}

func (f *launcher) Launch(ctx context.Context, acct store.Account, returnTo, _ string) (launch.Result, error) {
	if f.paced && pacing.MustNotWait(ctx) {
		return launch.Result{}, pacing.ErrWouldWait
	}
	f.started.Add(1)
	p, _ := pacing.PriorityOf(ctx)
	f.mu.Lock()
	f.places = append(f.places, p.Since)
	f.mu.Unlock()
	if f.slow > 0 {
		f.clock.Advance(f.slow)
	}
	if f.release != nil {
		var patience <-chan time.Time // its calls cut off as the client cuts them
		if deadline, ok := apiclient.Patience(ctx); ok {
			patience = time.After(time.Until(deadline))
		}
		select {
		case <-f.release:
		case <-patience:
			return launch.Result{}, &apiclient.TransportError{Endpoint: "issue_token", Err: apiclient.ErrOutOfPatience}
		case <-ctx.Done():
			return launch.Result{}, ctx.Err()
		}
	}
	if f.err != nil {
		return launch.Result{}, f.err
	}
	return launch.Result{ExchangeURL: "https://platform.example/exchange?token=secret-" + acct.Email + "&next=" + returnTo, PlatformCalls: 1}, nil
}

// budget reports fixed stats.
type budget pacing.Stats

func (b budget) Stats() pacing.Stats { return pacing.Stats(b) }

// MarkSlow: fixed stats stay as they are.
func (budget) MarkSlow(time.Duration) {}

// queued is a budget with a call waiting for its turn: there is a line.
var queued = budget{Waiting: 1}

type env struct {
	store  *sqlstore.SQLite
	clock  *fakeclock.Clock
	sealer handlers.Sealer
	acct   store.Account
	other  store.Account
}

func newEnv(t *testing.T) *env {
	clock := fakeclock.New(time.Now())
	s, err := sqlstore.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "line.db"), clock.Now)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	a, err := s.CreateAccount(t.Context(), store.NewAccount{Email: "pupil@example.com", FirstName: "P", LastName: "Upil", PasswordHash: passhash.NoPassword})
	require.NoError(t, err)
	b, err := s.CreateAccount(t.Context(), store.NewAccount{Email: "other@example.com", FirstName: "O", LastName: "Ther", PasswordHash: passhash.NoPassword})
	require.NoError(t, err)
	keys := handlers.SessionConfig{HashKey: []byte(strings.Repeat("h", 32)), BlockKey: []byte(strings.Repeat("b", 32))}
	return &env{store: s, clock: clock, sealer: handlers.NewSealer(keys, time.Hour, clock.Now), acct: a, other: b}
}

func (e *env) line(t *testing.T, l waitline.Launcher, b waitline.Budget, maxWait time.Duration) *waitline.Line {
	ln := waitline.New(waitline.Config{Patience: 50 * time.Millisecond, MaxWait: maxWait, Now: e.clock.Now}, l, e.store, b, e.sealer)
	t.Cleanup(ln.Close)
	return ln
}

// A launch done within the patience answers at once: no ticket, no page;
// without a line (no call waiting, no pause) it runs in its request.
func TestQuickLaunchIsDoneAtOnce(t *testing.T) {
	for name, b := range map[string]budget{"no line": {}, "a line": queued} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			ln := e.line(t, &launcher{}, b, time.Minute)
			a, err := ln.Join(t.Context(), e.acct, "s1", "/editor", "r1")
			require.NoError(t, err)
			assert.True(t, a.Done())
			assert.Equal(t, "https://platform.example/exchange?token=secret-pupil@example.com&next=/editor", a.ExchangeURL)
			assert.Empty(t, a.Ticket)
			assert.Zero(t, ln.Waiting(), "nothing left in flight")
		})
	}
}

// A slow launch gives the waiting page (a ticket); the ticket answers
// "waiting" until the launch is done, then the editor once, only to its
// own user; the store never holds the exchange URL in the clear.
func TestWaitingLaunchLandsOnce(t *testing.T) {
	e := newEnv(t)
	l := &launcher{release: make(chan struct{})}
	ln := e.line(t, l, queued, time.Minute)
	a, err := ln.Join(t.Context(), e.acct, "s1", "/editor", "r1")
	require.NoError(t, err)
	require.False(t, a.Done())
	require.Len(t, a.Ticket, 32)

	again, err := ln.Check(t.Context(), a.Ticket, e.acct.ID, "s1")
	require.NoError(t, err)
	assert.False(t, again.Done(), "still waiting")
	peek, err := ln.Peek(t.Context(), a.Ticket, e.acct.ID, "s1")
	require.NoError(t, err)
	assert.False(t, peek.Ready, "still waiting")
	assert.Equal(t, a.Ticket, again.Ticket)
	for _, bad := range []struct {
		id      string
		account int64
	}{{a.Ticket, e.other.ID}, {"nope", e.acct.ID}, {strings.Repeat("0", 32), e.acct.ID}, {a.Ticket + "x", e.acct.ID}} {
		_, err := ln.Check(t.Context(), bad.id, bad.account, "s1")
		assert.ErrorIs(t, err, waitline.ErrTicketGone, "%+v", bad)
	}

	close(l.release)
	require.Eventually(t, func() bool {
		tk, err := e.store.TicketByID(t.Context(), a.Ticket)
		return err == nil && tk.State == store.TicketDone
	}, 5*time.Second, 5*time.Millisecond)
	tk, err := e.store.TicketByID(t.Context(), a.Ticket)
	require.NoError(t, err)
	assert.NotContains(t, tk.Sealed, "secret", "sealed, not in the clear")
	assert.NotContains(t, tk.Sealed, "platform.example")

	_, err = ln.Check(t.Context(), a.Ticket, e.other.ID, "s1")
	assert.ErrorIs(t, err, waitline.ErrTicketGone, "not another user's, even when done")
	_, err = ln.Peek(t.Context(), a.Ticket, e.other.ID, "s1")
	assert.ErrorIs(t, err, waitline.ErrTicketGone, "nor may another user peek")
	// The waiting page's script peeks: ready, and the ticket is still
	// there for the page's own load.
	for range 2 {
		peek, err := ln.Peek(t.Context(), a.Ticket, e.acct.ID, "s1")
		require.NoError(t, err)
		assert.True(t, peek.Ready)
		assert.Empty(t, peek.ExchangeURL, "a peek never carries the token")
	}
	done, err := ln.Check(t.Context(), a.Ticket, e.acct.ID, "s1")
	require.NoError(t, err)
	assert.Equal(t, "https://platform.example/exchange?token=secret-pupil@example.com&next=/editor", done.ExchangeURL)
	_, err = ln.Check(t.Context(), a.Ticket, e.acct.ID, "s1")
	assert.ErrorIs(t, err, waitline.ErrTicketGone, "used once")
}

// A launch that fails while its user waits is told on the next refresh,
// with what the error page needs (the platform's 403 here).
func TestWaitingLaunchFailureIsTold(t *testing.T) {
	e := newEnv(t)
	l := &launcher{release: make(chan struct{}), err: &apiclient.APIError{Status: http.StatusForbidden, Endpoint: "create_user"}}
	ln := e.line(t, l, queued, time.Minute)
	a, err := ln.Join(t.Context(), e.acct, "s1", "", "r1")
	require.NoError(t, err)
	close(l.release)
	require.Eventually(t, func() bool {
		tk, err := e.store.TicketByID(t.Context(), a.Ticket)
		return err == nil && tk.State == store.TicketFailed
	}, 5*time.Second, 5*time.Millisecond)
	_, err = ln.Check(t.Context(), a.Ticket, e.acct.ID, "s1")
	var rp *launch.Reported
	require.ErrorAs(t, err, &rp)
	assert.Equal(t, launch.OutcomeForbidden, launch.Classify(err))
	assert.Equal(t, "create_user", launch.Explain(err).Endpoint)
}

// An arrival that would wait longer than MaxWait is turned away at once,
// told when to try again; a launch whose turn does not come within
// MaxWait ends "too busy" too.
func TestTooBusy(t *testing.T) {
	e := newEnv(t)
	l := &launcher{}
	ln := e.line(t, l, budget{Rate: 1, Share: 0.1, Waiting: 3}, 10*time.Second) // calls wait; 2 calls at 0.1/s: 20 s
	_, err := ln.Join(t.Context(), e.acct, "s1", "", "r1")
	var tb *waitline.TooBusyError
	require.ErrorAs(t, err, &tb)
	assert.Greater(t, tb.RetryAfter, 10*time.Second)
	assert.Zero(t, l.started.Load(), "nothing started")

	real := waitline.New(waitline.Config{Patience: 10 * time.Millisecond, MaxWait: 300 * time.Millisecond},
		&launcher{release: make(chan struct{})}, e.store, queued, e.sealer)
	defer real.Close()
	arrived := time.Now()
	a, err := real.Join(t.Context(), e.acct, "s1", "", "r2")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := real.Check(t.Context(), a.Ticket, e.acct.ID, "s1")
		return errors.As(err, &tb)
	}, 5*time.Second, 20*time.Millisecond, "its turn did not come within max_wait")
	require.WithinDuration(t, arrived, tb.Since, 100*time.Millisecond, "it says where its place was")

	// Coming back, the person takes that place: not refused however long
	// the line, ahead of everyone who came after, bounded anew.
	l.places = nil
	kept := e.clock.Now().Add(-5 * time.Minute).Truncate(time.Millisecond) // ln's clock: a place 5 minutes back
	_, err = ln.Rejoin(t.Context(), e.acct, "s1", "", "r3", kept)
	require.NoError(t, err, "a kept place is not refused (the waiting page, or the editor if its launch was quick)")
	require.Eventually(t, func() bool { return l.started.Load() == 1 }, 5*time.Second, time.Millisecond)
	l.mu.Lock()
	defer l.mu.Unlock()
	assert.True(t, l.places[0].Equal(kept), "its launch goes at its kept place: %v, kept %v", l.places[0], kept)

	// Without a line, a kept place long past runs in its request as any
	// launch: its patience counts from its request, not from its place.
	quick := e.line(t, &launcher{}, budget{}, time.Minute)
	done, err := quick.Rejoin(t.Context(), e.acct, "s9", "", "r9", e.clock.Now().Add(-20*time.Minute))
	require.NoError(t, err)
	assert.True(t, done.Done(), "the editor at once")
}

// An instance that stops leaves its users' tickets waiting; the instance
// a refresh reaches takes the launch over once the ticket's heartbeat is
// old, and the user lands.
func TestTicketTakenOverWhenItsInstanceStops(t *testing.T) {
	e := newEnv(t)
	a := e.line(t, &launcher{release: make(chan struct{})}, queued, time.Minute)
	bl := &launcher{}
	b := e.line(t, bl, queued, time.Minute)
	w, err := a.Join(t.Context(), e.acct, "s1", "/x", "r1")
	require.NoError(t, err)
	a.Close() // its launch stops; the ticket stays

	got, err := b.Check(t.Context(), w.Ticket, e.acct.ID, "s1")
	require.NoError(t, err)
	assert.False(t, got.Done())
	assert.Zero(t, bl.started.Load(), "a's heartbeat is fresh: not taken over yet")

	e.clock.Advance(11 * time.Second)
	_, err = b.Check(t.Context(), w.Ticket, e.acct.ID, "s1")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, err = b.Check(t.Context(), w.Ticket, e.acct.ID, "s1")
		return err == nil && got.Done()
	}, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, int32(1), bl.started.Load())
	assert.Contains(t, got.ExchangeURL, "next=/x", "with its return_to")
}

// Users who arrive together at an empty line: a launch run in its request
// whose platform call would wait for the pace goes on in the line, and its
// user gets the waiting page after the patience, not a tab that hangs.
func TestLaunchThatWouldWaitGoesInTheLine(t *testing.T) {
	e := newEnv(t)
	l := &launcher{release: make(chan struct{}), paced: true}
	ln := e.line(t, l, budget{}, time.Minute)
	start := time.Now()
	a, err := ln.Join(t.Context(), e.acct, "s1", "/editor", "r1")
	require.NoError(t, err)
	assert.False(t, a.Done())
	assert.Len(t, a.Ticket, 32, "the waiting page")
	assert.Less(t, time.Since(start), 2*time.Second, "answered after the patience (50 ms here), not when the launch ends")
	assert.Equal(t, 1, ln.Waiting(), "in the line")
	close(l.release)
	require.Eventually(t, func() bool {
		got, err := ln.Check(t.Context(), a.Ticket, e.acct.ID, "s1")
		return err == nil && got.Done()
	}, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, int32(1), l.started.Load(), "one launch: the one in the line")
}

// A slow platform: once a launch run in its request has taken longer than
// the patience, the next arrivals go in the line and get the waiting page
// after the patience.
func TestSlowPlatformSendsArrivalsToTheLine(t *testing.T) {
	e := newEnv(t)
	l := &launcher{slow: 150 * time.Millisecond, clock: e.clock}
	ln := e.line(t, l, budget{}, time.Minute)
	first, err := ln.Join(t.Context(), e.acct, "s1", "", "r1")
	require.NoError(t, err)
	assert.True(t, first.Done(), "the first waits for the slow platform in its request")
	l.slow, l.release = 0, make(chan struct{}) // the next is slow too
	next, err := ln.Join(t.Context(), e.other, "s2", "", "r2")
	require.NoError(t, err)
	assert.False(t, next.Done(), "the next gets the page after the patience (50 ms)")
	assert.Equal(t, 1, ln.Waiting(), "in the line")
	close(l.release)
	require.Eventually(t, func() bool {
		got, err := ln.Check(t.Context(), next.Ticket, e.other.ID, "s2")
		return err == nil && got.Done()
	}, 5*time.Second, 5*time.Millisecond)

	// A launch in its request that is still running past the patience
	// sends newcomers to the line too, before it ends.
	l2 := &launcher{release: make(chan struct{})}
	ln2 := e.line(t, l2, budget{}, time.Minute)
	e.clock.Advance(time.Minute) // past the first line's slow spell; not this line's
	go func() { _, _ = ln2.Join(t.Context(), e.acct, "s3", "", "r3") }()
	require.Eventually(t, func() bool { return l2.started.Load() == 1 }, 5*time.Second, time.Millisecond)
	e.clock.Advance(60 * time.Millisecond) // the first is past the patience now
	late, err := ln2.Join(t.Context(), e.other, "s4", "", "r4")
	require.NoError(t, err)
	assert.False(t, late.Done(), "the page after the patience, while the first still hangs")
	close(l2.release)
}

// The first launch to meet a slow platform, run in its request, is cut
// off at the patience (50 ms here): its person gets the waiting page
// then, not a blank tab until the platform answers, and the launch goes
// on in the line; the line now knows the platform is slow (the next
// arrival goes straight in), and so do other instances (MarkSlow).
func TestFirstLaunchToMeetASlowPlatformGetsThePage(t *testing.T) {
	e := newEnv(t)
	l := &launcher{release: make(chan struct{})}
	b := &slowBudget{}
	ln := waitline.New(waitline.Config{Patience: 50 * time.Millisecond, MaxWait: time.Minute, Now: e.clock.Now}, l, e.store, b, e.sealer)
	t.Cleanup(ln.Close)
	first, err := ln.Join(t.Context(), e.acct, "s1", "", "r1")
	require.NoError(t, err)
	require.False(t, first.Done(), "the waiting page at the patience")
	require.Len(t, first.Ticket, 32)
	assert.Equal(t, 1, ln.Waiting(), "the launch goes on in the line")
	assert.Equal(t, int32(1), b.marked.Load(), "every instance is told the platform is slow")

	next, err := ln.Join(t.Context(), e.other, "s2", "", "r2")
	require.NoError(t, err)
	assert.False(t, next.Done(), "the next arrival waits in the line")
	close(l.release)
	for _, w := range []struct {
		ticket  string
		account int64
		session string
	}{{first.Ticket, e.acct.ID, "s1"}, {next.Ticket, e.other.ID, "s2"}} {
		require.Eventually(t, func() bool {
			got, err := ln.Check(t.Context(), w.ticket, w.account, w.session)
			return err == nil && got.Done()
		}, 5*time.Second, 5*time.Millisecond, "both land")
	}
}

// slowBudget is an empty budget that counts MarkSlow.
type slowBudget struct{ marked atomic.Int32 }

func (*slowBudget) Stats() pacing.Stats      { return pacing.Stats{} }
func (b *slowBudget) MarkSlow(time.Duration) { b.marked.Add(1) }

// One session that asks again and again (80 tabs, a script) holds one
// place in the line: one launch runs, one login token is asked for, and
// every request gets that launch's waiting page; another user's launch
// has a place of its own.
func TestOneSessionHoldsOnePlace(t *testing.T) {
	e := newEnv(t)
	l := &launcher{release: make(chan struct{})}
	ln := e.line(t, l, queued, time.Minute)
	const n = 80
	answers := make(chan waitline.Answer, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			a, err := ln.Join(t.Context(), e.acct, "s1", "/editor", "r")
			answers <- a
			errs <- err
		}()
	}
	tickets := map[string]int{}
	for range n {
		require.NoError(t, <-errs)
		a := <-answers
		assert.False(t, a.Done())
		tickets[a.Ticket]++
	}
	assert.Len(t, tickets, 1, "one waiting page for all of them")
	assert.Equal(t, int32(1), l.started.Load(), "one launch")
	assert.Equal(t, 1, ln.Waiting(), "one place in the line")

	other, err := ln.Join(t.Context(), e.other, "s2", "", "r")
	require.NoError(t, err)
	assert.Equal(t, 2, ln.Waiting(), "another user has a place of their own")
	assert.NotContains(t, tickets, other.Ticket)

	close(l.release)
	var ticket string
	for id := range tickets {
		ticket = id
	}
	require.Eventually(t, func() bool {
		got, err := ln.Check(t.Context(), ticket, e.acct.ID, "s1")
		return err == nil && got.Done()
	}, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, int32(2), l.started.Load(), "still one launch for the first user (and one for the other)")
}

// A double click while the launch waits: the second request waits behind
// the first and gets the same waiting page; the launch's one token is
// handed out once, through it. On a quick platform both clicks land, one
// launch after the other.
func TestSecondRequestOfASessionSharesTheLaunch(t *testing.T) {
	e := newEnv(t)
	l := &launcher{release: make(chan struct{})}
	ln := waitline.New(waitline.Config{Patience: 100 * time.Millisecond, Now: e.clock.Now}, l, e.store, queued, e.sealer)
	t.Cleanup(ln.Close)
	first := make(chan waitline.Answer, 1)
	go func() {
		a, err := ln.Join(t.Context(), e.acct, "s1", "", "r1")
		assert.NoError(t, err)
		first <- a
	}()
	require.Eventually(t, func() bool { return l.started.Load() == 1 }, 5*time.Second, time.Millisecond)
	second, err := ln.Join(t.Context(), e.acct, "s1", "", "r2")
	require.NoError(t, err)
	require.False(t, second.Done(), "the second request gets the waiting page")
	a := <-first
	assert.False(t, a.Done(), "so does the first")
	assert.Equal(t, second.Ticket, a.Ticket, "one page, one ticket")
	close(l.release)
	require.Eventually(t, func() bool {
		got, err := ln.Check(t.Context(), a.Ticket, e.acct.ID, "s1")
		return err == nil && got.Done()
	}, 5*time.Second, 5*time.Millisecond)
	_, err = ln.Check(t.Context(), a.Ticket, e.acct.ID, "s1")
	assert.ErrorIs(t, err, waitline.ErrTicketGone, "used once")
	assert.Equal(t, int32(1), l.started.Load())

	// The launch ended: a request of the session that comes after it and
	// finds it answered starts a new one, as a new click does.
	l.release = nil
	again, err := ln.Join(t.Context(), e.acct, "s1", "", "r3")
	require.NoError(t, err)
	assert.True(t, again.Done())
}

// A ticket is its session's: another session of the same account does not
// redeem it (a later sign-in after a sign-out), and an expired ticket is
// refused when read, before any prune.
func TestTicketIsItsSessions(t *testing.T) {
	e := newEnv(t)
	ln := e.line(t, &launcher{release: make(chan struct{})}, queued, time.Minute)
	a, err := ln.Join(t.Context(), e.acct, "s1", "", "r1")
	require.NoError(t, err)
	_, err = ln.Check(t.Context(), a.Ticket, e.acct.ID, "s2")
	assert.ErrorIs(t, err, waitline.ErrTicketGone, "another session of the account")
	_, err = ln.Check(t.Context(), a.Ticket, e.acct.ID, "s1")
	require.NoError(t, err)
	e.clock.Advance(time.Minute + 11*time.Minute) // past max_wait and the ticket's life
	_, err = ln.Check(t.Context(), a.Ticket, e.acct.ID, "s1")
	assert.ErrorIs(t, err, waitline.ErrTicketGone, "expired: refused when read")
	_, err = e.store.TicketByID(t.Context(), a.Ticket)
	require.NoError(t, err, "not pruned yet: refused all the same")
}

// A session that ends (sign-out, sessions ended, a new password, the
// account disabled) takes its waiting launches with it: the launch stops
// before its token, and its ticket is gone, even for a session that
// signs in after the account is enabled again.
func TestEndedSessionTakesItsLaunch(t *testing.T) {
	e := newEnv(t)
	l := &launcher{release: make(chan struct{})}
	ln := e.line(t, l, queued, time.Minute)
	a, err := ln.Join(t.Context(), e.acct, "s1", "", "r1")
	require.NoError(t, err)
	other, err := ln.Join(t.Context(), e.other, "s9", "", "r2")
	require.NoError(t, err)
	require.NoError(t, e.store.SetDisabled(t.Context(), e.acct.ID, true))
	ln.End(e.acct.ID, "")
	require.Eventually(t, func() bool { return ln.Waiting() == 1 }, 5*time.Second, time.Millisecond, "its launch stopped; the other user's goes on")
	_, err = e.store.TicketByID(t.Context(), a.Ticket)
	assert.ErrorIs(t, err, store.ErrNotFound, "the store dropped the ticket with the sessions")
	require.NoError(t, e.store.SetDisabled(t.Context(), e.acct.ID, false))
	_, err = ln.Check(t.Context(), a.Ticket, e.acct.ID, "s1")
	assert.ErrorIs(t, err, waitline.ErrTicketGone)
	_, err = ln.Check(t.Context(), other.Ticket, e.other.ID, "s9")
	assert.NoError(t, err, "another account's ticket stays")
	close(l.release)
}

// concurrency records how many launches ran at once at most.
type concurrency struct {
	now, most atomic.Int32
}

func (c *concurrency) Launch(_ context.Context, acct store.Account, _, _ string) (launch.Result, error) {
	n := c.now.Add(1)
	defer c.now.Add(-1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	time.Sleep(2 * time.Millisecond) // a quick platform
	return launch.Result{ExchangeURL: "https://platform.example/exchange?token=" + acct.Email}, nil
}

// Requests of one session on a quick platform (a double click, a kiosk
// that replays its cookie): each lands in the editor, one launch of the
// session at a time.
func TestQuickRequestsOfASessionLandOneAfterAnother(t *testing.T) {
	e := newEnv(t)
	c := &concurrency{}
	ln := waitline.New(waitline.Config{Patience: 5 * time.Second, Now: e.clock.Now}, c, e.store, budget{}, e.sealer)
	t.Cleanup(ln.Close)
	const n = 8
	done := make(chan bool, n)
	for range n {
		go func() {
			a, err := ln.Join(t.Context(), e.acct, "s1", "", "r")
			done <- err == nil && a.Done()
		}()
	}
	for range n {
		assert.True(t, <-done, "each request lands")
	}
	assert.Equal(t, int32(1), c.most.Load(), "one launch of the session at a time")
}

// The estimate counts the platform calls each launch will really make:
// one for a linked account, the learnt figure (three at first: look up,
// create, token) for one that is not, at the instance's share of the
// rate.
func TestEstimateCountsTheCallsOfEachLaunch(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.store.SaveLink(t.Context(), e.acct.ID, "platform-user-1"))
	l := &launcher{release: make(chan struct{})}
	defer close(l.release)
	ln := e.line(t, l, budget{Rate: 10, Share: 10, Waiting: 1}, time.Minute)

	unlinked, err := ln.Join(t.Context(), e.other, "s2", "", "r2")
	require.NoError(t, err)
	assert.Equal(t, 300*time.Millisecond, unlinked.Wait, "not linked: 3 calls at 10 a second")
	e.clock.Advance(time.Millisecond) // arrives after
	linked, err := ln.Join(t.Context(), e.acct, "s1", "", "r1")
	require.NoError(t, err)
	assert.InDelta(t, 400*time.Millisecond, linked.Wait, float64(time.Millisecond), "linked: its 1 call behind the 3 ahead")
}

// With a pace measured (the line has lasted), the estimate goes at the
// mean of the share and the pace the line really got.
func TestEstimateFollowsTheMeasuredPace(t *testing.T) {
	e := newEnv(t)
	l := &launcher{release: make(chan struct{})}
	defer close(l.release)
	ln := e.line(t, l, budget{Rate: 10, Share: 10, Waiting: 1, Pace: 20}, time.Minute)
	a, err := ln.Join(t.Context(), e.other, "s2", "", "r2")
	require.NoError(t, err)
	assert.Equal(t, 200*time.Millisecond, a.Wait, "3 calls at 15 a second")
}
