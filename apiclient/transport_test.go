package apiclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingServer is an httptest server that counts the connections it
// accepted.
func countingServer(t *testing.T, h http.Handler) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func get(t *testing.T, c *http.Client, u string) (int, string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// Calls one after another share one connection, also when the answer has
// no body or is chunked; a body left unread closes its connection rather
// than leaving the next answer behind it.
func TestHTTPClientKeepsConnectionsAlive(t *testing.T) {
	srv, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/chunked":
			w.Write([]byte("part one, "))
			w.(http.Flusher).Flush()
			w.Write([]byte("part two"))
		default:
			fmt.Fprintf(w, "hello %s", r.URL.Path)
		}
	}))
	c := NewHTTPClient()
	defer c.CloseIdleConnections()
	for i, path := range []string{"/a", "/empty", "/chunked", "/b"} {
		status, body, err := get(t, c, srv.URL+path)
		require.NoError(t, err, path)
		switch path {
		case "/empty":
			assert.Equal(t, http.StatusNoContent, status)
			assert.Empty(t, body)
		case "/chunked":
			assert.Equal(t, "part one, part two", body)
		default:
			assert.Equal(t, "hello "+path, body)
		}
		assert.Equal(t, int32(1), conns.Load(), "call %d (%s) on the first connection", i, path)
	}

	resp, err := c.Get(srv.URL + "/unread")
	require.NoError(t, err)
	resp.Body.Close() // not read
	_, body, err := get(t, c, srv.URL+"/after")
	require.NoError(t, err)
	assert.Equal(t, "hello /after", body)
	assert.Equal(t, int32(2), conns.Load(), "the unread answer's connection was closed, not reused")
}

// Concurrent calls keep their connections: about as many as are in flight
// (net/http may dial one for a waiting call just before another frees up),
// never one per call.
func TestHTTPClientConcurrentCallsReuseConnections(t *testing.T) {
	srv, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	c := NewHTTPClient()
	defer c.CloseIdleConnections()
	const workers, rounds = 8, 50
	errs := make(chan error, workers)
	for range workers {
		go func() {
			for range rounds {
				if _, body, err := get(t, c, srv.URL); err != nil || body != "ok" {
					errs <- fmt.Errorf("body %q: %v", body, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		require.NoError(t, <-errs)
	}
	assert.LessOrEqual(t, conns.Load(), int32(2*workers), "%d calls", workers*rounds)
}

// rawPlatform answers each connection's first request as a kept-alive
// answer would, then closes the connection (closed receives one value per
// connection closed); with reset it reads the request and resets the
// connection without answering.
func rawPlatform(t *testing.T, reset bool) (addr string, accepted, requests *atomic.Int32, closed chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	accepted, requests, closed = &atomic.Int32{}, &atomic.Int32{}, make(chan struct{}, 100)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer func() { closed <- struct{}{} }()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					conn.Close()
					return
				}
				requests.Add(1)
				b, _ := io.ReadAll(req.Body)
				if reset {
					conn.(*net.TCPConn).SetLinger(0) // RST, not FIN
					conn.Close()
					return
				}
				fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(b), b)
				conn.Close()
			}()
		}
	}()
	return ln.Addr().String(), accepted, requests, closed
}

// A platform that closes a kept-alive connection while it is idle (its
// idle timeout) without saying so: the closed connection is found before
// anything is written on it, and the call goes on a new one.
func TestHTTPClientSkipsAConnectionClosedWhileIdle(t *testing.T) {
	addr, accepted, requests, closed := rawPlatform(t, false)
	c := NewHTTPClient()
	defer c.CloseIdleConnections()
	// The transport finds the close by reading the idle connection in the
	// background; the next call waits until it has (dropped: the transport
	// closed its end), else it could race that read and take the stale
	// connection, which no client can tell from one the platform closed
	// after reading the request.
	dropped := make(chan struct{}, 100)
	tr := c.Transport.(*http.Transport)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &closeNotingConn{Conn: conn, closed: dropped}, nil
	}
	for i, payload := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/echo", strings.NewReader(payload))
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err, "call %d", i)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, payload, string(b))
		<-closed // the platform has closed it
		select {
		case <-dropped: // and the client has seen it
		case <-time.After(5 * time.Second):
			t.Fatalf("call %d: the client kept a connection the platform closed", i)
		}
	}
	assert.Equal(t, int32(3), accepted.Load(), "a new connection per call")
	assert.Equal(t, int32(3), requests.Load(), "each sent once")
}

// A kept-alive connection reset after the platform read the request:
// whether it acted is unknown, so a POST is not sent again (the Client's
// retry rules decide); a GET, idempotent, is, on a new connection.
func TestHTTPClientResendsOnlyIdempotentRequests(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			var requests atomic.Int32
			go func() {
				for first := true; ; first = false {
					conn, err := ln.Accept()
					if err != nil {
						return
					}
					go func(first bool) {
						br := bufio.NewReader(conn)
						for answered := false; ; answered = true {
							if _, err := http.ReadRequest(br); err != nil {
								conn.Close()
								return
							}
							requests.Add(1)
							if first && answered { // the second request on the kept-alive connection
								conn.(*net.TCPConn).SetLinger(0) // RST, not FIN
								conn.Close()
								return
							}
							io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
						}
					}(first)
				}
			}()
			c := NewHTTPClient()
			defer c.CloseIdleConnections()
			u := "http://" + ln.Addr().String() + "/x"
			_, body, err := get(t, c, u) // leaves a kept-alive connection
			require.NoError(t, err)
			require.Equal(t, "ok", body)
			req, _ := http.NewRequest(method, u, strings.NewReader(""))
			resp, err := c.Do(req)
			if method == http.MethodPost {
				require.Error(t, err, "the reset reaches the caller")
				assert.Equal(t, int32(2), requests.Load(), "a POST is sent once")
				return
			}
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, int32(3), requests.Load(), "a GET is sent again, once, on a new connection")
		})
	}
}

