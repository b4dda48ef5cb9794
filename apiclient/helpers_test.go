package apiclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const (
	testKey    = "key-abc"
	testSecret = "top-secret-value-123"
)

// fixedNow is the signing time tests use.
var fixedNow = time.Date(2026, 11, 22, 4, 5, 6, 0, time.UTC)

// harness is a client wired to an httptest mux, with waits recorded
// instead of slept (the model is go-github's setup(t)).
type harness struct {
	mux    *http.ServeMux
	server *httptest.Server
	client *Client
	mu     sync.Mutex
	waits  []time.Duration
}

func setup(t *testing.T, tweak ...func(*Options)) *harness {
	t.Helper()
	h := &harness{mux: http.NewServeMux()}
	h.server = httptest.NewServer(h.mux)
	t.Cleanup(h.server.Close)
	opts := Options{
		BaseURL:     h.server.URL,
		Credentials: Credentials{Method: AuthHMAC, APIKey: testKey, APISecret: testSecret},
		Now:         func() time.Time { return fixedNow },
		Jitter:      func() float64 { return 0.5 }, // no jitter: factor 1.0
		Sleep: func(ctx context.Context, d time.Duration) error {
			h.mu.Lock()
			h.waits = append(h.waits, d)
			h.mu.Unlock()
			return ctx.Err()
		},
		Timeout: 2 * time.Second,
	}
	for _, f := range tweak {
		f(&opts)
	}
	c, err := New(opts)
	require.NoError(t, err)
	h.client = c
	return h
}

func (h *harness) recordedWaits() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.waits...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"message": msg, "status": status})
}

// counter counts requests per handler.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) inc(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[k]++
	return c.n[k]
}

func (c *counter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

func jsonDecode(r *http.Request, v any) error { return json.NewDecoder(r.Body).Decode(v) }

func readAll(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}
