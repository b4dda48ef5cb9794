// Package cli holds what every command shares: the invocation's streams
// and environment, usage errors, flag parsing, exit codes and loading the
// configuration. The bridge's sub-commands (package commands) and the load
// tool (cmd/ssobridge-bench) are written with it.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/internal/version"
	"github.com/ssobridge/ssobridge/wayin"
)

// Env is one invocation's streams and environment.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Environ        []string // os.Environ form
	// DefaultConfig is the embedded config.yaml, used when no file is
	// named and none is in the working directory.
	DefaultConfig []byte
	// Modules are the ways in registered as modules; the configuration
	// is read with their sections.
	Modules []wayin.Module
}

// ModuleCommands are the sub-commands e's modules add
// (wayin.Commander), in their order.
func (e Env) ModuleCommands() []wayin.Command {
	var out []wayin.Command
	for _, m := range e.Modules {
		if c, ok := m.(wayin.Commander); ok {
			out = append(out, c.Commands()...)
		}
	}
	return out
}

// RunModuleCommand runs a module's sub-command with e.
func (e Env) RunModuleCommand(ctx context.Context, c wayin.Command, args []string) error {
	return c.Run(ctx, moduleLine{env: e, cmd: Command{Name: c.Name, Synopsis: c.Synopsis, Summary: c.Summary}}, args)
}

// moduleLine lends a module's sub-command the invocation (wayin.CommandLine).
type moduleLine struct {
	env Env
	cmd Command
}

func (m moduleLine) Stdout() io.Writer       { return m.env.Stdout }
func (m moduleLine) Stderr() io.Writer       { return m.env.Stderr }
func (m moduleLine) Flags() *flag.FlagSet    { return m.env.Flags(m.cmd) }
func (m moduleLine) BadInput(s string) error { return UsageError(s) }

func (m moduleLine) Parse(fs *flag.FlagSet, args []string) error { return m.env.Parse(fs, m.cmd, args) }

func (m moduleLine) LoadConfig(path string) (config.Config, error) { return m.env.LoadConfig(path) }

// UsageError is a wrong command line or bad input: main prints it with the
// usage and exits 2, having changed nothing.
type UsageError string

func (e UsageError) Error() string { return string(e) }

// ErrFailed makes a command exit 1 after it has printed its own verdict
// (ssobridge check).
var ErrFailed = errors.New("command failed")

// Command describes a sub-command for its --help.
type Command struct {
	Name     string // as typed: "user add"
	Synopsis string // the flags in short, after the name
	Summary  string // what it does, one or two sentences
	// Program is the command as typed when it is a program of its own
	// (ssobridge-bench); empty: "ssobridge" and Name.
	Program string
}

// invocation is how the command is typed.
func (c Command) invocation() string {
	if c.Program != "" {
		return c.Program
	}
	return "ssobridge " + c.Name
}

// Flags returns a flag set for c that reports errors instead of printing
// or exiting; Parse prints the help when asked.
func (e Env) Flags(c Command) *flag.FlagSet {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// Parse parses args into fs. --help (or -h) prints c's help to stdout and
// returns flag.ErrHelp; a bad flag or a stray argument is a UsageError
// that says where the help is.
func (e Env) Parse(fs *flag.FlagSet, c Command, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			e.PrintHelp(fs, c)
			return err
		}
		if name, ok := unknownFlag(fs, args); ok {
			var names []string
			fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
			if near := config.Nearest(name, names); near != "" {
				return UsageError(fmt.Sprintf("%s: no flag --%s; did you mean --%s? (see '%s --help')", c.Name, name, near, c.invocation()))
			}
			return UsageError(fmt.Sprintf("%s: no flag --%s (see '%s --help')", c.Name, name, c.invocation()))
		}
		return UsageError(fmt.Sprintf("%s: %v (see '%s --help')", c.Name, err, c.invocation()))
	}
	if fs.NArg() > 0 {
		return UsageError(fmt.Sprintf("%s: unexpected argument %q (see '%s --help')", c.Name, fs.Arg(0), c.invocation()))
	}
	return nil
}

// PrintHelp writes c's usage, summary and flags to stdout.
func (e Env) PrintHelp(fs *flag.FlagSet, c Command) {
	fmt.Fprintf(e.Stdout, "usage: %s %s\n\n%s\n", c.invocation(), c.Synopsis, c.Summary)
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	if has {
		fmt.Fprint(e.Stdout, "\nflags:\n")
		fs.SetOutput(e.Stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// Version is what `ssobridge version` prints: the version, commit and
// build time (package version).
func Version() string { return version.Get().String() }

// LoadConfig reads path, else ./config.yaml, else the embedded default,
// then the SSOBRIDGE_* environment.
func (e Env) LoadConfig(path string) (config.Config, error) {
	sections := wayin.Sections(e.Modules)
	if path != "" {
		return config.Load(path, e.Environ, sections...)
	}
	if _, err := os.Stat("config.yaml"); err == nil {
		return config.Load("config.yaml", e.Environ, sections...)
	}
	return config.Parse(e.DefaultConfig, e.Environ, sections...)
}

// ExitCode prints err as program's message, on e's standard error, and
// returns the exit code: 0 done (or help shown), 1 failed, 2 bad command
// line, input or configuration (nothing changed).
func (e Env) ExitCode(program string, err error) int {
	var ue UsageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(e.Stderr, "%s: %s\n", program, ue)
		return 2
	case errors.Is(err, config.ErrInvalid):
		fmt.Fprintf(e.Stderr, "%s: %v\n", program, err)
		return 2 // a bad configuration is bad input: nothing was changed
	case errors.Is(err, ErrFailed):
		return 1 // the command printed its verdict
	default:
		fmt.Fprintf(e.Stderr, "%s: %v\n", program, err)
		return 1
	}
}

// unknownFlag is the first flag of args that fs does not define (as the
// flag package reads them: up to the first argument that is no flag, or
// "--"; a flag that takes a value takes the next argument unless it has
// "=").
func unknownFlag(fs *flag.FlagSet, args []string) (string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return "", false
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		switch {
		case f == nil && (name == "h" || name == "help"):
			return "", false
		case f == nil:
			return name, true
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if !hasValue {
			i++
		}
	}
	return "", false
}
