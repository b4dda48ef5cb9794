package app

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/config"
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

	w, _, closeLog := bufferLog(f)
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
	w, _, _ = bufferLog(&buf)
	_, _ = w.Write([]byte("x\n"))
	assert.Equal(t, "x\n", buf.String(), "a buffer is written to at once")
}

// A WARN or ERROR line is written at once, after the lines gathered
// before it (in order); INFO lines wait for the flush interval.
func TestUrgentLinesAreWrittenAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	read := func() string { b, _ := os.ReadFile(path); return string(b) }
	a, err := New(context.Background(), testConfig(t, ""), Options{LogOutput: f})
	require.NoError(t, err)
	defer a.Close()
	a.flushLog() // nothing from New is left gathered
	start := len(read())

	a.logger.Info("gathered line")
	assert.NotContains(t, read()[start:], "gathered line", "INFO waits")
	a.logger.Warn("warning line")
	got := read()[start:]
	require.Contains(t, got, "warning line", "WARN is written at once")
	assert.Less(t, strings.Index(got, "gathered line"), strings.Index(got, "warning line"), "with what was gathered before it, in order")
	a.logger.With("k", "v").Error("error line")
	assert.Contains(t, read(), `msg="error line" k=v`, "ERROR too, through a derived logger")
}

// A panic in a goroutine the app runs ends the process as before, but
// the log lines gathered before it are written first. Run in a child
// process, which the panic ends.
func TestLogLinesSurviveAPanic(t *testing.T) {
	if os.Getenv("SSOBRIDGE_TEST_PANIC") == "1" {
		w, flush, _ := bufferLog(os.Stderr)
		logger := slog.New(urgentFlush{newLogger(config.Log{Level: "info"}, w).Handler(), flush})
		logger.Info("gathered before the crash")
		go flushingPanics(flush, func() { panic("boom") })
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
