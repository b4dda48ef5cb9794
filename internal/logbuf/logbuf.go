// Package logbuf gathers a process's log lines and writes them out
// together, without holding back the lines that explain trouble.
package logbuf

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"
)

// logWriter gathers log lines and writes them out together, at most
// flushEvery after the first of them or once 32 KiB have gathered, so a
// busy bridge makes one write(2) for many lines instead of one per line:
// at info level a launch logs two lines (the request and the launch), and
// their two writes were 2 of the launch's 6 system calls (bench --target,
// strace -c). Lines that explain trouble are not held back: the logger
// (UrgentFlush) flushes after every WARN and ERROR line, and the app's own
// goroutines flush before a panic takes the process down. What is buffered
// when the process is killed outright (SIGKILL) is lost: at most flushEvery
// of INFO and DEBUG lines. Close writes the rest.
type logWriter struct {
	mu     sync.Mutex
	w      io.Writer
	buf    []byte
	armed  bool // the timer will flush
	timer  *time.Timer
	closed bool
}

const (
	logFlushEvery = 50 * time.Millisecond
	logBufferMax  = 32 << 10
)

// Buffer buffers w when it is a file or pipe (each write a system call);
// anything else (a test's buffer) is written to at once. flush writes what
// is gathered; close flushes and writes later lines at once.
func Buffer(w io.Writer) (out io.Writer, flush func(), close func() error) {
	if _, ok := w.(*os.File); !ok {
		return w, func() {}, func() error { return nil }
	}
	l := &logWriter{w: w, buf: make([]byte, 0, logBufferMax)}
	l.timer = time.AfterFunc(time.Hour, l.flush)
	l.timer.Stop()
	return l, l.flush, l.Close
}

// UrgentFlush wraps h so that the log is flushed after every record at
// WARN or above: the lines that explain a failure (and every line gathered
// before them, in order) are written at once.
func UrgentFlush(h slog.Handler, flush func()) slog.Handler { return urgentFlush{h, flush} }

type urgentFlush struct {
	slog.Handler
	flush func()
}

func (h urgentFlush) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		h.flush()
	}
	return err
}

func (h urgentFlush) WithAttrs(as []slog.Attr) slog.Handler {
	return urgentFlush{h.Handler.WithAttrs(as), h.flush}
}

func (h urgentFlush) WithGroup(name string) slog.Handler {
	return urgentFlush{h.Handler.WithGroup(name), h.flush}
}

// FlushingPanics runs f; a panic in it flushes the log before it goes on
// (and ends the process, as it would have).
func FlushingPanics(flush func(), f func()) {
	defer func() {
		if r := recover(); r != nil {
			flush()
			panic(r)
		}
	}()
	f()
}

// Write implements io.Writer.
func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.w.Write(p)
	}
	l.buf = append(l.buf, p...)
	if len(l.buf) >= logBufferMax {
		return len(p), l.flushLocked()
	}
	if !l.armed {
		l.armed = true
		l.timer.Reset(logFlushEvery)
	}
	return len(p), nil
}

func (l *logWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.flushLocked() // a log that cannot be written has nowhere to say so
}

func (l *logWriter) flushLocked() error {
	l.armed = false
	if len(l.buf) == 0 {
		return nil
	}
	_, err := l.w.Write(l.buf)
	l.buf = l.buf[:0]
	return err
}

// Close writes what is buffered; later lines are written at once.
func (l *logWriter) Close() error {
	l.timer.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return l.flushLocked()
}
