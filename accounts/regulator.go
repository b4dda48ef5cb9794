package accounts

import (
	"strings"
	"sync"
	"time"
)

// RegulationConfig bounds failed sign-ins.
type RegulationConfig struct {
	MaxRetries      int           // failures per account within FindTime before a ban; 0 = off
	MaxRetriesPerIP int           // failures per client IP within FindTime before a ban; 0 = off
	FindTime        time.Duration // the window failures are counted in
	BanTime         time.Duration // how long a ban lasts
}

// Regulator counts failed sign-ins per account and per client IP and bans
// either for BanTime once it fails too often within FindTime (the model is
// Authelia's regulator). Unknown emails are counted like known ones, so a
// ban tells nothing about which emails have accounts. State is in memory:
// each instance regulates the sign-ins it sees.
type Regulator struct {
	cfg RegulationConfig
	now func() time.Time

	mu      sync.Mutex
	entries map[string]*regEntry
}

type regEntry struct {
	failures    []time.Time
	bannedUntil time.Time
}

// maxRegEntries bounds memory under a storm of distinct emails or IPs.
const maxRegEntries = 100_000

// NewRegulator returns a Regulator; now is the clock (time.Now if nil).
func NewRegulator(cfg RegulationConfig, now func() time.Time) *Regulator {
	if now == nil {
		now = time.Now
	}
	return &Regulator{cfg: cfg, now: now, entries: map[string]*regEntry{}}
}

func regKeys(email, ip string) (string, string) {
	return "account:" + strings.ToLower(strings.TrimSpace(email)), "ip:" + ip
}

// BannedUntil reports when the ban on email or ip ends (zero: no ban).
func (r *Regulator) BannedUntil(email, ip string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	ak, ik := regKeys(email, ip)
	var until time.Time
	for _, k := range []string{ak, ik} {
		if e, ok := r.entries[k]; ok && now.Before(e.bannedUntil) && e.bannedUntil.After(until) {
			until = e.bannedUntil
		}
	}
	return until
}

// Fail records a failed sign-in and reports whether it started a ban.
func (r *Regulator) Fail(email, ip string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	ak, ik := regKeys(email, ip)
	banned := r.failLocked(ak, r.cfg.MaxRetries, now)
	if r.failLocked(ik, r.cfg.MaxRetriesPerIP, now) {
		banned = true
	}
	return banned
}

func (r *Regulator) failLocked(key string, max int, now time.Time) bool {
	if max <= 0 {
		return false
	}
	e, ok := r.entries[key]
	if !ok {
		if len(r.entries) >= maxRegEntries {
			r.pruneLocked(now)
		}
		e = &regEntry{}
		r.entries[key] = e
	}
	cutoff := now.Add(-r.cfg.FindTime)
	kept := e.failures[:0]
	for _, t := range e.failures {
		if t.After(cutoff) {
			kept = append(kept, t)
		}
	}
	e.failures = append(kept, now)
	if len(e.failures) >= max {
		e.bannedUntil = now.Add(r.cfg.BanTime)
		e.failures = e.failures[:0]
		return true
	}
	return false
}

// Succeed clears an account's failures after a good sign-in.
func (r *Regulator) Succeed(email string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ak, _ := regKeys(email, "")
	delete(r.entries, ak)
}

// pruneLocked drops entries with no recent failure and no ban.
func (r *Regulator) pruneLocked(now time.Time) {
	cutoff := now.Add(-r.cfg.FindTime)
	for k, e := range r.entries {
		recent := len(e.failures) > 0 && e.failures[len(e.failures)-1].After(cutoff)
		if !recent && !now.Before(e.bannedUntil) {
			delete(r.entries, k)
		}
	}
}
