package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The systemd unit for VM districts (deploy/systemd/ssobridge.service):
// systemd-analyze verify finds nothing to say about it (an unknown or
// misspelt directive is a warning there, so any output fails), with the
// built binary in ExecStart; and it keeps what docs/deploy.md promises: its
// own user, a read-only system but for its state directory, no new
// privileges, and a stop timeout above the bridge's 65 s drain.
func TestSystemdUnit(t *testing.T) {
	unit, err := os.ReadFile("../deploy/systemd/ssobridge.service")
	require.NoError(t, err)
	directives := map[string][]string{}
	for _, line := range strings.Split(string(unit), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			directives[k] = append(directives[k], v)
		}
	}
	for k, want := range map[string]string{
		"DynamicUser": "yes", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
		"StateDirectory": "ssobridge", "KillSignal": "SIGTERM", "TimeoutStopSec": "70", "CapabilityBoundingSet": "",
		"ExecStart": "/usr/local/bin/ssobridge serve --config /etc/ssobridge/config.yaml",
	} {
		assert.Equal(t, []string{want}, directives[k], k)
	}
	assert.Contains(t, directives["Environment"], "SSOBRIDGE_STORE_DSN=/var/lib/ssobridge/ssobridge.db", "SQLite in the state directory")

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (apt-get install systemd): the unit's directives are checked above, not verified by systemd")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ssobridge.service")
	require.NoError(t, os.WriteFile(path, bytes.ReplaceAll(unit, []byte("/usr/local/bin/ssobridge"), []byte(ssobridgeBinary(t))), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, analyze, "verify", "--man=no", path).CombinedOutput()
	assert.NoError(t, err, "%s", out)
	assert.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify has nothing to say")

	// A misspelt directive is what verify catches: the check can fail.
	bad := filepath.Join(dir, "bad.service")
	require.NoError(t, os.WriteFile(bad, bytes.Replace(unit, []byte("NoNewPrivileges="), []byte("NoNewPrivilegez="), 1), 0o644))
	out, _ = exec.CommandContext(ctx, analyze, "verify", "--man=no", bad).CombinedOutput()
	assert.Contains(t, string(out), "Unknown key", "verify speaks of a misspelt directive")
}
