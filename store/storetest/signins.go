package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/internal/fakeclock"
	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// regulator drives the store's sign-in counting as the bridge's
// regulation does (one attempt counted before its password is checked,
// then failed or succeeded), with the suite's clock: the store's rules,
// tested without the package above it.
type regulator struct {
	s   store.Store
	cfg store.RegulationConfig
	now func() time.Time
}

// attempt is an admitted sign-in attempt, by the store's id.
type attempt struct{ id int64 }

func newRegulator(s store.Store, cfg store.RegulationConfig, now func() time.Time) *regulator {
	if now == nil {
		now = time.Now
	}
	return &regulator{s: s, cfg: cfg, now: now}
}

func (r *regulator) Admit(ctx context.Context, email, ip string) (attempt, time.Time, error) {
	id, until, err := r.s.AdmitSignIn(ctx, store.SignIn{Email: email, IP: ip, At: r.now()}, r.cfg)
	return attempt{id}, until, err
}

func (r *regulator) BannedUntil(ctx context.Context, email, ip string) (time.Time, error) {
	return r.s.BannedUntil(ctx, email, ip, r.now())
}

func (r *regulator) Fail(ctx context.Context, a attempt) (bool, error) {
	return r.s.FailSignIn(ctx, a.id, r.cfg, r.now())
}

func (r *regulator) Succeed(ctx context.Context, a attempt) error {
	return r.s.SucceedSignIn(ctx, a.id)
}

var rules = store.RegulationConfig{MaxRetries: 3, MaxRetriesPerIP: 100, FindTime: 2 * time.Minute, BanTime: 5 * time.Minute}

// attemptAndFail admits and fails one sign-in; it reports whether the
// attempt was refused (banned) and whether its failure started a ban.
func attemptAndFail(t *testing.T, r *regulator, email, ip string) (refused, started bool) {
	t.Helper()
	a, until, err := r.Admit(context.Background(), email, ip)
	require.NoError(t, err)
	if !until.IsZero() {
		return true, false
	}
	started, err = r.Fail(context.Background(), a)
	require.NoError(t, err)
	return false, started
}

func testRegulationPerEmail(t *testing.T, s store.Store) {
	ctx := context.Background()
	clk := fakeclock.New(time.Time{})
	r := newRegulator(s, rules, clk.Now)
	_, started := attemptAndFail(t, r, "Ada@example.com", "10.0.0.1")
	assert.False(t, started)
	clk.Advance(30 * time.Second)
	_, started = attemptAndFail(t, r, "ada@example.com", "10.0.0.2")
	assert.False(t, started)
	_, started = attemptAndFail(t, r, "ADA@example.com", "10.0.0.3")
	assert.True(t, started, "the third failure in the window bans, whatever the case of the email")
	_, until, err := r.Admit(ctx, "ada@example.com", "192.0.2.9")
	require.NoError(t, err)
	assert.Equal(t, clk.Now().Add(5*time.Minute), until, "the email is banned from any IP")
	a, until, err := r.Admit(ctx, "bob@example.com", "10.0.0.1")
	require.NoError(t, err)
	assert.True(t, until.IsZero(), "others are not")
	require.NoError(t, r.Succeed(ctx, a))

	clk.Advance(5*time.Minute + time.Second)
	a, until, err = r.Admit(ctx, "ada@example.com", "10.0.0.1")
	require.NoError(t, err)
	assert.True(t, until.IsZero(), "the ban ends")
	require.NoError(t, r.Succeed(ctx, a))

	// A success clears the count; old failures fall out of the window.
	attemptAndFail(t, r, "ada@example.com", "ip")
	attemptAndFail(t, r, "ada@example.com", "ip")
	clk.Advance(2*time.Minute + time.Second)
	_, started = attemptAndFail(t, r, "ada@example.com", "ip")
	assert.False(t, started, "the first two fell out of the window")
	a, _, err = r.Admit(ctx, "ada@example.com", "ip")
	require.NoError(t, err)
	require.NoError(t, r.Succeed(ctx, a))
	attemptAndFail(t, r, "ada@example.com", "ip")
	_, started = attemptAndFail(t, r, "ada@example.com", "ip")
	assert.False(t, started, "a success cleared the count")

	// Regulation off: nothing is counted, nothing banned.
	off := newRegulator(s, store.RegulationConfig{FindTime: time.Minute, BanTime: time.Minute}, clk.Now)
	for range 10 {
		refused, started := attemptAndFail(t, off, "carl@example.com", "ip2")
		assert.False(t, refused || started)
	}
}

func testRegulationPerIP(t *testing.T, s store.Store) {
	ctx := context.Background()
	clk := fakeclock.New(time.Time{})
	r := newRegulator(s, store.RegulationConfig{MaxRetries: 100, MaxRetriesPerIP: 5, FindTime: time.Minute, BanTime: time.Minute}, clk.Now)
	for i := range 4 {
		_, started := attemptAndFail(t, r, fmt.Sprintf("u%d@example.com", i), "198.51.100.7")
		assert.False(t, started)
	}
	_, started := attemptAndFail(t, r, "u4@example.com", "198.51.100.7")
	assert.True(t, started, "spraying many emails from one IP bans the IP")
	_, until, err := r.Admit(ctx, "new@example.com", "198.51.100.7")
	require.NoError(t, err)
	assert.False(t, until.IsZero())
	_, until, err = r.Admit(ctx, "new@example.com", "198.51.100.8")
	require.NoError(t, err)
	assert.True(t, until.IsZero(), "another IP is not")
}

