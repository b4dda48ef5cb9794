package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/platformsim"
)

// serve runs the bridge until ctx ends.
func (c cli) serve(ctx context.Context, args []string) error {
	fs := c.newFlags("serve")
	cfgPath := fs.String("config", "", "configuration file (default ./config.yaml, else the embedded demo)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := c.loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	a, err := buildApp(ctx, cfg, appOptions{logOut: c.stderr})
	if err != nil {
		return err
	}
	defer a.Close()

	ln, err := net.Listen("tcp", cfg.Server.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (server.addr): %w", cfg.Server.Addr, err)
	}
	url := publicURL(cfg, ln.Addr().String())
	fmt.Fprintf(c.stdout, "ssobridge listening on %s\n", url)
	if a.sim != nil {
		fmt.Fprintf(c.stdout, "platform emulator (embedded) at %s\n", a.sim.URL)
	}
	line, err := a.ensureDemoAccount(ctx)
	if err != nil {
		return err
	}
	if line != "" {
		fmt.Fprintln(c.stdout, line)
	}

	if r := cfg.Audit.Retention; r > 0 {
		go pruneAudit(ctx, a.store, r, a.logger)
	}

	srv := &http.Server{Handler: a.echo, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 90 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(a.logger.Handler(), slog.LevelWarn)}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// pruneAudit deletes audit events older than retention, now and hourly.
func pruneAudit(ctx context.Context, store accounts.Store, retention time.Duration, logger *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := store.PruneEvents(ctx, time.Now().Add(-retention))
		if err != nil && ctx.Err() == nil {
			logger.Error("audit pruning failed", "err", err)
		} else if n > 0 {
			logger.Info("audit events pruned", "count", n, "retention", retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// userAdd creates a local account; the password comes from stdin (first line).
func (c cli) userAdd(ctx context.Context, args []string) error {
	fs := c.newFlags("user add")
	cfgPath := fs.String("config", "", "configuration file")
	email := fs.String("email", "", "the account's email (required)")
	first := fs.String("first-name", "", "first name (required)")
	last := fs.String("last-name", "", "last name (required)")
	admin := fs.Bool("admin", false, "make the account a partner admin")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// Check everything before touching the store, so bad input writes nothing.
	n := accounts.NewAccount{Email: *email, FirstName: *first, LastName: *last, PasswordHash: "pending", Admin: *admin}
	if err := n.Normalize(); err != nil {
		return usageError(strings.TrimPrefix(err.Error(), accounts.ErrInvalid.Error()+": "))
	}
	password, err := readPassword(c.stdin)
	if err != nil {
		return err
	}
	if err := accounts.CheckPassword(password); err != nil {
		return usageError(strings.TrimPrefix(err.Error(), accounts.ErrInvalid.Error()+": "))
	}
	cfg, err := c.loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	store, err := accounts.OpenSQLite(ctx, cfg.Store.DSN, nil)
	if err != nil {
		return err
	}
	defer store.Close()
	hasher, err := newHasher(cfg.Password, 1)
	if err != nil {
		return err
	}
	if n.PasswordHash, err = hasher.Hash(ctx, password); err != nil {
		return err
	}
	acct, err := store.CreateAccount(ctx, n)
	if err != nil {
		if errors.Is(err, accounts.ErrEmailTaken) {
			return fmt.Errorf("an account with email %s exists already", n.Email)
		}
		return err
	}
	if err := store.Record(ctx, accounts.Event{Kind: accounts.KindAdmin, AccountID: acct.ID, Email: acct.Email, Outcome: "ok",
		Detail: fmt.Sprintf("account created from the command line (admin=%v)", acct.Admin)}); err != nil {
		return err
	}
	role := "account"
	if acct.Admin {
		role = "admin account"
	}
	fmt.Fprintf(c.stdout, "created %s %s (id %d)\n", role, acct.Email, acct.ID)
	return nil
}

// readPassword reads the first line of r.
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", usageError("empty password: pipe it on stdin, e.g. printf '%s\\n' \"$PW\" | ssobridge user add ...")
	}
	return line, nil
}

// errCheckFailed makes check exit non-zero after printing its verdict.
var errCheckFailed = errors.New("check failed")

// check diagnoses the platform connection.
func (c cli) check(ctx context.Context, args []string) error {
	fs := c.newFlags("check")
	cfgPath := fs.String("config", "", "configuration file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := c.loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	client, _, closeFn, err := connectPlatform(cfg, newLogger(cfg.Log, c.stderr), nil, nil)
	if err != nil {
		return err
	}
	defer closeFn()
	r := client.Check(ctx)
	printCheck(c.stdout, client, r)
	if !r.OK() {
		return errCheckFailed
	}
	return nil
}

// printCheck writes the verdict the way an admin reads it.
func printCheck(w io.Writer, client *apiclient.Client, r apiclient.CheckResult) {
	sg := client.Signer()
	fmt.Fprintf(w, "platform:  %s\n", client.BaseURL())
	fmt.Fprintf(w, "auth:      %s (scheme %s, key %s)\n", sg.Method(), sg.Scheme(), orNone(sg.KeyID()))
	fmt.Fprintf(w, "called:    GET %s\n", r.URL)
	if r.Status != 0 {
		fmt.Fprintf(w, "answer:    %d in %s\n", r.Status, r.Latency.Round(time.Millisecond))
	}
	if c := r.DescribeClock(); c != "" {
		fmt.Fprintf(w, "clock:     platform clock %s\n", c)
	}
	fmt.Fprintf(w, "verdict:   %s\n", strings.ToUpper(string(r.Verdict)))
	fmt.Fprintf(w, "%s\n", r.Summary)
	for i, a := range r.Advice {
		fmt.Fprintf(w, "  %d. %s\n", i+1, a)
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// platformSim runs the emulator standalone.
func (c cli) platformSim(ctx context.Context, args []string) error {
	fs := c.newFlags("platform-sim")
	addr := fs.String("addr", "127.0.0.1:9090", "listen address")
	key := fs.String("api-key", "", "admin credential key (default: random)")
	secret := fs.String("api-secret", "", "admin credential secret (default: random)")
	mkey := fs.String("member-api-key", "", "member (non-admin) credential key (default: random)")
	msecret := fs.String("member-api-secret", "", "member credential secret (default: random)")
	rateLimit := fs.Float64("rate-limit", 0, "requests per second per credential (0 = off)")
	ttl := fs.Duration("token-ttl", platformsim.DefaultTokenTTL, "login token lifetime")
	skew := fs.Duration("skew", platformsim.DefaultSkew, "accepted distance of a request's Date from the platform clock")
	offset := fs.Duration("clock-offset", 0, "move the platform clock (e.g. 10m) to try clock-skew handling")
	schemeHMAC := fs.String("scheme-hmac", platformsim.DefaultSchemeHMAC, "HMAC scheme name")
	schemeSimple := fs.String("scheme-simple", platformsim.DefaultSchemeSimple, "simple scheme name")
	control := fs.Bool("control", false, "expose the JSON control endpoint under /_sim/ (faults, latency, clock, call counts)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *rateLimit < 0 || *ttl <= 0 || *skew <= 0 {
		return usageError("platform-sim: --rate-limit must be >= 0, --token-ttl and --skew > 0")
	}
	admin, member := platformsim.NewCredential(true), platformsim.NewCredential(false)
	for _, kv := range []struct{ dst, src *string }{{&admin.Key, key}, {&admin.Secret, secret}, {&member.Key, mkey}, {&member.Secret, msecret}} {
		if *kv.src != "" {
			*kv.dst = *kv.src
		}
	}
	logger := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sim, err := platformsim.New(platformsim.Config{Credentials: []platformsim.Credential{admin, member}, RateLimit: *rateLimit,
		TokenTTL: *ttl, Skew: *skew, SchemeHMAC: *schemeHMAC, SchemeSimple: *schemeSimple, Control: *control, Logger: logger})
	if err != nil {
		return err
	}
	sim.SetClockOffset(*offset)
	run, err := platformsim.Start(sim, *addr)
	if err != nil {
		return err
	}
	defer run.Close()
	// The credentials are printed once, here, for the developer starting it.
	fmt.Fprintf(c.stdout, "platform emulator at %s (API under %s/api/5)\n", run.URL, run.URL)
	fmt.Fprintf(c.stdout, "admin credential:  key=%s secret=%s\n", admin.Key, admin.Secret)
	fmt.Fprintf(c.stdout, "member credential: key=%s secret=%s (not an Instance admin: 403)\n", member.Key, member.Secret)
	<-ctx.Done()
	return nil
}
