package apiclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"time"
)

// callerTransport is an HTTP/1.1 RoundTripper that writes each request and
// reads its answer in the calling goroutine, over kept-alive connections
// to the platform. The standard Transport hands every request to a writer
// and a reader goroutine of the connection; for a launch, whose one
// platform call is a small request and a small answer, those hand-offs
// (channels, selects, wake-ups on two cores) cost more CPU than the call's
// own work: profiled from outside, the bridge spent 34 µs of its 105 µs
// per launch in the standard client. Requests and answers are still
// written and parsed by net/http (Request.Write, ReadResponse); only the
// connection handling is this type's, with net/http's rules for closed
// kept-alive connections (errStaleConn). A request that would go through a
// proxy (HTTPS_PROXY and friends) is handed to the standard Transport.
type callerTransport struct {
	fallback    *http.Transport
	dialer      *net.Dialer
	tlsConfig   *tls.Config // nil: the default, with ALPN http/1.1
	maxIdle     int         // kept-alive connections per host
	idleTimeout time.Duration
	// bound, when set, limits each round trip (the answer's body too), as
	// the Client's attempt timeout: set on the connection's deadline, it
	// costs no context and timer per call.
	bound time.Duration

	mu      sync.Mutex
	idle    map[string][]*keptConn // by scheme://host:port
	proxied map[string]bool        // whether a proxy applies, by the same key
}

// keptConn is one connection to the platform with its buffers.
type keptConn struct {
	conn      net.Conn
	raw       net.Conn // the TCP connection under conn (conn itself, or under TLS)
	br        *bufio.Reader
	bw        *bufio.Writer
	idleSince time.Time
}

func newCallerTransport(fallback *http.Transport, maxIdle int, idleTimeout time.Duration) *callerTransport {
	return &callerTransport{fallback: fallback, dialer: &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second},
		maxIdle: maxIdle, idleTimeout: idleTimeout, idle: map[string][]*keptConn{}, proxied: map[string]bool{}}
}

// errStaleConn: a kept-alive connection found closed by the platform
// (its idle timeout) when an idempotent request (GET, HEAD) had been
// written on it and no byte had come back; the request is sent again on
// a new connection, as net/http's Transport does. Other requests are not
// resent: whether the platform acted on them is unknown, and the Client's
// retry rules decide (a user creation is never resent after a network
// error). A connection closed while idle is found before anything is
// written on it (connAlive) and is not used.
var errStaleConn = errors.New("apiclient: kept-alive connection closed by the platform")

// RoundTrip implements http.RoundTripper.
func (t *callerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return t.fallback.RoundTrip(req)
	}
	key := req.URL.Scheme + "://" + hostPort(req.URL)
	if t.usesProxy(key, req) {
		return t.viaProxy(req)
	}
	for {
		kc, reused, err := t.get(req.Context(), key, req.URL.Scheme)
		if err != nil {
			return nil, err
		}
		resp, err := t.exchange(req, key, kc, reused)
		if errors.Is(err, errStaleConn) {
			if req.GetBody != nil {
				if req.Body, err = req.GetBody(); err != nil {
					return nil, err
				}
			}
			continue // another connection: each stale one is closed, and a new one is never stale
		}
		return resp, err
	}
}

