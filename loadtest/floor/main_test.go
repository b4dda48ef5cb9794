package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/demo/platformsim"
)

func startPlatform(t *testing.T) (*platformsim.Running, platformsim.Credential) {
	t.Helper()
	cred := platformsim.NewCredential(true)
	sim, err := platformsim.New(platformsim.Config{Credentials: []platformsim.Credential{cred}})
	require.NoError(t, err)
	run, err := platformsim.Start(sim, "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { run.Close() })
	return run, cred
}

// A launch is a 303 to the exchange URL of a token the platform issued,
// and the platform user is created once, however often it runs.
func TestFloorLaunch(t *testing.T) {
	sim, cred := startPlatform(t)
	client, err := apiclient.New(apiclient.Options{BaseURL: sim.URL,
		Credentials: apiclient.Credentials{Method: apiclient.AuthHMAC, APIKey: cred.Key, APISecret: cred.Secret}})
	require.NoError(t, err)
	h, err := newHandler(context.Background(), client, "floor@example.com")
	require.NoError(t, err)
	_, err = newHandler(context.Background(), client, "floor@example.com")
	require.NoError(t, err)
	page, err := client.ListUsers(context.Background(), "floor@example.com", 0, 10)
	require.NoError(t, err)
	assert.Len(t, page.Content, 1, "the platform user is ensured, not created twice")

	tokens := map[string]bool{}
	for range 3 {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/launch", strings.NewReader("csrf_token=x"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
		loc := rec.Header().Get("Location")
		require.True(t, strings.HasPrefix(loc, sim.URL+apiclient.APIPrefix), loc)
		u, err := url.Parse(loc)
		require.NoError(t, err)
		tokens[u.Path] = true
		assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	}
	assert.Len(t, tokens, 3, "each launch carries a token of its own")

	// The command prints where it listens (port 0 picks one), then serves
	// until its context ends: cancelled here as soon as it has printed.
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	printed := writerFunc(func(p []byte) (int, error) { defer cancel(); return stdout.Write(p) })
	require.NoError(t, run(ctx, []string{"--platform", sim.URL, "--api-key", cred.Key, "--api-secret", cred.Secret}, printed, &stderr))
	assert.Regexp(t, `^floor: listening on http://127\.0\.0\.1:\d+ \(POST /launch\)\n$`, stdout.String())

	// The exchange URL works in a browser's place: it sets the platform's session.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/launch", nil)
	h.ServeHTTP(rec, req)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(rec.Header().Get("Location"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.NotEmpty(t, resp.Cookies(), "the exchange set the platform's session cookie")
}

func TestFloorRefuses(t *testing.T) {
	sim, cred := startPlatform(t)
	client, err := apiclient.New(apiclient.Options{BaseURL: sim.URL, ServerRetryDelay: 1,
		Credentials: apiclient.Credentials{Method: apiclient.AuthHMAC, APIKey: cred.Key, APISecret: cred.Secret}})
	require.NoError(t, err)
	h, err := newHandler(context.Background(), client, "floor@example.com")
	require.NoError(t, err)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/launch", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, "only POST launches")

	sim.Close() // the platform is gone: a 502, no redirect
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/launch", nil))
	assert.Equal(t, http.StatusBadGateway, rec.Code)
	assert.Empty(t, rec.Header().Get("Location"))

	// Without the platform it does not start.
	var stderr bytes.Buffer
	err = run(context.Background(), []string{"--platform", sim.URL, "--api-key", cred.Key, "--api-secret", cred.Secret}, io.Discard, &stderr)
	assert.ErrorIs(t, err, apiclient.ErrUnreachable)
	assert.ErrorContains(t, err, "platform user floor@example.com")
}

func TestFloorFlags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--platform", "http://127.0.0.1:1"},
		{"--platform", "ftp://x", "--api-key", "k", "--api-secret", "s"},
		{"--bogus"},
	} {
		var stderr bytes.Buffer
		assert.Error(t, run(context.Background(), args, io.Discard, &stderr), "%v", args)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
