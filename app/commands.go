package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/handlers"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/platformsim"
)

// ServeCmd is `ssobridge [serve] [--config FILE]`: it runs the bridge
// until ctx ends.
func ServeCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "serve", Synopsis: "[--config FILE]",
		Summary: "Serve the bridge until interrupted. Without --config it reads ./config.yaml, else the built-in demo\n(embedded platform emulator, SQLite in ./data, a printed demo login)."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "configuration file (default ./config.yaml, else the embedded demo)")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	cfg, err := env.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	a, err := New(ctx, cfg, Options{LogOutput: env.Stderr})
	if err != nil {
		return err
	}
	defer a.Close()
	if limit, set := LimitMemory(cfg.Password); set {
		a.Logger().Info("memory limit set for password hashing", "limit_mib", limit>>20, "note", "set GOMEMLIMIT to choose another")
	}
	if RaiseGCPercent() {
		a.Logger().Info("garbage collection set for serving", "gogc", servingGCPercent, "note", "set GOGC to choose another")
	}
	ln, err := net.Listen("tcp", cfg.Server.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (server.addr): %w", cfg.Server.Addr, err)
	}
	return a.Serve(ctx, ln, env.Stdout)
}

// UserAddCmd is `ssobridge user add`: it creates a local account. At a
// terminal it asks for the password twice without echo; otherwise the
// password is the first line of stdin.
func UserAddCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "user add", Synopsis: "--email E --first-name F --last-name L [--admin] [--config FILE]",
		Summary: "Add a local account. At a terminal the password is asked for twice without echo; otherwise it is\nthe first line of stdin. Bad input exits 2 and writes nothing."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "configuration file")
	email := fs.String("email", "", "the account's email (required)")
	first := fs.String("first-name", "", "first name (required)")
	last := fs.String("last-name", "", "last name (required)")
	admin := fs.Bool("admin", false, "make the account a partner admin")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	var missing []string
	for _, f := range []struct{ flag, v string }{{"--email", *email}, {"--first-name", *first}, {"--last-name", *last}} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.flag)
		}
	}
	if len(missing) > 0 {
		return cli.UsageError("user add: " + strings.Join(missing, ", ") + " required (see 'ssobridge user add --help')")
	}
	// Check everything before touching the store, so bad input writes nothing.
	n := accounts.NewAccount{Email: *email, FirstName: *first, LastName: *last, PasswordHash: "pending", Admin: *admin}
	if err := n.Normalize(); err != nil {
		return invalidInput("", err)
	}
	password, err := readPassword(env)
	if err != nil {
		return err
	}
	if err := accounts.CheckPassword(password); err != nil {
		return invalidInput("", err)
	}
	cfg, err := env.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	store, err := OpenStore(ctx, cfg, nil)
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
			return cli.UsageError(fmt.Sprintf("an account with email %s exists already: nothing was written", n.Email))
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
	fmt.Fprintf(env.Stdout, "created %s %s (id %d)\n", role, acct.Email, acct.ID)
	return nil
}

// invalidInput is bad input (an accounts.ErrInvalid) as a command's usage
// error, without the error's class; prefix names the command and flag.
func invalidInput(prefix string, err error) error {
	return cli.UsageError(prefix + strings.TrimPrefix(err.Error(), accounts.ErrInvalid.Error()+": "))
}

// readPassword asks twice, without echo, when stdin is a terminal;
// otherwise it reads the first line (a pipe or a file).
func readPassword(env cli.Env) (string, error) {
	if f, ok := env.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return promptPassword(f, env.Stderr)
	}
	line, err := bufio.NewReader(io.LimitReader(env.Stdin, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", cli.UsageError("empty password: type it at the prompt, or pipe it on stdin, e.g. printf '%s\\n' \"$PW\" | ssobridge user add ...")
	}
	return line, nil
}

// promptPassword reads the password twice from the terminal tty, echo off.
func promptPassword(tty *os.File, prompts io.Writer) (string, error) {
	read := func(prompt string) (string, error) {
		fmt.Fprint(prompts, prompt)
		b, err := term.ReadPassword(int(tty.Fd()))
		fmt.Fprintln(prompts) // the Enter the terminal did not echo
		if err != nil {
			return "", fmt.Errorf("read password from the terminal: %w", err)
		}
		return string(b), nil
	}
	first, err := read("Password: ")
	if err != nil {
		return "", err
	}
	if first == "" {
		return "", cli.UsageError("empty password: nothing was written")
	}
	again, err := read("Repeat the password: ")
	if err != nil {
		return "", err
	}
	if again != first {
		return "", cli.UsageError("the two passwords differ: nothing was written")
	}
	return first, nil
}

