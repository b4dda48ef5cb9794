package lti

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/ssobridge/ssobridge/internal/outside"
)

// maxKeySetBytes bounds a platform's key set (a few keys are a few KB).
const maxKeySetBytes = 1 << 20

// keySet is one platform's public keys, read from its JWKS URL: again when
// a token names a kid it does not hold (at most once per refetchEvery: a
// few seconds, so a platform's key rollover costs its users one "try
// again" at most, and a forger's unknown kids cost a read per period), and
// while it has never been read, on demand at most once per retryEvery.
type keySet struct {
	url                      string
	hc                       *http.Client
	now                      func() time.Time
	refetchEvery, retryEvery time.Duration
	fetch                    sync.Mutex // one read at a time; the others wait for its keys
	mu                       sync.Mutex
	keys                     jose.JSONWebKeySet
	read                     bool      // read at least once
	lastTry                  time.Time // the last read's start
	lastErr                  error     // the last read's failure; nil after a success
}

func newKeySet(u string, hc *http.Client, now func() time.Time, refetch, retry time.Duration) *keySet {
	return &keySet{url: u, hc: hc, now: now, refetchEvery: refetch, retryEvery: retry}
}

// key is the RSA public key of kid (or the set's only signing key when
// the token names none).
func (s *keySet) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	if k, ok := s.lookup(kid); ok {
		return k, nil
	}
	s.fetch.Lock()
	defer s.fetch.Unlock()
	if k, ok := s.lookup(kid); ok { // read by the call we waited for
		return k, nil
	}
	s.mu.Lock()
	read, since := s.read, s.now().Sub(s.lastTry)
	s.mu.Unlock()
	due := (read && since >= s.refetchEvery) || (!read && since >= s.retryEvery)
	if due {
		if err := s.refresh(ctx); err != nil {
			return nil, err // the kid may be a new key of the platform's: unavailable, not refused
		}
		if k, ok := s.lookup(kid); ok {
			return k, nil
		}
	}
	s.mu.Lock()
	read, lastErr, since := s.read, s.lastErr, s.now().Sub(s.lastTry)
	s.mu.Unlock()
	switch {
	case !read:
		return nil, fmt.Errorf("%w: %v", ErrKeysUnavailable, lastErr)
	case !due:
		// Read moments ago, before a rollover perhaps: the next read is
		// allowed in a few seconds, and the person is told to try again.
		return nil, fmt.Errorf("%w: key %s is not in the key set read %s ago; it is read again %s after the last read",
			ErrKeyChanged, outside.Quote(kid), since.Round(time.Second), s.refetchEvery)
	}
	return nil, fmt.Errorf("%w: the platform's key set holds no RS256 key %s", ErrInvalid, outside.Quote(kid))
}

func (s *keySet) lookup(kid string) (*rsa.PublicKey, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var found []jose.JSONWebKey
	if kid == "" {
		found = s.keys.Keys
	} else {
		found = s.keys.Key(kid)
	}
	var pub *rsa.PublicKey
	for _, k := range found {
		if rk, ok := k.Key.(*rsa.PublicKey); ok && k.Use != "enc" && (k.Algorithm == "" || k.Algorithm == string(jose.RS256)) {
			if pub != nil {
				return nil, false // no kid and several keys: ambiguous
			}
			pub = rk
		}
	}
	return pub, pub != nil
}

// refresh reads the key set now; a failure keeps the keys read before.
func (s *keySet) refresh(ctx context.Context) error {
	s.mu.Lock()
	s.lastTry = s.now()
	s.mu.Unlock()
	set, err := s.get(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.lastErr = err
		return err
	}
	s.keys, s.read, s.lastErr = set, true, nil
	return nil
}

