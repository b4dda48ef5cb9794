// Package platformsim emulates the video platform's Partner API and its
// browser login-token exchange, as strictly as the spec describes them, so
// the bridge can be developed, demonstrated and tested without the real
// platform.
//
// It deliberately shares no code with package apiclient: its request
// verifier is written from the spec on its own, so that a signing mistake
// cannot hide on both sides.
//
// Tests steer it through its Go API (faults, latency, clock offset, call
// counts); the standalone server can expose the same through a JSON
// control endpoint (off by default).
package platformsim