// BansListCmd is `ssobridge bans list`: the sign-in bans in force, on
// every instance sharing the store.
func BansListCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "bans list", Synopsis: "[--config FILE]",
		Summary: "List the sign-in bans in force (by email and by client IP), with when each ends."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "configuration file")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	store, err := openStore(ctx, env, *cfgPath)
	if err != nil {
		return err
	}
	defer store.Close()
	now := time.Now()
	bans, err := store.ListBans(ctx, now)
	if err != nil {
		return err
	}
	if len(bans) == 0 {
		fmt.Fprintln(env.Stdout, "no sign-in bans in force")
		return nil
	}
	fmt.Fprintf(env.Stdout, "%-6s %-40s %-20s %s\n", "KIND", "BANNED", "UNTIL (UTC)", "LEFT")
	for _, b := range bans {
		fmt.Fprintf(env.Stdout, "%-6s %-40s %-20s %s\n", b.Kind, b.Value, b.Until.UTC().Format("2006-01-02 15:04:05"), b.Until.Sub(now).Round(time.Second))
	}
	return nil
}

// BansRevokeCmd is `ssobridge bans revoke (--email E | --ip IP)`: it ends
// the ban and forgets the failed sign-ins counted for that email or IP.
func BansRevokeCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "bans revoke", Synopsis: "(--email E | --ip IP) [--config FILE]",
		Summary: "End the sign-in ban on an email or a client IP, and forget the failed sign-ins counted for it."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "configuration file")
	email := fs.String("email", "", "the banned email")
	ip := fs.String("ip", "", "the banned client IP")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	*email, *ip = strings.TrimSpace(*email), strings.TrimSpace(*ip)
	if (*email == "") == (*ip == "") {
		return cli.UsageError("bans revoke: give either --email E or --ip IP (see 'ssobridge bans revoke --help')")
	}
	what, value := "email", mailaddr.Key(*email)
	if *ip != "" {
		if net.ParseIP(*ip) == nil {
			return cli.UsageError(fmt.Sprintf("bans revoke: %q is not an IP address", *ip))
		}
		what, value = "IP", *ip
	}
	store, err := openStore(ctx, env, *cfgPath)
	if err != nil {
		return err
	}
	defer store.Close()
	n, err := store.LiftBans(ctx, *email, *ip)
	if err != nil {
		return err
	}
	if err := store.Record(ctx, accounts.Event{Kind: accounts.KindAdmin, Outcome: "ok", Email: *email,
		Detail: fmt.Sprintf("bans revoke from the command line: %s %s (%d lifted)", what, value, n)}); err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintf(env.Stdout, "no ban on %s %s; its counted failed sign-ins are cleared\n", what, value)
	} else {
		fmt.Fprintf(env.Stdout, "lifted the ban on %s %s; its counted failed sign-ins are cleared\n", what, value)
	}
	return nil
}

// openStore opens the configured store for a command.
func openStore(ctx context.Context, env cli.Env, cfgPath string) (accounts.Store, error) {
	cfg, err := env.LoadConfig(cfgPath)
	if err != nil {
		return nil, err
	}
	return OpenStore(ctx, cfg, nil)
}

// CheckCmd is `ssobridge check`: it diagnoses the platform connection,
// prints the verdict and what to do, and fails (cli.ErrFailed) unless OK.
func CheckCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "check", Synopsis: "[--config FILE]",
		Summary: "Make one signed call to the platform and say whether the connection works and, if not, what to\nchange. Exits 1 unless it works."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "configuration file")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	cfg, err := env.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	client, sim, closeFn, err := connectPlatform(cfg, newLogger(cfg.Log, env.Stderr), nil, nil)
	if err != nil {
		return err
	}
	defer closeFn()
	c := console{client: client, embedded: sim != nil}
	report := c.Check(ctx)
	printCheck(env.Stdout, c.Connection(), report)
	if !report.OK() {
		return cli.ErrFailed
	}
	return nil
}

