// Package seal seals values a browser or the store keeps for the bridge
// (cookies, flows, a waiting launch's exchange URL): AES-256-GCM under a
// key of the value's purpose, derived from the session keys, its name
// bound in, and the time it was sealed inside. Every instance with the
// same session keys opens what another sealed; values sealed under the
// previous keys (a rotation in progress) still open.
package seal

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

// Keys are one generation of the session keys.
type Keys struct{ Hash, Block []byte }

// Sealer seals values with AES-256-GCM (authenticated
// encryption in one pass) under a key derived from the session keys, the
// value's name (a cookie's) bound in as associated data, and the sealing time inside,
// checked against maxAge on opening. New values are sealed under the
// current keys; values sealed under the previous keys (a rotation in
// progress) still open, so rotating the keys signs nobody out.
type Sealer struct {
	aead     cipher.AEAD
	previous cipher.AEAD   // nil: no previous keys
	maxAge   time.Duration // 0: no limit
	now      func() time.Time
}

// sealVersion is the first byte of a sealed value (after base64).
const sealVersion = 1

// Errors of opening a sealed value.
var (
	ErrNotSealed = errors.New("seal: not sealed by this server")
	ErrExpired   = errors.New("seal: expired")
)

// Session is the session cookie's purpose, whose key derivation predates
// the others'.
const Session Purpose = "session"

// Purpose names what a sealer seals. Each purpose has a key of its
// own, derived from the session keys (HKDF, the purpose in the info), so
// a value sealed for one purpose never opens as another's, whatever name
// it is given.
type Purpose string

// hkdfInfo is the HKDF info of a purpose's key. The session's is the
// derivation every key had before they were separated: kept, so that no
// one is signed out by the upgrade.
func (p Purpose) hkdfInfo() string {
	if p == Session {
		return "ssobridge cookie seal v1"
	}
	return "ssobridge seal v2: " + string(p)
}

// New derives the purpose's sealing key from both session keys (HKDF):
// a value sealed under other keys, or for another purpose,
// does not open, unless they are the previous keys (prev; empty: none).
func New(purpose Purpose, keys, prev Keys, maxAge time.Duration, now func() time.Time) *Sealer {
	s := &Sealer{aead: sealingAEAD(purpose, keys), maxAge: maxAge, now: now}
	if len(prev.Hash) > 0 {
		s.previous = sealingAEAD(purpose, prev)
	}
	return s
}

func sealingAEAD(purpose Purpose, k Keys) cipher.AEAD {
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

// Seal returns the sealed value of payload for name.
func (s *Sealer) Seal(name string, payload []byte) string {
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

// SealJSON seals v's JSON for name.
func (s *Sealer) SealJSON(name string, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return s.Seal(name, b), nil
}

// OpenJSON opens a value SealJSON made for name into v.
func (s *Sealer) OpenJSON(name, value string, v any) error {
	b, _, err := s.Open(nil, name, value)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Open returns the payload of a value Seal made for name, appended to dst,
// and when it was sealed.
func (s *Sealer) Open(dst []byte, name, value string) ([]byte, time.Time, error) {
	ns := s.aead.NonceSize()
	if len(value) > 4096 || base64.RawURLEncoding.DecodedLen(len(value)) < 1+ns+8+s.aead.Overhead() {
		return nil, time.Time{}, ErrNotSealed
	}
	var buf [512]byte
	raw := buf[:0]
	if n := base64.RawURLEncoding.DecodedLen(len(value)); n > len(buf) {
		raw = make([]byte, 0, n)
	}
	raw, err := base64.RawURLEncoding.AppendDecode(raw, []byte(value))
	// The decoder skips \r and \n, so the length is checked on what it gave.
	if err != nil || len(raw) < 1+ns+8+s.aead.Overhead() || raw[0] != sealVersion {
		return nil, time.Time{}, ErrNotSealed
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
		return nil, time.Time{}, ErrNotSealed
	}
	sealed := time.Unix(int64(binary.BigEndian.Uint64(plain)), 0)
	if age := s.now().Sub(sealed); s.maxAge > 0 && (age > s.maxAge || age < -time.Minute) {
		return nil, time.Time{}, ErrExpired
	}
	return append(dst, plain[8:]...), sealed, nil
}
