// Command ssobridge signs a partner portal's users in to the video
// platform's editor. See README.md.
//
//	ssobridge [serve] [--config FILE]
//	ssobridge user add --email E --first-name F --last-name L [--admin] [--config FILE]  (password on stdin)
//	ssobridge check [--config FILE]
//	ssobridge platform-sim [--addr A] [...]
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ssobridge/ssobridge/config"
)

// defaultConfig is config.yaml, used when no file is given and none is in
// the working directory (a binary run elsewhere, the container).
//
//go:embed config.yaml
var defaultConfig []byte

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ()))
}

// cli is one invocation's streams and environment.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	environ        []string
}

const usage = `usage:
  ssobridge [serve] [--config FILE]          serve the bridge (default: ./config.yaml, else the embedded demo)
  ssobridge user add --email E --first-name F --last-name L [--admin] [--config FILE]
                                             add a local account; the password is read from stdin
  ssobridge check [--config FILE]            diagnose the platform connection (non-zero exit on failure)
  ssobridge platform-sim [--addr A] ...      run the platform emulator (see --help)
  ssobridge bench [--accounts N] [--concurrency C] [--duration D] [--latency L]
                                             load-test launches against an in-process emulator
`

// run dispatches a command line and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	c := cli{stdin: stdin, stdout: stdout, stderr: stderr, environ: environ}
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = c.serve(ctx, args)
	case "user":
		if len(args) == 0 || args[0] != "add" {
			err = usageError("user: the only sub-command is 'user add'")
		} else {
			err = c.userAdd(ctx, args[1:])
		}
	case "check":
		err = c.check(ctx, args)
	case "platform-sim":
		err = c.platformSim(ctx, args)
	case "bench":
		err = c.bench(ctx, args)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = usageError(fmt.Sprintf("unknown command %q", cmd))
	}
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "ssobridge: %s\n\n%s", ue, usage)
		return 2
	case errors.Is(err, errCheckFailed):
		return 1
	default:
		fmt.Fprintf(stderr, "ssobridge: %v\n", err)
		return 1
	}
}

// usageError is a wrong command line.
type usageError string

func (e usageError) Error() string { return string(e) }

// newFlags returns a flag set that reports errors instead of exiting.
func (c cli) newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError(err.Error())
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("%s: unexpected argument %q", fs.Name(), fs.Arg(0)))
	}
	return nil
}

// loadConfig reads --config, else ./config.yaml, else the embedded demo,
// then the SSOBRIDGE_* environment.
func (c cli) loadConfig(path string) (config.Config, error) {
	if path != "" {
		return config.Load(path, c.environ)
	}
	if _, err := os.Stat("config.yaml"); err == nil {
		return config.Load("config.yaml", c.environ)
	}
	return config.Parse(defaultConfig, c.environ)
}
