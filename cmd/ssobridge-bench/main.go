// Command ssobridge-bench is the load tool: it load-tests launches against
// an in-process bridge and emulator, or drives a running bridge from
// outside (--target). It is a program of its own so that the bridge's
// binary does not carry it. See docs/performance.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/loadtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ()}
	os.Exit(run(ctx, os.Args[1:], env))
}

// run runs the load tool and returns the exit code: 0 done, 1 failed, 2
// bad command line or configuration (nothing changed).
func run(ctx context.Context, args []string, env cli.Env) int {
	err := loadtest.BenchCmd(ctx, env, args)
	var ue cli.UsageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "ssobridge-bench: %s\n", ue)
		return 2
	case errors.Is(err, config.ErrInvalid):
		fmt.Fprintf(env.Stderr, "ssobridge-bench: %v\n", err)
		return 2
	default:
		fmt.Fprintf(env.Stderr, "ssobridge-bench: %v\n", err)
		return 1
	}
}
