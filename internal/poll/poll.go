// Package poll reads a remote document now and again until its context
// ends: the one loop behind every way in that depends on such a document
// (an IdP's discovery and keys, its SAML metadata, an LMS's key sets).
package poll

import (
	"context"
	"time"
)

// Schedule says when to read.
type Schedule struct {
	// Every is the wait between reads.
	Every time.Duration
	// Retry, when set, is the wait instead of Every while Retrying says so.
	Retry time.Duration
	// Retrying decides from the last read's error whether the next wait is
	// Retry; nil: after a failed read.
	Retrying func(last error) bool
	// Timeout bounds one read.
	Timeout time.Duration
	// AtOnce reads at start; otherwise the first read comes after the
	// first wait (the caller has just read the document itself).
	AtOnce bool
}

// wait is the wait after a read whose error was last.
func (s Schedule) wait(last error) time.Duration {
	retrying := last != nil
	if s.Retrying != nil {
		retrying = s.Retrying(last)
	}
	if retrying && s.Retry > 0 {
		return s.Retry
	}
	return s.Every
}

// Run reads until ctx ends. last is the outcome the caller knows (nil:
// the document was read, or was never tried). changed, when set, is told
// each read's outcome that differs from the one before it (one read fails,
// fails otherwise, or works again), with the one before: a document that
// stays down is reported once. A read cut short by ctx's end is not.
func Run(ctx context.Context, s Schedule, last error, read func(context.Context) error, changed func(prev, err error)) {
	if !s.AtOnce && !sleep(ctx, s.wait(last)) {
		return
	}
	for {
		rctx, cancel := context.WithTimeout(ctx, s.Timeout)
		err := read(rctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if changed != nil && differs(last, err) {
			changed(last, err)
		}
		last = err
		if !sleep(ctx, s.wait(err)) {
			return
		}
	}
}

// differs: one of the two is an error and the other not, or they say
// different things.
func differs(a, b error) bool {
	if (a == nil) != (b == nil) {
		return true
	}
	return a != nil && a.Error() != b.Error()
}

// sleep waits d, reporting false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
