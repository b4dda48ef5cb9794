// Command floor serves the least a bridge can be on this stack: a net/http
// server whose POST /launch parses its form, asks the platform for a login
// token with the project's client (signed, kept-alive, as the bridge does)
// and answers 303 to the exchange URL. No session, anti-forgery check,
// store, audit row, router or log line.
//
// It exists to measure what the platform call alone costs the bridge: its
// CPU per launch against the emulator's CPU per call, in the same run, is
// the lowest bridge/emulator ratio any launch path can reach here. Run by
// loadtest/external.sh --floor; see docs/performance.md.
//
//	go run ./loadtest/floor --addr 127.0.0.1:18804 --platform http://127.0.0.1:18801 \
//	    --api-key KEY --api-secret SECRET
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/internal/gctune"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen here (loopback; port 0 picks one, printed at start)")
	platform := fs.String("platform", "", "the platform's base URL (the emulator)")
	key := fs.String("api-key", "", "the platform API key")
	secret := fs.String("api-secret", "", "the platform API secret")
	email := fs.String("email", "floor@example.com", "the platform user every launch is for (created if missing)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *platform == "" || *key == "" || *secret == "" {
		return errors.New("--platform, --api-key and --api-secret are required")
	}
	client, err := apiclient.New(apiclient.Options{BaseURL: *platform,
		Credentials: apiclient.Credentials{Method: apiclient.AuthHMAC, APIKey: *key, APISecret: *secret}})
	if err != nil {
		return err
	}
	h, err := newHandler(ctx, client, *email)
	if err != nil {
		return err
	}
	gctune.RaiseGCPercent() // as serve does, so the two compare
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "floor: listening on http://%s (POST /launch)\n", ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newHandler ensures the platform user for email once, then answers POST
// /launch with a 303 to a fresh login token's exchange URL.
func newHandler(ctx context.Context, client *apiclient.Client, email string) (http.Handler, error) {
	res, err := client.EnsureUser(ctx, apiclient.NewUser{FirstName: "Floor", LastName: "Bench", Email: email})
	if err != nil {
		return nil, fmt.Errorf("platform user %s: %w", email, err)
	}
	uid := res.User.UserID
	mux := http.NewServeMux()
	mux.HandleFunc("POST /launch", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, "the form could not be read", http.StatusBadRequest)
			return
		}
		t, err := client.IssueLoginToken(r.Context(), uid, apiclient.TokenProperties{})
		if err != nil {
			http.Error(w, "the platform did not issue a login token", http.StatusBadGateway)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Location", client.ExchangeURL(t))
		w.WriteHeader(http.StatusSeeOther)
	})
	return mux, nil
}