// exchange sends req on kc and reads the answer's head. The answer's body
// gives kc back to the pool once read to its end and closed.
func (t *callerTransport) exchange(req *http.Request, key string, kc *keptConn, reused bool) (*http.Response, error) {
	ctx := req.Context()
	deadline, _ := ctx.Deadline() // zero: none
	if t.bound > 0 {
		if d := time.Now().Add(t.bound); deadline.IsZero() || d.Before(deadline) {
			deadline = d
		}
	}
	if err := kc.conn.SetDeadline(deadline); err != nil {
		kc.conn.Close()
		return nil, err
	}
	// A cancelled context stops blocked reads and writes at once.
	stop := context.AfterFunc(ctx, func() { _ = kc.conn.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*http.Response, error) {
		stop()
		kc.conn.Close()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, err
	}
	// A kept-alive connection closed before the answer's first byte: an
	// idempotent request goes again on another (errStaleConn).
	err := req.Write(kc.bw)
	if err == nil {
		err = kc.bw.Flush()
	}
	if err == nil {
		_, err = kc.br.Peek(1)
	}
	if err != nil {
		idempotent := req.Method == http.MethodGet || req.Method == http.MethodHead
		if reused && idempotent && (req.Body == nil || req.GetBody != nil) && ctx.Err() == nil &&
			(errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
			stop()
			kc.conn.Close()
			return nil, errStaleConn
		}
		return fail(err)
	}
	resp, err := http.ReadResponse(kc.br, req)
	if err != nil {
		return fail(err)
	}
	resp.Body = &returningBody{body: resp.Body, t: t, key: key, kc: kc, stop: stop, reuse: !resp.Close && !req.Close}
	return resp, nil
}

// viaProxy hands req to the standard Transport, within bound.
func (t *callerTransport) viaProxy(req *http.Request) (*http.Response, error) {
	if t.bound <= 0 {
		return t.fallback.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.bound)
	resp, err := t.fallback.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends a proxied call's bound when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// returningBody is an answer's body; its Close gives the connection back
// when the body was read to its end, and closes it otherwise.
type returningBody struct {
	body  io.ReadCloser
	t     *callerTransport
	key   string
	kc    *keptConn
	stop  func() bool
	reuse bool
	eof   bool
	done  bool
}

func (b *returningBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, errors.New("apiclient: read on a closed answer body")
	}
	n, err := b.body.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (b *returningBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	err := b.body.Close()
	cancelled := !b.stop() // the AfterFunc ran: the deadline is in the past
	if !b.eof || !b.reuse || cancelled || err != nil {
		b.kc.conn.Close()
		return err
	}
	b.t.put(b.key, b.kc)
	return nil
}

// usesProxy says, once per host, whether the fallback's proxy settings
// (the environment's, in NewHTTPClient) apply to it.
func (t *callerTransport) usesProxy(key string, req *http.Request) bool {
	t.mu.Lock()
	p, ok := t.proxied[key]
	t.mu.Unlock()
	if ok {
		return p
	}
	p = false
	if t.fallback.Proxy != nil {
		u, err := t.fallback.Proxy(req)
		p = err != nil || u != nil
	}
	t.mu.Lock()
	t.proxied[key] = p
	t.mu.Unlock()
	return p
}

// get returns an idle connection to key, or a new one.
func (t *callerTransport) get(ctx context.Context, key, scheme string) (*keptConn, bool, error) {
	now := time.Now()
	t.mu.Lock()
	for conns := t.idle[key]; len(conns) > 0; conns = t.idle[key] {
		kc := conns[len(conns)-1]
		t.idle[key] = conns[:len(conns)-1]
		if now.Sub(kc.idleSince) < t.idleTimeout {
			t.mu.Unlock()
			if connAlive(kc.raw) {
				return kc, true, nil
			}
			kc.conn.Close()
			t.mu.Lock()
			continue
		}
		kc.conn.Close()
	}
	t.mu.Unlock()
	addr := key[len(scheme)+3:]
	var conn, raw net.Conn
	var err error
	if scheme == "https" {
		cfg := t.tlsConfig.Clone()
		if cfg == nil {
			cfg = &tls.Config{}
		}
		cfg.NextProtos = []string{"http/1.1"}
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		conn, err = (&tls.Dialer{NetDialer: t.dialer, Config: cfg}).DialContext(ctx, "tcp", addr)
		if err == nil {
			raw = conn.(*tls.Conn).NetConn()
		}
	} else {
		conn, err = t.dialer.DialContext(ctx, "tcp", addr)
		raw = conn
	}
	if err != nil {
		return nil, false, err
	}
	return &keptConn{conn: conn, raw: raw, br: bufio.NewReaderSize(conn, 4096), bw: bufio.NewWriterSize(conn, 4096)}, false, nil
}

// put keeps kc for the next request to key, unless enough are kept.
func (t *callerTransport) put(key string, kc *keptConn) {
	if err := kc.conn.SetDeadline(time.Time{}); err != nil {
		kc.conn.Close()
		return
	}
	kc.idleSince = time.Now()
	t.mu.Lock()
	if len(t.idle[key]) < t.maxIdle {
		t.idle[key] = append(t.idle[key], kc)
		kc = nil
	}
	t.mu.Unlock()
	if kc != nil {
		kc.conn.Close()
	}
}

// CloseIdleConnections closes the kept-alive connections.
func (t *callerTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*keptConn{}
	t.mu.Unlock()
	for _, conns := range idle {
		for _, kc := range conns {
			kc.conn.Close()
		}
	}
	t.fallback.CloseIdleConnections()
}

// hostPort is u's host:port, with the scheme's default port when it has
// none.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}