// printCheck writes the verdict the way an admin reads it. A check of the
// built-in emulator says so: it proves the bridge's signing, not the
// connection to the real platform.
func printCheck(w io.Writer, conn handlers.Connection, r handlers.CheckReport) {
	if conn.Embedded {
		fmt.Fprintf(w, "platform:  the built-in emulator at %s (platform.base_url is %q)\n", conn.BaseURL, config.Embedded)
	} else {
		fmt.Fprintf(w, "platform:  %s\n", conn.BaseURL)
	}
	key := conn.KeyID
	if key == "" {
		key = "(none)"
	}
	fmt.Fprintf(w, "auth:      %s (scheme %s, key %s)\n", conn.Method, conn.Scheme, key)
	fmt.Fprintf(w, "called:    GET %s\n", r.URL)
	if r.Status != 0 {
		fmt.Fprintf(w, "answer:    %d in %s\n", r.Status, r.Latency.Round(time.Millisecond))
	}
	if r.Clock != "" {
		fmt.Fprintf(w, "clock:     platform clock %s\n", r.Clock)
	}
	verdict := strings.ToUpper(r.Verdict)
	if conn.Embedded {
		verdict += " (the built-in emulator, not the real platform)"
	}
	fmt.Fprintf(w, "verdict:   %s\n", verdict)
	fmt.Fprintf(w, "%s\n", r.Summary)
	for i, a := range r.Advice {
		fmt.Fprintf(w, "  %d. %s\n", i+1, a)
	}
	if conn.Embedded {
		fmt.Fprintf(w, "To check the real platform, set platform.base_url (%s), platform.api_key (%s) and the secret (%s), then run ssobridge check again.\n",
			config.EnvName("platform.base_url"), config.EnvName("platform.api_key"), config.EnvName("platform.api_secret"))
	}
}

// PlatformSimCmd is `ssobridge platform-sim`: the emulator standalone,
// until ctx ends.
func PlatformSimCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "platform-sim", Synopsis: "[--addr A] [flags]",
		Summary: "Run the platform emulator on its own (for developing against a running bridge); it prints its\ncredentials and runs until interrupted."}
	fs := env.Flags(cmd)
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
	latency := fs.Duration("latency", 0, "delay every answer by this much (e.g. 20ms, a platform far away)")
	racy := fs.Bool("racy-create", false, "create users as a platform whose duplicate check races: look up, pause 50 ms, insert without a unique check")
	shapesFile := fs.String("shapes", "", "answer in these shapes: a YAML file of the platform.shapes keys (at its top level or under platform.shapes); docs/platform-shapes.md")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	if *rateLimit < 0 || *ttl <= 0 || *skew <= 0 || *latency < 0 || *latency > time.Minute {
		return cli.UsageError("platform-sim: --rate-limit must be >= 0, --token-ttl and --skew > 0, --latency 0..1m")
	}
	admin, member := platformsim.NewCredential(true), platformsim.NewCredential(false)
	for _, kv := range []struct{ dst, src *string }{{&admin.Key, key}, {&admin.Secret, secret}, {&member.Key, mkey}, {&member.Secret, msecret}} {
		if *kv.src != "" {
			*kv.dst = *kv.src
		}
	}
	var shapes platformsim.Shapes
	if *shapesFile != "" {
		var err error
		if shapes, err = platformsim.LoadShapes(*shapesFile); err != nil {
			return cli.UsageError("platform-sim: --shapes: " + err.Error())
		}
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sim, err := platformsim.New(platformsim.Config{Credentials: []platformsim.Credential{admin, member}, RateLimit: *rateLimit,
		TokenTTL: *ttl, Skew: *skew, SchemeHMAC: *schemeHMAC, SchemeSimple: *schemeSimple, Control: *control, RacyCreate: *racy, Logger: logger,
		Shapes: shapes})
	if err != nil {
		return err
	}
	sim.SetClockOffset(*offset)
	sim.SetLatency("", *latency)
	run, err := platformsim.Start(sim, *addr)
	if err != nil {
		return err
	}
	defer run.Close()
	// The credentials are printed once, here, for the developer starting it.
	fmt.Fprintf(env.Stdout, "platform emulator at %s (API under %s/api/5)\n", run.URL, run.URL)
	fmt.Fprintf(env.Stdout, "admin credential:  key=%s secret=%s\n", admin.Key, admin.Secret)
	fmt.Fprintf(env.Stdout, "member credential: key=%s secret=%s (not an Instance admin: 403)\n", member.Key, member.Secret)
	<-ctx.Done()
	return nil
}
