package commands

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/handlers/console"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/config"
)

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
	// The demo's sample LMS, as serve would start it: a throwaway one on a
	// free port, signing with the demo's kept key.
	cfg, stopLMS, err := app.WithDemos(cfg, env.Modules)
	if err != nil {
		return err
	}
	defer stopLMS()
	conn, report, err := app.CheckPlatform(ctx, cfg, env.Stderr)
	if err != nil {
		return err
	}
	printCheck(env.Stdout, conn, report)
	modulesOK, stored := app.CheckModules(ctx, cfg, env.Modules, env.Stdout)
	checkTrust(env.Stdout, append(app.Sources(cfg, env.Modules), stored...))
	if !report.OK() || !modulesOK {
		return cli.ErrFailed
	}
	return nil
}

// printCheck writes the verdict the way an admin reads it. A check of the
// built-in emulator says so: it proves the bridge's signing, not the
// connection to the real platform.
func printCheck(w io.Writer, conn console.Connection, r console.CheckReport) {
	if conn.Embedded {
		fmt.Fprintf(w, "platform:  a built-in emulator started for this check at %s (platform.base_url is %q), not the one a running demo serves\n", conn.BaseURL, config.Embedded)
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
		verdict += " (a throwaway built-in emulator, not the real platform)"
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

// checkTrust says, for each way in, which accounts it reaches: those of
// the domains it is trusted for, or (open) only the accounts it made or
// linked. Open is no failure: it is the safe default.
func checkTrust(w io.Writer, sources []signin.Source) {
	if len(sources) == 0 {
		return
	}
	fmt.Fprintf(w, "ways in:   who may arrive as whom\n")
	for _, s := range sources {
		reach := "accounts of " + strings.Join(s.EmailDomains, ", ")
		switch {
		case s.Open() && s.Key == "": // registered from the console: its rules came with its registration URL
			reach = "OPEN: only the accounts it made or linked (register it again from a registration URL made with your email domains to let it reach existing accounts)"
		case s.Open():
			reach = "OPEN: only the accounts it made or linked (set " + s.Key + ".email_domains to let it reach existing accounts of your domains)"
		}
		admin := "grants no admin"
		if s.AdminAuthority {
			admin = "grants and removes the admin role"
		}
		fmt.Fprintf(w, "           %s: %s; creates accounts: %t; %s\n", s.Name, reach, s.CreateAccounts, admin)
	}
}
