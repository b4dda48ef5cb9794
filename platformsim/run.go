package platformsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Running is an emulator listening on a loopback address.
type Running struct {
	*Server
	URL string // base URL, without /api/5
	srv *http.Server
}

// Start serves s on addr (e.g. "127.0.0.1:0") until Close.
func Start(s *Server, addr string) (*Running, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("platformsim: listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 120 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.cfg.Logger.Error("platform emulator stopped", "err", err)
		}
	}()
	return &Running{Server: s, URL: "http://" + ln.Addr().String(), srv: srv}, nil
}

// Close stops the server, waiting up to 5 s for requests under way.
func (r *Running) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return r.srv.Shutdown(ctx)
}
