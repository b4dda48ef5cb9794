package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/config"
)

var testCmd = Command{Name: "cmd", Synopsis: "[--n N]", Summary: "Does a thing."}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    error // nil, flag.ErrHelp, or any UsageError
		message string
	}{
		{"ok", []string{"--n", "3"}, nil, ""},
		{"unknown flag", []string{"--verbose", "3"}, UsageError(""), "cmd: no flag --verbose (see 'ssobridge cmd --help')"},
		{"a flag one edit off", []string{"--first-name", "Ada", "--lastname", "L"}, UsageError(""), "cmd: no flag --lastname; did you mean --last-name? (see 'ssobridge cmd --help')"},
		{"a value that looks like a flag is a value", []string{"--first-name", "-x", "--nn", "3"}, UsageError(""), "cmd: no flag --nn; did you mean --n?"},
		{"a bool flag takes no value", []string{"--dry", "--firstname", "A"}, UsageError(""), "did you mean --first-name?"},
		{"bad value", []string{"--n", "three"}, UsageError(""), "invalid value"},
		{"stray argument", []string{"--n", "3", "extra"}, UsageError(""), `cmd: unexpected argument "extra" (see 'ssobridge cmd --help')`},
		{"help", []string{"--help"}, flag.ErrHelp, ""},
		{"-h", []string{"-h"}, flag.ErrHelp, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := Env{Stdout: &stdout, Stderr: &stderr}
			fs := env.Flags(testCmd)
			fs.Int("n", 0, "a number")
			if strings.Contains(strings.Join(tt.args, " "), "name") {
				fs.String("first-name", "", "")
				fs.String("last-name", "", "")
				fs.Bool("dry", false, "")
			}
			err := env.Parse(fs, testCmd, tt.args)
			assert.Empty(t, stderr.String(), "errors are returned, not printed")
			switch tt.want {
			case nil:
				assert.NoError(t, err)
				assert.Empty(t, stdout.String())
			case flag.ErrHelp:
				assert.ErrorIs(t, err, flag.ErrHelp)
				assert.Equal(t, "usage: ssobridge cmd [--n N]\n\nDoes a thing.\n\nflags:\n  -n int\n    \ta number\n", stdout.String())
			default:
				var ue UsageError
				require.True(t, errors.As(err, &ue), "%v", err)
				assert.Contains(t, ue.Error(), tt.message)
				assert.Empty(t, stdout.String())
			}
		})
	}
}

func TestHelpWithoutFlags(t *testing.T) {
	var stdout bytes.Buffer
	env := Env{Stdout: &stdout}
	fs := env.Flags(Command{Name: "x", Summary: "Nothing to set."})
	assert.ErrorIs(t, env.Parse(fs, Command{Name: "x", Summary: "Nothing to set."}, []string{"--help"}), flag.ErrHelp)
	assert.Equal(t, "usage: ssobridge x \n\nNothing to set.\n", stdout.String())
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	named := filepath.Join(dir, "named.yaml")
	require.NoError(t, os.WriteFile(named, []byte("server:\n  addr: 127.0.0.1:7001\n"), 0o600))
	env := Env{DefaultConfig: []byte("server:\n  addr: 127.0.0.1:7003\n"), Environ: []string{"SSOBRIDGE_LOG_LEVEL=debug"}}

	cfg, err := env.LoadConfig(named)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:7001", cfg.Server.Addr, "a named file wins")
	assert.Equal(t, "debug", cfg.Log.Level, "then the environment")

	t.Chdir(dir)
	cfg, err = env.LoadConfig("")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:7003", cfg.Server.Addr, "no ./config.yaml: the embedded default")
	require.NoError(t, os.WriteFile("config.yaml", []byte("server:\n  addr: 127.0.0.1:7002\n"), 0o600))
	cfg, err = env.LoadConfig("")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:7002", cfg.Server.Addr, "./config.yaml before the default")

	_, err = env.LoadConfig(filepath.Join(dir, "missing.yaml"))
	assert.ErrorContains(t, err, "missing.yaml")
	_, err = Env{Environ: []string{"SSOBRIDGE_NOPE=1"}}.LoadConfig(named)
	assert.ErrorIs(t, err, config.ErrInvalid)
}

// ExitCode maps an error to the documented exit code and message.
func TestExitCode(t *testing.T) {
	for _, tt := range []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, 0, ""},
		{flag.ErrHelp, 0, ""},
		{UsageError("bad flag"), 2, "prog: bad flag\n"},
		{fmt.Errorf("load: %w", config.ErrInvalid), 2, "prog: load: invalid configuration\n"},
		{ErrFailed, 1, ""},
		{errors.New("disk full"), 1, "prog: disk full\n"},
	} {
		var stderr bytes.Buffer
		code := Env{Stderr: &stderr}.ExitCode("prog", tt.err)
		assert.Equal(t, tt.code, code, "%v", tt.err)
		assert.Equal(t, tt.stderr, stderr.String(), "%v", tt.err)
	}
}
