package platformsim

import (
	"maps"
	"net/http"
	"sync"
	"time"
)

// Fault changes how an endpoint answers.
type Fault struct {
	// Status answers with this HTTP status instead of doing the work
	// (e.g. 429, 500, 503).
	Status int `json:"status,omitempty"`
	// RetryAfter, in seconds, goes with a 429.
	RetryAfter int `json:"retry_after,omitempty"`
	// Ghost does the work, then answers Status (default 500): the
	// "created but the answer was lost" case.
	Ghost bool `json:"ghost,omitempty"`
	// Latency delays the answer (the request's cancellation stops it).
	Latency time.Duration `json:"latency,omitempty"`
	// Reset closes the connection without an answer.
	Reset bool `json:"reset,omitempty"`
	// Times is how many of the next answers this applies to; 0 = until cleared.
	Times int `json:"times,omitempty"`
}

// faultTable holds the pending faults per endpoint, in order.
type faultTable struct {
	mu      sync.Mutex
	pending map[string][]*Fault
	latency map[string]time.Duration
}

// InjectFault queues f for endpoint ("list_users", "create_user",
// "issue_token", "exchange"). Faults apply in the order injected.
func (s *Server) InjectFault(endpoint string, f Fault) {
	if f.Ghost && f.Status == 0 {
		f.Status = http.StatusInternalServerError
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	if s.faults.pending == nil {
		s.faults.pending = map[string][]*Fault{}
	}
	s.faults.pending[endpoint] = append(s.faults.pending[endpoint], &f)
}

// SetLatency delays every answer of endpoint ("" for every endpoint) by d.
func (s *Server) SetLatency(endpoint string, d time.Duration) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	if s.faults.latency == nil {
		s.faults.latency = map[string]time.Duration{}
	}
	s.faults.latency[endpoint] = d
}

// ClearFaults removes every fault and latency.
func (s *Server) ClearFaults() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.pending = nil
	s.faults.latency = nil
}

// take returns the fault for this answer of endpoint (zero for none).
func (t *faultTable) take(endpoint string) Fault {
	t.mu.Lock()
	defer t.mu.Unlock()
	var f Fault
	if q := t.pending[endpoint]; len(q) > 0 {
		head := q[0]
		f = *head
		if head.Times > 0 {
			head.Times--
			if head.Times == 0 {
				t.pending[endpoint] = q[1:]
			}
		}
	}
	if d, ok := t.latency[endpoint]; ok {
		f.Latency += d
	} else if d, ok := t.latency[""]; ok {
		f.Latency += d
	}
	return f
}

// callCounter counts calls per endpoint, and the calls answered 429 by
// the rate limit.
type callCounter struct {
	mu      sync.Mutex
	n       map[string]int
	limited int
}

func (c *callCounter) add(endpoint string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[endpoint]++
}

// Calls returns how often endpoint was called (authenticated or not).
func (s *Server) Calls(endpoint string) int {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	return s.calls.n[endpoint]
}

// CallCounts returns a copy of every endpoint's call count.
func (s *Server) CallCounts() map[string]int {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	return maps.Clone(s.calls.n)
}

// RateLimited returns how many calls the rate limit answered 429.
func (s *Server) RateLimited() int {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	return s.calls.limited
}

// ResetCalls sets every call count to zero, the rate-limited ones too.
func (s *Server) ResetCalls() {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	s.calls.n, s.calls.limited = nil, 0
}
