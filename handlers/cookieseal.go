package handlers

import (
	"time"

	"github.com/ssobridge/ssobridge/internal/seal"
)

// The purposes of sealed values.
const (
	purposeSession              = seal.Session    // the session cookie
	purposeCSRF    seal.Purpose = "csrf"          // the anti-forgery cookie
	purposeWaiting seal.Purpose = "launch ticket" // a waiting launch's exchange URL, in the store
	// The ways in name their own (wayin.Kit.Sealer): "oidc flow" (an OIDC
	// sign-in's state, nonce and verifier), "saml flow" (a SAML sign-in's
	// pending requests), "lti flow" (an LTI login's pending state and
	// nonce).
	purposeGrant seal.Purpose = "pending sign-in" // a sign-in granted but not started: a framed LTI launch's new tab, a switch of accounts
	purposePlace seal.Purpose = "place in line"   // a launch's place kept past its "too busy" page (place.go)
)

// Sealer seals values kept outside the cookie (a waiting launch's
// exchange URL in the store) under the session keys, which every instance
// shares; values sealed under the previous keys still open.
type Sealer struct{ s *seal.Sealer }

// NewSealer seals under c's keys; a value older than maxAge (0: any age)
// does not open.
func NewSealer(c SessionConfig, maxAge time.Duration, now func() time.Time) Sealer {
	if now == nil {
		now = time.Now
	}
	return Sealer{seal.New(purposeWaiting, c.keys(), c.previousKeys(), maxAge, now)}
}

// Seal seals payload for name (bound in: it opens only for that name).
func (s Sealer) Seal(name string, payload []byte) string { return s.s.Seal(name, payload) }

// Open opens a value Seal made for name, appending its payload to dst.
func (s Sealer) Open(dst []byte, name, value string) ([]byte, time.Time, error) {
	return s.s.Open(dst, name, value)
}