// Fifty attempts at once for one email with a limit of five: five are
// admitted to have their password verified, the rest turned away (busy,
// not banned: nothing has failed yet); once the five fail, a ban holds.
func testRegulationParallel(t *testing.T, s store.Store) { regulationParallel(t, s) }

// regulationParallel sends 50 attempts at once, spread over the stores
// (instances sharing one database when more than one).
func regulationParallel(t *testing.T, stores ...store.Store) {
	ctx := context.Background()
	cfg := store.RegulationConfig{MaxRetries: 5, MaxRetriesPerIP: 1000, FindTime: time.Minute, BanTime: time.Minute}
	var regs []*regulator
	for _, s := range stores {
		regs = append(regs, newRegulator(s, cfg, nil))
	}
	r := regs[0]
	type result struct {
		a     attempt
		until time.Time
		err   error
	}
	results := make(chan result, 50)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, until, err := regs[i%len(regs)].Admit(ctx, "target@example.com", "203.0.113.1")
			results <- result{a, until, err}
		}()
	}
	wg.Wait()
	close(results)
	var admitted []attempt // attempts of regs[0]'s store are resolved on it; ids are the database's
	busy := 0
	for res := range results {
		switch {
		case errors.Is(res.err, store.ErrBusy):
			busy++
		case res.err != nil:
			require.NoError(t, res.err)
		case res.until.IsZero():
			admitted = append(admitted, res.a)
		default:
			t.Errorf("banned before any failure: %v", res.until)
		}
	}
	assert.Len(t, admitted, 5, "no more passwords verified than the limit")
	assert.Equal(t, 45, busy)
	for _, a := range admitted {
		_, err := r.Fail(ctx, a)
		require.NoError(t, err)
	}
	_, until, err := r.Admit(ctx, "target@example.com", "203.0.113.1")
	require.NoError(t, err)
	assert.False(t, until.IsZero(), "five failures: banned")
}

func testRegulationListLiftPrune(t *testing.T, s store.Store) {
	ctx := context.Background()
	clk := fakeclock.New(time.Time{})
	r := newRegulator(s, store.RegulationConfig{MaxRetries: 1, MaxRetriesPerIP: 2, FindTime: time.Minute, BanTime: 10 * time.Minute}, clk.Now)
	attemptAndFail(t, r, "Ada@example.com", "10.1.1.1")
	attemptAndFail(t, r, "bob@example.com", "10.1.1.1")
	bans, err := s.ListBans(ctx, clk.Now())
	require.NoError(t, err)
	until := clk.Now().Add(10 * time.Minute)
	assert.ElementsMatch(t, []store.Ban{{Kind: store.BanEmail, Value: "ada@example.com", Until: until},
		{Kind: store.BanEmail, Value: "bob@example.com", Until: until}, {Kind: store.BanIP, Value: "10.1.1.1", Until: until}}, bans)
	for _, tc := range []struct {
		email, ip string
		banned    bool
	}{
		{"BOB@example.com", "", true}, {"", "10.1.1.1", true}, {"carol@example.com", "10.1.1.1", true},
		{"carol@example.com", "10.9.9.9", false}, {"", "", false},
	} {
		got, err := r.BannedUntil(ctx, tc.email, tc.ip)
		require.NoError(t, err)
		if tc.banned {
			assert.Equal(t, until, got, "%s %s", tc.email, tc.ip)
		} else {
			assert.True(t, got.IsZero(), "%s %s", tc.email, tc.ip)
		}
	}

	n, err := s.LiftBans(ctx, "ADA@example.com", "")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	n, err = s.LiftBans(ctx, "", "10.1.1.1")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	n, err = s.LiftBans(ctx, "nobody@example.com", "")
	require.NoError(t, err)
	assert.Zero(t, n, "lifting what is not banned lifts nothing")
	a, until2, err := r.Admit(ctx, "ada@example.com", "10.1.1.1")
	require.NoError(t, err)
	assert.True(t, until2.IsZero(), "lifted, and the counted failures cleared with it")
	require.NoError(t, r.Succeed(ctx, a))
	bans, err = s.ListBans(ctx, clk.Now())
	require.NoError(t, err)
	assert.Len(t, bans, 1, "bob's ban stays")

	clk.Advance(11 * time.Minute)
	bans, err = s.ListBans(ctx, clk.Now())
	require.NoError(t, err)
	assert.Empty(t, bans, "ended bans are not listed")
	ended, err := r.BannedUntil(ctx, "bob@example.com", "")
	require.NoError(t, err)
	assert.True(t, ended.IsZero(), "an ended ban bans no more")
	pruned, err := s.PruneSignIns(ctx, clk.Now())
	require.NoError(t, err)
	assert.Positive(t, pruned)
}

func testBanAcross(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	cfg := store.RegulationConfig{MaxRetries: 2, MaxRetriesPerIP: 100, FindTime: time.Minute, BanTime: time.Minute}
	ra, rb := newRegulator(a, cfg, nil), newRegulator(b, cfg, nil)
	for range 2 {
		at, until, err := ra.Admit(ctx, "banned@example.com", "198.51.100.7")
		require.NoError(t, err)
		require.True(t, until.IsZero())
		_, err = ra.Fail(ctx, at)
		require.NoError(t, err)
	}
	_, until, err := rb.Admit(ctx, "BANNED@example.com", "198.51.100.8")
	require.NoError(t, err)
	assert.False(t, until.IsZero(), "banned on b after failing on a")
	n, err := b.LiftBans(ctx, "banned@example.com", "")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	_, until, err = ra.Admit(ctx, "banned@example.com", "198.51.100.7")
	require.NoError(t, err)
	assert.True(t, until.IsZero(), "lifted on b: admitted on a")
}
