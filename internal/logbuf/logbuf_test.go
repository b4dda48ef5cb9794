package logbuf

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lines to a file are gathered and written together: within the flush
// interval, when 32 KiB have gathered, and at Close. A test's buffer is
// written to at once.
func TestLogWriterBuffersFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	read := func() string { b, _ := os.ReadFile(path); return string(b) }

	w, _, closeLog := Buffer(f)
	_, ok := w.(*logWriter)
	require.True(t, ok, "a file is buffered")
	_, err = w.Write([]byte("first line\n"))
	require.NoError(t, err)
	_, err = w.Write([]byte("second line\n"))
	require.NoError(t, err)
	assert.Empty(t, read(), "not written at once")
	require.Eventually(t, func() bool { return read() == "first line\nsecond line\n" }, 5*time.Second, 5*time.Millisecond,
		"written together within the flush interval")

	big := strings.Repeat("x", logBufferMax) + "\n"
	_, err = w.Write([]byte(big))
	require.NoError(t, err)
	assert.Equal(t, "first line\nsecond line\n"+big, read(), "a full buffer is written at once")

	_, err = w.Write([]byte("last line\n"))
	require.NoError(t, err)
	require.NoError(t, closeLog())
	assert.True(t, strings.HasSuffix(read(), "last line\n"), "Close writes the rest")
	_, err = w.Write([]byte("after close\n"))
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(read(), "after close\n"), "after Close, lines are written at once")

	var buf bytes.Buffer
	w, _, _ = Buffer(&buf)
	_, _ = w.Write([]byte("x\n"))
	assert.Equal(t, "x\n", buf.String(), "a buffer is written to at once")
}

// A panic in a goroutine the app runs ends the process as before, but
// the log lines gathered before it are written first. Run in a child
// process, which the panic ends.
func TestLogLinesSurviveAPanic(t *testing.T) {
	if os.Getenv("SSOBRIDGE_TEST_PANIC") == "1" {
		w, flush, _ := Buffer(os.Stderr)
		logger := slog.New(UrgentFlush(slog.NewTextHandler(w, nil), flush))
		logger.Info("gathered before the crash")
		go FlushingPanics(flush, func() { panic("boom") })
		select {}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLogLinesSurviveAPanic$")
	cmd.Env = append(os.Environ(), "SSOBRIDGE_TEST_PANIC=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the panic ends the process: %s", out)
	i, j := strings.Index(string(out), "gathered before the crash"), strings.Index(string(out), "panic: boom")
	require.GreaterOrEqual(t, i, 0, "the gathered line was written: %s", out)
	assert.Less(t, i, j, "before the panic's report: %s", out)
}
