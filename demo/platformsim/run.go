package platformsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Running is an emulator listening on a loopback address.
type Running struct {
	*Server
	URL      string // base URL, without /api/5
	srv      *http.Server
	accepted *atomic.Int64
}

// Connections reports how many TCP connections the emulator has accepted
// (a load test checks that clients keep connections alive).
func (r *Running) Connections() int64 { return r.accepted.Load() }

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// Start serves s on addr (e.g. "127.0.0.1:0") until Close.
func Start(s *Server, addr string) (*Running, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("platformsim: listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 120 * time.Second}
	accepted := &atomic.Int64{}
	go func() {
		if err := srv.Serve(countingListener{Listener: ln, n: accepted}); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.cfg.Logger.Error("platform emulator stopped", "err", err)
		}
	}()
	return &Running{Server: s, URL: "http://" + ln.Addr().String(), srv: srv, accepted: accepted}, nil
}

// Close stops the server, waiting up to 5 s for requests under way.
func (r *Running) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return r.srv.Shutdown(ctx)
}
