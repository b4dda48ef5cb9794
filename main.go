// Command ssobridge signs a partner portal's users in to the video
// platform's editor (README.md). This file only dispatches: each
// sub-command lives in the package that owns it (app, loadtest), and the
// wiring in app.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/cli"
)

// defaultConfig is config.yaml, used when no file is given and none is in
// the working directory (a binary run elsewhere, the container).
//
//go:embed config.yaml
var defaultConfig []byte

const usage = `ssobridge: single sign-on from a partner's portal into the video platform's editor.

usage: ssobridge [command] [flags]

commands:
  serve          serve the bridge (the default command)
  user add       add a local account (the password is asked for, or read from stdin)
  user invite    print a one-time set-password link for an account (72 h)
  portal-link    print a signed portal handoff URL (/sso/jwt) for trying it out
  bans list      list the sign-in bans in force
  bans revoke    end a sign-in ban on an email (--email) or a client IP (--ip)
  check          diagnose the connection to the platform (exit 1 unless it works)
  platform-sim   run the platform emulator on its own
  version        print the version and VCS revision
  help           print this help

configuration: --config FILE, else ./config.yaml, else the built-in demo (embedded
platform emulator, SQLite in ./data). Every key can also be set in the environment
as SSOBRIDGE_<KEY> with _ for . (platform.api_secret: SSOBRIDGE_PLATFORM_API_SECRET);
the keys are listed in README.md. The load tool is a program of its own:
go run ./cmd/ssobridge-bench --help.

exit codes: 0 done, 1 failed, 2 bad command line or input (nothing changed).
Run 'ssobridge <command> --help' for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ(), DefaultConfig: defaultConfig}
	os.Exit(run(ctx, os.Args[1:], env))
}

// run dispatches a command line and returns the exit code: 0 done, 1
// failed, 2 bad command line or input (nothing changed).
func run(ctx context.Context, args []string, env cli.Env) int {
	cmd := "serve"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || isHelpOrVersion(args[0])) {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = app.ServeCmd(ctx, env, args)
	case "user":
		switch {
		case len(args) > 0 && args[0] == "add":
			err = app.UserAddCmd(ctx, env, args[1:])
		case len(args) > 0 && args[0] == "invite":
			err = app.UserInviteCmd(ctx, env, args[1:])
		case len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
			if err = app.UserAddCmd(ctx, env, []string{"--help"}); errors.Is(err, flag.ErrHelp) {
				fmt.Fprintln(env.Stdout)
				err = app.UserInviteCmd(ctx, env, []string{"--help"})
			}
		default:
			err = cli.UsageError("user: the sub-commands are 'user add' and 'user invite' (see 'ssobridge user --help')")
		}
	case "bans":
		switch sub, rest := first(args); sub {
		case "list":
			err = app.BansListCmd(ctx, env, rest)
		case "revoke":
			err = app.BansRevokeCmd(ctx, env, rest)
		case "-h", "--help", "-help":
			if err = app.BansListCmd(ctx, env, []string{"--help"}); errors.Is(err, flag.ErrHelp) {
				fmt.Fprintln(env.Stdout)
				err = app.BansRevokeCmd(ctx, env, []string{"--help"})
			}
		default:
			err = cli.UsageError("bans: the sub-commands are 'bans list' and 'bans revoke'")
		}
	case "portal-link":
		err = app.PortalLinkCmd(ctx, env, args)
	case "check":
		err = app.CheckCmd(ctx, env, args)
	case "platform-sim":
		err = app.PlatformSimCmd(ctx, env, args)
	case "bench":
		err = cli.UsageError("bench is a program of its own, not part of the bridge: go run ./cmd/ssobridge-bench (see docs/performance.md)")
	case "help", "-h", "--help", "-help":
		fmt.Fprint(env.Stdout, usage)
		return 0
	case "version", "--version", "-version":
		fmt.Fprintln(env.Stdout, cli.Version())
		return 0
	default:
		err = cli.UsageError(fmt.Sprintf("unknown command %q", cmd))
	}
	return env.ExitCode("ssobridge", err, "(run 'ssobridge help' for the commands)\n")
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
