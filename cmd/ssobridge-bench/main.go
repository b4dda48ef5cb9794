// Command ssobridge-bench is the load tool: it load-tests launches against
// an in-process bridge and emulator, or drives a running bridge from
// outside (--target). It is a program of its own so that the bridge's
// binary does not carry it. See docs/performance.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ssobridge/ssobridge/cli"
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
	return env.ExitCode("ssobridge-bench", loadtest.BenchCmd(ctx, env, args))
}
