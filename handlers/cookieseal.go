package handlers

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"
)

// cookieSealer seals cookie values with AES-256-GCM (authenticated
// encryption in one pass) under a key derived from the session keys, the
// cookie's name bound in as associated data, and the sealing time inside,
// checked against maxAge on opening. New values are sealed under the
// current keys; values sealed under the previous keys (a rotation in
// progress) still open, so rotating the keys signs nobody out.
type cookieSealer struct {
	aead     cipher.AEAD
	previous cipher.AEAD   // nil: no previous keys
	maxAge   time.Duration // 0: no limit
	now      func() time.Time
}

// sealVersion is the first byte of a sealed value (after base64).
const sealVersion = 1

// Errors of opening a cookie value.
var (
	errSealed     = errors.New("cookie: not sealed by this server")
	errSealExpiry = errors.New("cookie: expired")
)

// sealPurpose names what a sealer seals. Each purpose has a key of its
// own, derived from the session keys (HKDF, the purpose in the info), so
// a value sealed for one purpose never opens as another's, whatever name
// it is given.
type sealPurpose string

// The purposes of sealed values.
const (
	purposeSession sealPurpose = "session"       // the session cookie
	purposeCSRF    sealPurpose = "csrf"          // the anti-forgery cookie
	purposeWaiting sealPurpose = "launch ticket" // a waiting launch's exchange URL, in the store
	// The ways in name their own (wayin.Kit.Sealer): "oidc flow" (an OIDC
	// sign-in's state, nonce and verifier), "saml flow" (a SAML sign-in's
	// pending requests), "lti flow" (an LTI login's pending state and
	// nonce).
	purposeGrant sealPurpose = "pending sign-in" // a sign-in granted but not started: a framed LTI launch's new tab, a switch of accounts
	purposePlace sealPurpose = "place in line"   // a launch's place kept past its "too busy" page (place.go)
)

// hkdfInfo is the HKDF info of a purpose's key. The session's is the
// derivation every key had before they were separated: kept, so that no
// one is signed out by the upgrade.
func (p sealPurpose) hkdfInfo() string {
	if p == purposeSession {
		return "ssobridge cookie seal v1"
	}
	return "ssobridge seal v2: " + string(p)
}

// newCookieSealer derives the purpose's sealing key from both session
// keys (HKDF): a cookie sealed under other keys, or for another purpose,
// does not open, unless they are the previous keys (prev; empty: none).
func newCookieSealer(purpose sealPurpose, keys, prev SessionKeys, maxAge time.Duration, now func() time.Time) *cookieSealer {
	s := &cookieSealer{aead: sealingAEAD(purpose, keys), maxAge: maxAge, now: now}
	if len(prev.Hash) > 0 {
		s.previous = sealingAEAD(purpose, prev)
	}
	return s
}

func sealingAEAD(purpose sealPurpose, k SessionKeys) cipher.AEAD {
	secret := append(append([]byte{}, k.Hash...), k.Block...)
	// None of these fail for SHA-256, a 32-byte key and AES.
	key, err := hkdf.Key(sha256.New, secret, nil, purpose.hkdfInfo(), 32)
	if err != nil {
		panic(err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return aead
}

// seal returns the cookie value for payload under name.
func (s *cookieSealer) seal(name string, payload []byte) string {
	ns := s.aead.NonceSize()
	// version, nonce, then sealed(time, payload) and the tag
	b := make([]byte, 1+ns, 1+ns+8+len(payload)+s.aead.Overhead())
	b[0] = sealVersion
	_, _ = rand.Read(b[1 : 1+ns]) // crypto/rand.Read never fails (Go 1.24+)
	plain := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(payload)), uint64(s.now().Unix()))
	plain = append(plain, payload...)
	b = s.aead.Seal(b, b[1:1+ns], plain, []byte(name))
	return base64.RawURLEncoding.EncodeToString(b)
}

// sealJSON seals v's JSON for name.
func (s *cookieSealer) SealJSON(name string, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return s.seal(name, b), nil
}

// openJSON opens a value sealJSON made for name into v.
func (s *cookieSealer) OpenJSON(name, value string, v any) error {
	b, _, err := s.open(nil, name, value)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// open returns the payload of a value seal made for name, appended to dst,
// and when it was sealed.
func (s *cookieSealer) open(dst []byte, name, value string) ([]byte, time.Time, error) {
	ns := s.aead.NonceSize()
	if len(value) > 4096 || base64.RawURLEncoding.DecodedLen(len(value)) < 1+ns+8+s.aead.Overhead() {
		return nil, time.Time{}, errSealed
	}
	var buf [512]byte
	raw := buf[:0]
	if n := base64.RawURLEncoding.DecodedLen(len(value)); n > len(buf) {
		raw = make([]byte, 0, n)
	}
	raw, err := base64.RawURLEncoding.AppendDecode(raw, []byte(value))
	// The decoder skips \r and \n, so the length is checked on what it gave.
	if err != nil || len(raw) < 1+ns+8+s.aead.Overhead() || raw[0] != sealVersion {
		return nil, time.Time{}, errSealed
	}
	var spare []byte // a failed Open may clear its output, raw itself here
	if s.previous != nil {
		spare = append([]byte(nil), raw...)
	}
	plain, err := s.aead.Open(raw[1+ns:1+ns], raw[1:1+ns], raw[1+ns:], []byte(name))
	if err != nil && s.previous != nil {
		plain, err = s.previous.Open(spare[1+ns:1+ns], spare[1:1+ns], spare[1+ns:], []byte(name))
	}
	if err != nil {
		return nil, time.Time{}, errSealed
	}
	sealed := time.Unix(int64(binary.BigEndian.Uint64(plain)), 0)
	if age := s.now().Sub(sealed); s.maxAge > 0 && (age > s.maxAge || age < -time.Minute) {
		return nil, time.Time{}, errSealExpiry
	}
	return append(dst, plain[8:]...), sealed, nil
}

// Sealer seals values kept outside the cookie (a waiting launch's
// exchange URL in the store) under the session keys, which every instance
// shares; values sealed under the previous keys still open.
type Sealer struct{ s *cookieSealer }

// NewSealer seals under c's keys; a value older than maxAge (0: any age)
// does not open.
func NewSealer(c SessionConfig, maxAge time.Duration, now func() time.Time) Sealer {
	if now == nil {
		now = time.Now
	}
	return Sealer{newCookieSealer(purposeWaiting, c.keys(), c.previousKeys(), maxAge, now)}
}

// Seal seals payload for name (bound in: it opens only for that name).
func (s Sealer) Seal(name string, payload []byte) string { return s.s.seal(name, payload) }

// Open opens a value Seal made for name, appending its payload to dst.
func (s Sealer) Open(dst []byte, name, value string) ([]byte, time.Time, error) {
	return s.s.open(dst, name, value)
}
