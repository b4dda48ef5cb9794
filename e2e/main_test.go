package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/skipnote"
	"github.com/ssobridge/ssobridge/internal/syncbuf"
)

func TestMain(m *testing.M) {
	code := skipnote.Main(m, "e2e")
	if browserOnce.cancel != nil {
		browserOnce.cancel()
	}
	if binaryOnce.dir != "" {
		os.RemoveAll(binaryOnce.dir)
	}
	os.Exit(code)
}

// builtBinary is the ssobridge binary, built once for the test binary.
type builtBinary struct {
	once      sync.Once
	dir, path string
	err       error
}

var binaryOnce builtBinary

// ssobridgeBinary builds the command (as `go build` would from the module
// root) the first time a test asks for it.
func ssobridgeBinary(t *testing.T) string {
	t.Helper()
	b := &binaryOnce
	b.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			b.err = err
			return
		}
		if b.dir, b.err = os.MkdirTemp("", "ssobridge-e2e-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "ssobridge")
		// -buildvcs=true: `ssobridge version` reports the revision even
		// where GOFLAGS switches VCS stamping off.
		args := []string{"build", "-buildvcs=true", "-o", b.path}
		if raceBuild {
			args = append(args, "-race")
		}
		cmd := exec.Command(goTool, append(args, "github.com/ssobridge/ssobridge")...)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	require.NoError(t, b.err)
	return b.path
}

// command prepares the binary with args, run in a temp dir (so no
// ./config.yaml is picked up) with the environment less any SSOBRIDGE_*
// variable, plus env.
func command(t *testing.T, ctx context.Context, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, ssobridgeBinary(t), args...)
	cmd.Dir = t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SSOBRIDGE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// runCLI runs the binary to its end and returns exit code and output.
func runCLI(t *testing.T, stdin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := command(t, ctx, env, args...)
	var out, errOut bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errOut.String()
	}
	require.NoError(t, err)
	return 0, out.String(), errOut.String()
}

// startCLI starts the binary and returns it with its live output; the test
// ends it.
func startCLI(t *testing.T, env []string, args ...string) (*exec.Cmd, *syncbuf.Buffer, *syncbuf.Buffer) {
	t.Helper()
	cmd := command(t, t.Context(), env, args...)
	out, errOut := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, errOut
	require.NoError(t, cmd.Start())
	return cmd, out, errOut
}

// stop interrupts a started binary (as Ctrl-C does) and returns its exit code.
func stop(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, err)
	return 0
}
