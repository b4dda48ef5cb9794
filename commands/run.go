// Package commands is ssobridge's command line: Run dispatches, and each
// sub-command (serve, user add, user invite, bans list, bans revoke,
// check, provision, platform-sim, and those modules add: the portal's
// portal-link) parses its flags, loads the configuration and uses what
// app wires.
package commands

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/store"
)

const usage = `ssobridge: single sign-on from a partner's portal into the video platform's editor.

usage: ssobridge [command] [flags]

commands:
  serve          serve the bridge (the default command)
  user add       add a local account (the password is asked for, or read from stdin)
  user invite    print a one-time set-password link for an account (72 h)
{{modules}}  bans list      list the sign-in bans in force
  bans revoke    end a sign-in ban on an email (--email) or a client IP (--ip)
  check          diagnose the connection to the platform (exit 1 unless it works)
  provision      create platform users ahead of first launches (--csv FILE or --all)
  store backup   write a consistent copy of the SQLite store to a new file, while it runs
  platform-sim   run the platform emulator on its own
  version        print the version, commit and build time
  help           print this help

configuration: --config FILE, else ./config.yaml, else the built-in demo (embedded
platform emulator, SQLite in ./data). Every key can also be set in the environment
as SSOBRIDGE_<KEY> with _ for . (platform.api_secret: SSOBRIDGE_PLATFORM_API_SECRET);
the keys are listed in docs/configuration.md. The load tool is a program of its own:
go run ./cmd/ssobridge-bench --help.

exit codes: 0 done, 1 failed, 2 bad command line or input (nothing changed).
Run 'ssobridge <command> --help' for a command's flags.
`

// Run dispatches a command line and returns the exit code: 0 done, 1
// failed, 2 bad command line or input (nothing changed).
func Run(ctx context.Context, args []string, env cli.Env) int {
	if env.Modules == nil {
		env.Modules = app.Modules()
	}
	cmd := "serve"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || isHelpOrVersion(args[0])) {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = ServeCmd(ctx, env, args)
	case "user":
		switch {
		case len(args) > 0 && args[0] == "add":
			err = UserAddCmd(ctx, env, args[1:])
		case len(args) > 0 && args[0] == "invite":
			err = UserInviteCmd(ctx, env, args[1:])
		case len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
			if err = UserAddCmd(ctx, env, []string{"--help"}); errors.Is(err, flag.ErrHelp) {
				fmt.Fprintln(env.Stdout)
				err = UserInviteCmd(ctx, env, []string{"--help"})
			}
		default:
			err = cli.UsageError("user: the sub-commands are 'user add' and 'user invite' (see 'ssobridge user --help')")
		}
	case "bans":
		switch sub, rest := first(args); sub {
		case "list":
			err = BansListCmd(ctx, env, rest)
		case "revoke":
			err = BansRevokeCmd(ctx, env, rest)
		case "-h", "--help", "-help":
			if err = BansListCmd(ctx, env, []string{"--help"}); errors.Is(err, flag.ErrHelp) {
				fmt.Fprintln(env.Stdout)
				err = BansRevokeCmd(ctx, env, []string{"--help"})
			}
		default:
			err = cli.UsageError("bans: the sub-commands are 'bans list' and 'bans revoke'")
		}
	case "store":
		switch sub, rest := first(args); sub {
		case "backup":
			err = StoreBackupCmd(ctx, env, rest)
		case "-h", "--help", "-help":
			err = StoreBackupCmd(ctx, env, []string{"--help"})
		default:
			err = cli.UsageError("store: the sub-command is 'store backup FILE' (see 'ssobridge store --help')")
		}
	case "check":
		err = CheckCmd(ctx, env, args)
	case "provision":
		err = ProvisionCmd(ctx, env, args)
	case "platform-sim":
		err = PlatformSimCmd(ctx, env, args)
	case "bench":
		err = cli.UsageError("bench is a program of its own, not part of the bridge: go run ./cmd/ssobridge-bench (see docs/performance.md)")
	case "help", "-h", "--help", "-help":
		fmt.Fprint(env.Stdout, usageOf(env))
		return 0
	case "version", "--version", "-version":
		fmt.Fprintln(env.Stdout, cli.Version())
		return 0
	default:
		err = unknownCommand(cmd, env)
		for _, mc := range env.ModuleCommands() {
			if mc.Name == cmd {
				err = env.RunModuleCommand(ctx, mc, args)
			}
		}
	}
	return env.ExitCode("ssobridge", err)
}

// usageOf is the help with the commands the modules add, in the list.
func usageOf(env cli.Env) string {
	var lines strings.Builder
	for _, mc := range env.ModuleCommands() {
		fmt.Fprintf(&lines, "  %-14s %s\n", mc.Name, mc.Line)
	}
	return strings.Replace(usage, "{{modules}}", lines.String(), 1)
}

// unknownCommand names the nearest command Run knows, if one is near.
func unknownCommand(cmd string, env cli.Env) error {
	msg := fmt.Sprintf("unknown command %q", cmd)
	names := []string{"serve", "user", "bans", "check", "provision", "store", "platform-sim", "version", "help"}
	for _, mc := range env.ModuleCommands() {
		names = append(names, mc.Name)
	}
	if near := config.Nearest(cmd, names); near != "" {
		msg += "; did you mean '" + near + "'?"
	}
	return cli.UsageError(msg + " (run 'ssobridge help' for the commands)")
}

// isHelpOrVersion: these flags name a command of their own; any other
// leading flag is serve's.
func isHelpOrVersion(arg string) bool {
	switch arg {
	case "-h", "--help", "-help", "--version", "-version":
		return true
	}
	return false
}

// first splits off a sub-command.
func first(args []string) (string, []string) {
	if len(args) == 0 {
		return "", nil
	}
	return args[0], args[1:]
}

// openStore loads the configuration and opens its store, for a command.
func openStore(ctx context.Context, env cli.Env, cfgPath string) (config.Config, store.Store, error) {
	cfg, err := env.LoadConfig(cfgPath)
	if err != nil {
		return config.Config{}, nil, err
	}
	st, err := app.OpenStore(ctx, cfg, nil)
	return cfg, st, err
}
