//go:build linux

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ssobridge/ssobridge/internal/syncbuf"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// terminal is a pseudo-terminal: the test holds the master side, the
// command under test gets the slave as its controlling terminal.
type terminal struct {
	master, slave *os.File
	out           syncbuf.Buffer // what the command wrote to the terminal
}

func openTerminal(t *testing.T) *terminal {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	require.NoError(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0)) // unlock
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	tm := &terminal{master: m, slave: s}
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := m.Read(buf)
			_, _ = tm.out.Write(buf[:n])
			if err != nil {
				return // EIO once the command and we have closed the slave
			}
		}
	}()
	t.Cleanup(func() { s.Close(); m.Close() })
	return tm
}

// echo reports whether the terminal echoes what is typed.
func (tm *terminal) echo(t *testing.T) bool {
	tio, err := unix.IoctlGetTermios(int(tm.slave.Fd()), unix.TCGETS)
	require.NoError(t, err)
	return tio.Lflag&unix.ECHO != 0
}

// typeAt waits for prompt to be shown with echo off, then types line.
func (tm *terminal) typeAt(t *testing.T, prompt, line string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Count(tm.out.String(), prompt) > 0 && !tm.echo(t) },
		20*time.Second, 5*time.Millisecond, "no %q with echo off; the terminal shows %q", prompt, tm.out.String())
	_, err := tm.master.WriteString(line + "\n")
	require.NoError(t, err)
}

// TestUserAddAtATerminal: typed at a terminal, `user add` asks twice with
// echo off and never shows the password; differing entries write nothing.
func TestUserAddAtATerminal(t *testing.T) {
	for _, tt := range []struct {
		name          string
		first, second string
		code          int
		output        string
	}{
		{"same twice", "long enough pw", "long enough pw", 0, "created account tty@example.com"},
		{"differing", "long enough pw", "other password", 2, "the two passwords differ: nothing was written"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, dsn := writeConfig(t, "")
			tm := openTerminal(t)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := command(t, ctx, nil, "user", "add", "--config", cfg, "--email", "tty@example.com", "--first-name", "T", "--last-name", "Y")
			cmd.Stdin, cmd.Stdout, cmd.Stderr = tm.slave, tm.slave, tm.slave
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			require.NoError(t, cmd.Start())
			require.True(t, tm.echo(t), "the terminal echoes until the command turns it off")
			tm.typeAt(t, "Password: ", tt.first)
			tm.typeAt(t, "Repeat the password: ", tt.second)
			err := cmd.Wait()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			require.Eventually(t, func() bool { return strings.Contains(tm.out.String(), tt.output) }, 10*time.Second, 5*time.Millisecond, tm.out.String())
			assert.Equal(t, tt.code, code, tm.out.String())
			assert.True(t, tm.echo(t), "echo is back on afterwards")
			for _, pw := range []string{tt.first, tt.second} {
				assert.NotContains(t, tm.out.String(), pw, "the password is never shown")
			}
			s, err := sqlstore.OpenSQLite(context.Background(), dsn, nil)
			require.NoError(t, err)
			defer s.Close()
			n, err := s.CountAccounts(context.Background())
			require.NoError(t, err)
			assert.Equal(t, 1-tt.code/2, n)
		})
	}
}

// TestProvisionProgressAtATerminal: at a terminal, `provision` draws a
// progress bar in place (done/total, rate, ETA, 429s) and ends with its
// summary.
func TestProvisionProgressAtATerminal(t *testing.T) {
	sim := morningPlatform(t)
	cred := sim.Credentials()[0]
	cfg, _ := writeConfig(t, fmt.Sprintf("platform:\n  base_url: %s\n  api_key: %s\n  api_secret: %s\n  rate_limit: 20\n", sim.URL, cred.Key, cred.Secret))
	roll := morningCSV(t, 40, "tty") // 80 calls at 20/s: 4 s
	tm := openTerminal(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := command(t, ctx, nil, "provision", "--csv", roll, "--config", cfg)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tm.slave, tm.slave, tm.slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, cmd.Run())
	require.Eventually(t, func() bool { return strings.Contains(tm.out.String(), "report: ") }, 10*time.Second, 5*time.Millisecond, tm.out.String())
	out := tm.out.String()
	assert.Greater(t, strings.Count(out, "\r["), 3, "a bar redrawn in place: %q", out)
	assert.Contains(t, out, "] 40/40 ")
	assert.Regexp(t, `\d+/40  [0-9.]+/s  ETA \S+  429s 0  failed 0`, out)
	assert.Contains(t, out, "created 40, existed 0, already linked 0, failed 0")
	assert.NotContains(t, out, "provision: 40/40", "no plain progress lines at a terminal")
}
