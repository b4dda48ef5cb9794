package commands

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/app"

	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/handlers"
	"github.com/ssobridge/ssobridge/lti"
	"github.com/ssobridge/ssobridge/signin"
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
	cfg, stopLMS, err := app.WithSampleLMS(cfg)
	if err != nil {
		return err
	}
	defer stopLMS()
	conn, report, err := app.CheckPlatform(ctx, cfg, env.Stderr)
	if err != nil {
		return err
	}
	printCheck(env.Stdout, conn, report)
	modulesOK := app.CheckModules(ctx, cfg, env.Modules, env.Stdout)
	scimOK, ltiOK := true, true
	if cfg.SCIM.Enabled {
		scimOK = checkSCIM(env.Stdout, cfg)
	}
	var registered []lti.Platform
	if cfg.LTI.Enabled() {
		registered = registeredLMSs(ctx, env.Stdout, cfg)
		ltiOK = checkLTI(ctx, env.Stdout, cfg, registered)
	}
	checkTrust(env.Stdout, app.Sources(cfg, env.Modules), registered)
	if !report.OK() || !modulesOK || !scimOK || !ltiOK {
		return cli.ErrFailed
	}
	return nil
}

// checkSCIM says what to enter at the identity provider for SCIM, and
// refuses a base URL that is not https: the IdP would send the bearer
// token in clear (and Entra ID and Okta take only https).
func checkSCIM(w io.Writer, cfg config.Config) bool {
	base := cfg.PublicURL(cfg.Server.Addr) + "/scim/v2"
	fmt.Fprintf(w, "scim:      at the IdP, enter: base URL %s, bearer token: the one in %s (%d token(s))\n",
		base, cmp.Or(cfg.SCIM.TokenFile, config.EnvName("scim.token")), len(cfg.SCIM.Tokens()))
	admins := "none (the IdP grants no admin)"
	if cfg.SCIM.AdminGroup != "" {
		admins = "members of the group " + strconv.Quote(cfg.SCIM.AdminGroup)
	}
	fmt.Fprintf(w, "           partner admins: %s; platform users made ahead: %t\n", admins, cfg.SCIM.ProvisionPlatformUsers)
	switch reach, local := app.Reach(cfg); {
	case !reach:
		fmt.Fprintf(w, "verdict:   SCIM NOT READY\nthe IdP would call %s over plain http, with the token in clear: set server.public_url to the https URL the IdP reaches\n", base)
		return false
	case local:
		fmt.Fprintf(w, "verdict:   SCIM OK (loopback: only an IdP on this machine reaches %s; a real IdP needs server.public_url set to the https URL it reaches)\n", base)
		return true
	}
	fmt.Fprintf(w, "verdict:   SCIM OK\n")
	return true
}