// A cancelled call returns at once with the context's error, and a call
// past its deadline with a timeout; neither connection is kept.
func TestHTTPClientStopsOnTheContext(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 2)
	srv, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		io.WriteString(w, "ok")
	}))
	defer close(release)
	c := NewHTTPClient()
	defer c.CloseIdleConnections()

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/slow", nil)
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(req)
		done <- err
	}()
	<-arrived // cancelled while waiting for the answer
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled call did not return")
	}

	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/slow", nil)
	_, err := c.Do(req)
	require.Error(t, err)
	assert.True(t, isTimeout(err), "%v", err)

	_, body, err := get(t, c, srv.URL+"/fast")
	require.NoError(t, err)
	assert.Equal(t, "ok", body)
	assert.Equal(t, int32(3), conns.Load(), "the two stopped calls' connections were not reused")
}

// Through a proxy (the environment's, in NewHTTPClient) the call goes to
// the proxy with the absolute URL.
func TestHTTPClientGoesThroughAProxy(t *testing.T) {
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		fmt.Fprintf(w, "via proxy: %s", r.URL.String()) // a forward proxy gets the absolute URL
	}))
	defer proxy.Close()
	c := NewHTTPClient()
	defer c.CloseIdleConnections()
	pu, _ := url.Parse(proxy.URL)
	c.Transport.(*http.Transport).Proxy = http.ProxyURL(pu)
	_, body, err := get(t, c, "http://platform.invalid/api/5/x")
	require.NoError(t, err)
	assert.Equal(t, "via proxy: http://platform.invalid/api/5/x", body)
	assert.Equal(t, int32(1), proxied.Load())
}

// HTTPS: the connection is TLS, speaks HTTP/2 when the platform offers
// it and HTTP/1.1 when it does not, is kept alive, and a certificate of
// an unknown authority is refused.
func TestHTTPClientTLS(t *testing.T) {
	for proto, h2 := range map[string]bool{"HTTP/2.0": true, "HTTP/1.1": false} {
		t.Run(proto, func(t *testing.T) {
			var conns atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, "%s %v", r.Proto, r.TLS != nil)
			}))
			srv.EnableHTTP2 = h2
			srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.StartTLS()
			defer srv.Close()
			c := NewHTTPClient()
			defer c.CloseIdleConnections()
			c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
			for range 3 {
				_, body, err := get(t, c, srv.URL)
				require.NoError(t, err)
				assert.Equal(t, proto+" true", body)
			}
			assert.Equal(t, int32(1), conns.Load())

			_, _, err := get(t, NewHTTPClient(), srv.URL)
			var certErr *tls.CertificateVerificationError
			assert.ErrorAs(t, err, &certErr, "a certificate of an unknown authority is refused")
		})
	}
}

// readLimited reads to the end or the limit, whatever Content-Length
// claimed; drain reads what is left, up to its limit.
func TestReadLimited(t *testing.T) {
	body := strings.Repeat("abcdefgh", 300) // 2,400 bytes
	tests := []struct {
		name        string
		input       string
		limit, hint int64
		want        string
	}{
		{"exact hint", body, 4096, int64(len(body)), body},
		{"no hint", body, 4096, -1, body},
		{"hint too small", body, 4096, 10, body},
		{"hint too large", body, 4096, 100000, body},
		{"over the limit", body, 1000, int64(len(body)), body[:1000]},
		{"over the limit, no hint", body, 1000, -1, body[:1000]},
		{"empty", "", 4096, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readLimited(iotest.HalfReader(strings.NewReader(tt.input)), tt.limit, tt.hint)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
	_, err := readLimited(iotest.ErrReader(io.ErrClosedPipe), 100, -1)
	assert.ErrorIs(t, err, io.ErrClosedPipe)

	r := strings.NewReader(body)
	drain(r, 1000)
	assert.Equal(t, len(body)-1000, r.Len(), "drain stops at its limit")
	drain(r, 1<<20)
	assert.Zero(t, r.Len())
}

// The attempt's bound (Options.Timeout) holds with the Client's own HTTP
// client and with another one, also when the answer's headers came and
// its body stalls.
func TestAttemptBound(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("size") == "1" { // headers, then a body that stalls
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"content":[`))
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	for name, hc := range map[string]func() *http.Client{
		"own client":     func() *http.Client { return nil },
		"another client": func() *http.Client { return &http.Client{Transport: &http.Transport{}} },
	} {
		for _, size := range []int{10, 1} {
			t.Run(fmt.Sprintf("%s/size %d", name, size), func(t *testing.T) {
				h := setup(t, func(o *Options) { o.Timeout = 50 * time.Millisecond; o.HTTPClient = hc() })
				h.mux.Handle("GET /api/5/public/users", slow)
				start := time.Now()
				_, err := h.client.ListUsers(context.Background(), "a@example.com", 0, size)
				require.ErrorIs(t, err, ErrTimeout)
				assert.Less(t, time.Since(start), 5*time.Second)
			})
		}
	}
}

// closeNotingConn sends on closed when it is first closed.
type closeNotingConn struct {
	net.Conn
	once   sync.Once
	closed chan<- struct{}
}

func (c *closeNotingConn) Close() error {
	c.once.Do(func() { c.closed <- struct{}{} })
	return c.Conn.Close()
}
