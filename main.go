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
	"github.com/ssobridge/ssobridge/loadtest"
)

// defaultConfig is config.yaml, used when no file is given and none is in
// the working directory (a binary run elsewhere, the container).
//
//go:embed config.yaml
var defaultConfig []byte

const usage = `usage:
  ssobridge [serve] [--config FILE]          serve the bridge (default: ./config.yaml, else the embedded demo)
  ssobridge user add --email E --first-name F --last-name L [--admin] [--config FILE]
                                             add a local account; the password is read from stdin
  ssobridge check [--config FILE]            diagnose the platform connection (non-zero exit on failure)
  ssobridge platform-sim [--addr A] ...      run the platform emulator (see --help)
  ssobridge bench [--accounts N] [--concurrency C] [--duration D] [--latency L] [--rate R]
                                             load-test launches against an in-process emulator
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
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = app.ServeCmd(ctx, env, args)
	case "user":
		if len(args) == 0 || args[0] != "add" {
			err = cli.UsageError("user: the only sub-command is 'user add'")
		} else {
			err = app.UserAddCmd(ctx, env, args[1:])
		}
	case "check":
		err = app.CheckCmd(ctx, env, args)
	case "platform-sim":
		err = app.PlatformSimCmd(ctx, env, args)
	case "bench":
		err = loadtest.BenchCmd(ctx, env, args)
	case "help", "-h", "--help":
		fmt.Fprint(env.Stdout, usage)
		return 0
	default:
		err = cli.UsageError(fmt.Sprintf("unknown command %q", cmd))
	}
	var ue cli.UsageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "ssobridge: %s\n\n%s", ue, usage)
		return 2
	case errors.Is(err, cli.ErrFailed):
		return 1 // the command printed its verdict
	default:
		fmt.Fprintf(env.Stderr, "ssobridge: %v\n", err)
		return 1
	}
}