// checkLTI reads the tool's key and each platform's key set as the bridge
// would, and says what to enter in the LMS.
func checkLTI(ctx context.Context, w io.Writer, cfg config.Config, registered []lti.Platform) bool {
	base := cfg.PublicURL(cfg.Server.Addr)
	ok := true
	fmt.Fprintf(w, "lti:       in the LMS, enter: login URL %s%s, redirect URI %s%s, target link URI %s%s, key set URL %s%s\n",
		base, lti.LoginPath, base, lti.LaunchPath, base, lti.LaunchPath, base, lti.JWKSPath)
	if cfg.LTI.KeyFile != "" {
		key, _, err := app.LTIToolKey(ctx, cfg, nil)
		if err != nil {
			fmt.Fprintf(w, "           tool key: WRONG: %v\n", err)
			ok = false
		} else {
			fmt.Fprintf(w, "           tool key: %s (kid %s)\n", cfg.LTI.KeyFile, key.KeyID())
		}
	} else {
		fmt.Fprintf(w, "           tool key: generated on first start and kept in the store, the same on every instance (lti.key_file sets your own)\n")
	}
	for _, p := range append(app.LTIPlatforms(cfg), registered...) {
		tool := lti.New(lti.Config{Platforms: []lti.Platform{p}, UseOnce: checkOnly{}.UseOnce, HTTPClient: cfg.OutboundPolicy().Client(nil)})
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := tool.Refresh(rctx)
		cancel()
		admins := "none"
		if len(p.AdminRoles) > 0 {
			admins = strings.Join(p.AdminRoles, ", ")
		}
		if err != nil {
			fmt.Fprintf(w, "           %s (issuer %s, client %s): key set UNREADABLE: %v\n", p.Name, p.Issuer, p.ClientID, err)
			ok = false
			continue
		}
		fmt.Fprintf(w, "           %s (issuer %s, client %s, %d deployment(s)): key set read; partner admins: %s; accounts created: %t\n",
			p.Name, p.Issuer, p.ClientID, len(p.DeploymentIDs), admins, p.CreateAccounts)
		if p.TokenURL != "" {
			var key *lti.ToolKey
			if cfg.LTI.KeyFile != "" {
				if k, _, err := app.LTIToolKey(ctx, cfg, nil); err == nil {
					key = &k
				}
			}
			tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			said, err := lti.CheckTokenEndpoint(tctx, cfg.OutboundPolicy().Client(nil), p, key)
			cancel()
			if err != nil {
				fmt.Fprintf(w, "           %s: token endpoint %s UNUSABLE: %v (course rosters are not provisioned ahead; launches work)\n", p.Name, p.TokenURL, err)
			} else {
				fmt.Fprintf(w, "           %s: token endpoint %s: %s; rosters are provisioned at an instructor's launch\n", p.Name, p.TokenURL, said)
			}
		}
	}
	reach, note := app.LTIReach(cfg)
	switch {
	case !ok:
		fmt.Fprintf(w, "verdict:   LTI NOT READY\n")
		return false
	case !reach:
		fmt.Fprintf(w, "verdict:   LTI NOT READY\n%s\n", note)
		return false
	case note != "":
		fmt.Fprintf(w, "verdict:   LTI OK (%s)\n", note)
		return true
	}
	fmt.Fprintf(w, "verdict:   LTI OK (https)\n")
	return true
}

// registeredLMSs are the LMSs registered from the console (Dynamic
// Registration), kept in the store every instance reads: check reads
// them as it reads the configured ones. A SQLite store not made yet has
// none; a store that cannot be read is said and checked no further.
func registeredLMSs(ctx context.Context, w io.Writer, cfg config.Config) []lti.Platform {
	if cfg.Store.Driver != "postgres" {
		if _, err := os.Stat(cfg.Store.DSN); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	st, err := app.OpenStore(ctx, cfg, nil)
	if err != nil {
		fmt.Fprintf(w, "lti:       the LMSs registered from the console are not checked: the store cannot be read: %v\n", err)
		return nil
	}
	defer st.Close()
	list, err := app.RegisteredLTIPlatforms(ctx, st)
	if err != nil {
		fmt.Fprintf(w, "lti:       the LMSs registered from the console are not checked: %v\n", err)
		return nil
	}
	return list
}

// checkOnly is the single-use store of a check, which signs no one in.
type checkOnly struct{}

func (checkOnly) UseOnce(context.Context, string, string, time.Time) error {
	return errors.New("check signs no one in")
}

// printCheck writes the verdict the way an admin reads it. A check of the
// built-in emulator says so: it proves the bridge's signing, not the
// connection to the real platform.
func printCheck(w io.Writer, conn handlers.Connection, r handlers.CheckReport) {
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
func checkTrust(w io.Writer, sources []signin.Source, registered []lti.Platform) {
	for _, p := range registered {
		sources = append(sources, signin.Source{Name: "LTI: " + p.Name + " (registered from the console)", EmailDomains: p.EmailDomains, CreateAccounts: p.CreateAccounts})
	}
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
