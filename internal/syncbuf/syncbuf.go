// Package syncbuf is a bytes.Buffer that many goroutines may write: tests
// capture a server's log or a command's output in one and read it while
// the writers run.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
