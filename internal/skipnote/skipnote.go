// Package skipnote tells whoever runs `go test ./...` which suites of a
// test binary were skipped and how to switch them on. In package list
// mode go test shows a passing package's output only with -v, so without
// -v the lines go to the terminal the tests run at (when there is one);
// with -v they are part of the output. When SSOBRIDGE_TEST_SKIPPED names
// a file, they are appended there too: CI has no terminal, and its log
// prints that file after the tests (.ci/run), so a green log never hides
// a suite that did not run.
//
// A test skips through Skip; the package's TestMain runs its tests with
// Main. The record is one per test binary (a process): test-only state.
package skipnote

import (
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
)

// book is this test binary's record of skipped suites: suite -> the way
// to switch it on, and how many tests it skipped.
var book = struct {
	mu     sync.Mutex
	why    map[string]string
	tests  map[string]int
	suites []string
}{why: map[string]string{}, tests: map[string]int{}}

// Skip records that t belongs to suite, which is off for why (a sentence
// that says how to switch it on), and skips t.
func Skip(t testing.TB, suite, why string) {
	t.Helper()
	Record(suite, why)
	t.Skip(suite + " off: " + why)
}

// Record counts one skipped test of suite.
func Record(suite, why string) {
	book.mu.Lock()
	defer book.mu.Unlock()
	if _, ok := book.why[suite]; !ok {
		book.why[suite] = why
		book.suites = append(book.suites, suite)
	}
	book.tests[suite]++
}

// EnvFile names the file skipped suites are appended to, when set.
const EnvFile = "SSOBRIDGE_TEST_SKIPPED"

// Main runs the tests and then writes one line per skipped suite (see
// the package comment); it returns m.Run's code. pkg names the package
// in the lines.
func Main(m *testing.M, pkg string) int {
	code := m.Run()
	if path := os.Getenv(EnvFile); path != "" {
		if err := Append(path, pkg); err != nil {
			fmt.Fprintf(os.Stderr, "skipnote: %v\n", err)
		}
	}
	if testing.Verbose() {
		Write(os.Stdout, pkg)
		return code
	}
	// Not verbose: go test discards a passing binary's output, and the
	// person at the terminal would not learn what did not run.
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		Write(tty, pkg)
		tty.Close()
	}
	return code
}

// Write writes the lines for the suites skipped so far, one per suite,
// in the order they were first met.
func Write(w io.Writer, pkg string) {
	book.mu.Lock()
	defer book.mu.Unlock()
	for _, s := range book.suites {
		n := book.tests[s]
		plural := "s"
		if n == 1 {
			plural = ""
		}
		fmt.Fprintf(w, "skipped\t%s: %s (%d test%s): %s\n", pkg, s, n, plural, book.why[s])
	}
}

// Append adds the lines of Write to the file at path (made if missing):
// every test binary of a run appends its own.
func Append(path, pkg string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	Write(f, pkg)
	return f.Close()
}
