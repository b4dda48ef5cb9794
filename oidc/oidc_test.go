package oidc

import (
	"context"
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