func (s *keySet) get(ctx context.Context) (jose.JSONWebKeySet, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return jose.JSONWebKeySet{}, fmt.Errorf("%w: %v", ErrKeysUnavailable, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.hc.Do(req)
	if err != nil {
		return jose.JSONWebKeySet{}, fmt.Errorf("%w: %s: %v", ErrKeysUnavailable, s.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return jose.JSONWebKeySet{}, fmt.Errorf("%w: %s: %w: it answered %d", ErrKeysUnavailable, s.url, errAnswered, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeySetBytes+1))
	if err != nil {
		return jose.JSONWebKeySet{}, fmt.Errorf("%w: %s: %v", ErrKeysUnavailable, s.url, err)
	}
	if len(body) > maxKeySetBytes {
		return jose.JSONWebKeySet{}, fmt.Errorf("%w: %s is over %d bytes", ErrKeysUnavailable, s.url, maxKeySetBytes)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		return jose.JSONWebKeySet{}, fmt.Errorf("%w: %s is not a JSON Web Key Set: %v", ErrKeysUnavailable, s.url, err)
	}
	if len(set.Keys) == 0 {
		return jose.JSONWebKeySet{}, fmt.Errorf("%w: %s holds no keys", ErrKeysUnavailable, s.url)
	}
	return set, nil
}

// status is the key set's health: nil once read and while its last read
// succeeded.
func (s *keySet) status() (read bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read, s.lastErr
}

// Refresh reads every platform's key set now (at start, and then on a
// schedule: a platform's key rollover and an outage's end are found
// without a launch). It returns the failures, joined.
func (t *Tool) Refresh(ctx context.Context) error {
	var errs []error
	for _, p := range t.all(ctx) {
		if err := t.keySet(p).refresh(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Ready is nil while every platform's key set has been read and its last
// read succeeded; else it names the platforms whose launches fail (never
// read) or use keys read before (the last read failed).
func (t *Tool) Ready() error {
	var errs []error
	for _, p := range t.known() {
		read, err := t.keySet(p).status()
		switch {
		case !read && err == nil:
			errs = append(errs, fmt.Errorf("%s: the key set has not been read yet", p.Name))
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", p.Name, err))
		}
	}
	return errors.Join(errs...)
}

// ToolKey is the Tool's own RSA key, published at /lti/jwks (platforms
// ask for it when the tool is registered; resource-link launches do not
// use it, LTI Advantage services will).
type ToolKey struct {
	key *rsa.PrivateKey
	kid string
}

// GenerateKeyPEM makes a new 2048-bit RSA key, as PKCS#8 PEM.
func GenerateKeyPEM() ([]byte, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParseRSAKey reads an RSA private key of 2048 bits or more from PEM
// (PKCS#8 or PKCS#1), as LTI 1.3 signs (RS256): the tool's key, and the
// demo's sample LMS's.
func ParseRSAKey(data []byte) (*rsa.PrivateKey, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, errors.New("no PEM block: expected an RSA private key (BEGIN PRIVATE KEY or BEGIN RSA PRIVATE KEY)")
	}
	var k *rsa.PrivateKey
	switch b.Type {
	case "RSA PRIVATE KEY":
		pk, err := x509.ParsePKCS1PrivateKey(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("not an RSA private key: %w", err)
		}
		k = pk
	case "PRIVATE KEY":
		pk, err := x509.ParsePKCS8PrivateKey(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("not a private key: %w", err)
		}
		rk, ok := pk.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("a %T, not an RSA key: LTI 1.3 signs with RS256", pk)
		}
		k = rk
	default:
		return nil, fmt.Errorf("a PEM %q block, not a private key", b.Type)
	}
	if k.N.BitLen() < 2048 {
		return nil, fmt.Errorf("a %d-bit RSA key: use 2048 bits or more", k.N.BitLen())
	}
	return k, nil
}

// ParseToolKey reads the tool's key (ParseRSAKey) and names it (its kid).
func ParseToolKey(data []byte) (ToolKey, error) {
	k, err := ParseRSAKey(data)
	if err != nil {
		return ToolKey{}, err
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		return ToolKey{}, err
	}
	sum := sha256.Sum256(der)
	return ToolKey{key: k, kid: base64.RawURLEncoding.EncodeToString(sum[:12])}, nil
}

// KeyID is the key's kid: derived from the public key, the same on every
// instance.
func (k ToolKey) KeyID() string { return k.kid }

// JWKS is the public key set the platform reads.
func (k ToolKey) JWKS() jose.JSONWebKeySet {
	return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.key.PublicKey, KeyID: k.kid, Algorithm: string(jose.RS256), Use: "sig"}}}
}
