package oidc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// While the IdP's discovery fails, callers get the failure from memory
// (one attempt for many sign-ins and probes at once); after discoveryRetry
// the next caller tries again.
func TestDiscoveryFailureIsRememberedBriefly(t *testing.T) {
	var hits atomic.Int32
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer idp.Close()
	p := New(Config{Issuer: idp.URL, ClientID: "c", Scopes: []string{"openid"}})
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.ErrorIs(t, p.Discover(context.Background()), ErrUnavailable)
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), hits.Load(), "ten callers, one attempt")

	p.mu.Lock()
	p.lastTry = p.lastTry.Add(-discoveryRetry) // as if the pause had passed
	p.mu.Unlock()
	require.ErrorIs(t, p.Discover(context.Background()), ErrUnavailable)
	assert.Equal(t, int32(2), hits.Load(), "tried again after the pause")
}

// A flow answered with another state, or too late, is refused before the
// IdP is asked anything.
func TestFinishChecksStateAndAgeFirst(t *testing.T) {
	now := time.Unix(1_795_000_000, 0)
	p := New(Config{Issuer: "http://127.0.0.1:1", ClientID: "c", Scopes: []string{"openid"}, Now: func() time.Time { return now }})
	f := Flow{State: "s", Expires: now.Add(FlowTTL)}
	_, err := p.Finish(context.Background(), f, map[string][]string{"state": {"other"}, "code": {"x"}})
	assert.ErrorIs(t, err, ErrBadState)
	_, err = p.Finish(context.Background(), Flow{}, map[string][]string{"state": {""}})
	assert.ErrorIs(t, err, ErrBadState, "no flow")
	_, err = p.Finish(context.Background(), Flow{State: "s", Expires: now}, map[string][]string{"state": {"s"}, "code": {"x"}})
	assert.ErrorIs(t, err, ErrExpired)
	_, err = p.Finish(context.Background(), f, map[string][]string{"state": {"s"}, "error": {"access_denied"}})
	assert.ErrorIs(t, err, ErrDenied)
	assert.ErrorContains(t, err, "access_denied")
	_, err = p.Finish(context.Background(), f, map[string][]string{"state": {"s"}})
	assert.ErrorIs(t, err, ErrDenied, "no code")
}

func TestNewAsksForGroupsWithAnAdminGroup(t *testing.T) {
	assert.Equal(t, []string{"openid", "email", "groups"}, New(Config{Scopes: []string{"openid", "email"}, AdminGroup: "a"}).Scopes())
	assert.Equal(t, []string{"openid"}, New(Config{Scopes: []string{"openid"}}).Scopes())
}

// fakeIdP serves a discovery document and a key set; down makes every
// answer a 503, noKeys an empty key set.
type fakeIdP struct {
	*httptest.Server
	down, noKeys atomic.Bool
}

func newFakeIdP(t *testing.T) *fakeIdP {
	f := &fakeIdP{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":"%[1]s/auth","token_endpoint":"%[1]s/token","jwks_uri":"%[1]s/keys","id_token_signing_alg_values_supported":["RS256"]}`, f.URL)
		case "/keys":
			if f.noKeys.Load() {
				io.WriteString(w, `{"keys":[]}`)
				return
			}
			io.WriteString(w, `{"keys":[{"kty":"RSA","kid":"k1","n":"sXch","e":"AQAB"}]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// Once discovery has succeeded, the background health check still
// notices an outage (of discovery or of the keys): Start and Discover
// answer ErrUnavailable at once, changed is told once when it goes down
// and once when it is back, and sign-in recovers by itself.
func TestWatchNoticesAnOutageAfterStart(t *testing.T) {
	idp := newFakeIdP(t)
	p := New(Config{Issuer: idp.URL, ClientID: "c", Scopes: []string{"openid"}})
	require.NoError(t, p.Discover(context.Background()))

	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var changes []error
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Watch(ctx, 5*time.Millisecond, func(err error) { mu.Lock(); changes = append(changes, err); mu.Unlock() })
	}()
	defer func() { cancel(); <-done }()
	changesNow := func() []error { mu.Lock(); defer mu.Unlock(); return append([]error(nil), changes...) }
	started := func() error { _, _, err := p.Start(context.Background(), "http://bridge.example/cb", "/"); return err }

	for _, outage := range []*atomic.Bool{&idp.down, &idp.noKeys} {
		n := len(changesNow())
		outage.Store(true)
		require.Eventually(t, func() bool { return errors.Is(p.Discover(context.Background()), ErrUnavailable) }, 5*time.Second, time.Millisecond)
		assert.ErrorIs(t, started(), ErrUnavailable, "the button leads to the unavailable page")
		outage.Store(false)
		require.Eventually(t, func() bool { return p.Discover(context.Background()) == nil }, 5*time.Second, time.Millisecond)
		assert.NoError(t, started())
		require.Eventually(t, func() bool { return len(changesNow()) == n+2 }, 5*time.Second, time.Millisecond)
		got := changesNow()[n:]
		assert.ErrorIs(t, got[0], ErrUnavailable)
		assert.NoError(t, got[1])
	}
}
