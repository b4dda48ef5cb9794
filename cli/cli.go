// Package cli holds what every sub-command shares: the invocation's
// streams and environment, usage errors, flag parsing and loading the
// configuration. main dispatches; the packages that own a command (app,
// loadtest) implement it with these.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ssobridge/ssobridge/config"
)

// Env is one invocation's streams and environment.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Environ        []string // os.Environ form
	// DefaultConfig is the embedded config.yaml, used when no file is
	// named and none is in the working directory.
	DefaultConfig []byte
}

// UsageError is a wrong command line or bad input: main prints it with the
// usage and exits 2, having changed nothing.
type UsageError string

func (e UsageError) Error() string { return string(e) }

// ErrFailed makes a command exit 1 after it has printed its own verdict
// (ssobridge check).
var ErrFailed = errors.New("command failed")

// Flags returns a flag set that reports errors instead of exiting.
func (e Env) Flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	return fs
}

// Parse parses args into fs: a bad flag or a stray argument is a
// UsageError; --help is flag.ErrHelp.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return UsageError(err.Error())
	}
	if fs.NArg() > 0 {
		return UsageError(fmt.Sprintf("%s: unexpected argument %q", fs.Name(), fs.Arg(0)))
	}
	return nil
}

// LoadConfig reads path, else ./config.yaml, else the embedded default,
// then the SSOBRIDGE_* environment.
func (e Env) LoadConfig(path string) (config.Config, error) {
	if path != "" {
		return config.Load(path, e.Environ)
	}
	if _, err := os.Stat("config.yaml"); err == nil {
		return config.Load("config.yaml", e.Environ)
	}
	return config.Parse(e.DefaultConfig, e.Environ)
}
