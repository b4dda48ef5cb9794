package cli

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/config"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    error // nil, flag.ErrHelp, or any UsageError
		message string
	}{
		{"ok", []string{"--n", "3"}, nil, ""},
		{"unknown flag", []string{"--m", "3"}, UsageError(""), "flag provided but not defined: -m"},
		{"bad value", []string{"--n", "three"}, UsageError(""), "invalid value"},
		{"stray argument", []string{"--n", "3", "extra"}, UsageError(""), `unexpected argument "extra"`},
		{"help", []string{"--help"}, flag.ErrHelp, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			fs := Env{Stderr: &stderr}.Flags("cmd")
			fs.Int("n", 0, "a number")
			err := Parse(fs, tt.args)
			switch tt.want {
			case nil:
				assert.NoError(t, err)
			case flag.ErrHelp:
				assert.ErrorIs(t, err, flag.ErrHelp)
				assert.Contains(t, stderr.String(), "a number", "--help prints the flags")
			default:
				var ue UsageError
				require.True(t, errors.As(err, &ue), "%v", err)
				assert.Contains(t, ue.Error(), tt.message)
			}
		})
	}
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
