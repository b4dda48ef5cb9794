package portal

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// The rules of a portal token (docs/portal.md, "The token").
const (
	MaxLifetime = 5 * time.Minute  // exp at most this long after iat
	Leeway      = 30 * time.Second // clock difference allowed on exp, iat and nbf
	MinSecret   = 32               // bytes of an HS256 secret
	maxToken    = 8 << 10          // a longer token is refused unread
	usedKind    = "portal-jwt"     // the kind of a jti in the store's single-use ids
)

// ErrRefused is every verification failure: the page says no more, the
// error's text (for the log) says which rule failed.
var ErrRefused = wayin.NewRefusal(views.RefusedInvalid, "portal: token refused")

// ErrOtherAudience is a refusal (it wraps ErrRefused too) of a token
// whose audience is not this bridge's: a link made for another service.
var ErrOtherAudience = wayin.NewRefusal(views.RefusedInvalid, "portal: the token is meant for another audience")

// Config is how tokens are verified: an HS256 Secret or a PublicKey
// (RS256, ES256 or EdDSA by its type), the issuer and the audience.
type Config struct {
	Secret    []byte
	PublicKey crypto.PublicKey
	Issuer    string
	Audience  string
}

// Claims are what a verified token says.
type Claims struct {
	jwt.RegisteredClaims
	Email      string `json:"email"`
	GivenName  string `json:"given_name,omitempty"`
	FamilyName string `json:"family_name,omitempty"`
	ReturnTo   string `json:"return_to,omitempty"`
}

// UsedIDs remembers single-use ids on every instance (accounts.Store).
type UsedIDs interface {
	UseOnce(ctx context.Context, kind, id string, until time.Time) error
}

// Verifier checks portal tokens.
type Verifier struct {
	alg    string
	key    any
	used   UsedIDs
	parser *jwt.Parser
}

// NewVerifier returns a Verifier for cfg; now is the clock (nil: time.Now).
func NewVerifier(cfg Config, used UsedIDs, now func() time.Time) (*Verifier, error) {
	if now == nil {
		now = time.Now
	}
	alg, key, err := algorithm(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("portal: an issuer and an audience are required")
	}
	// Only the configured key's algorithm is accepted: "none", and HS256
	// signed with a public key's bytes, are refused by the parser.
	p := jwt.NewParser(jwt.WithValidMethods([]string{alg}), jwt.WithIssuer(cfg.Issuer), jwt.WithAudience(cfg.Audience),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithLeeway(Leeway), jwt.WithTimeFunc(now))
	return &Verifier{alg: alg, key: key, used: used, parser: p}, nil
}

// Algorithm is the one algorithm the verifier accepts.
func (v *Verifier) Algorithm() string { return v.alg }

func algorithm(cfg Config) (string, any, error) {
	switch k := cfg.PublicKey.(type) {
	case nil:
		if len(cfg.Secret) < MinSecret {
			return "", nil, fmt.Errorf("portal: the HS256 secret is %d bytes; at least %d are required", len(cfg.Secret), MinSecret)
		}
		return jwt.SigningMethodHS256.Alg(), cfg.Secret, nil
	case *rsa.PublicKey:
		return jwt.SigningMethodRS256.Alg(), k, nil
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return "", nil, errors.New("portal: an ECDSA key must be on P-256 (ES256)")
		}
		return jwt.SigningMethodES256.Alg(), k, nil
	case ed25519.PublicKey:
		return jwt.SigningMethodEdDSA.Alg(), k, nil
	}
	return "", nil, fmt.Errorf("portal: a %T key is not supported (use RSA, ECDSA P-256 or Ed25519)", cfg.PublicKey)
}

// refused wraps why a token was refused.
func refused(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRefused}, args...)...)
}

// Verify checks a token's signature (with the configured algorithm only),
// issuer, audience, times (exp required, at most MaxLifetime after iat,
// Leeway allowed), jti and email, then records its jti as used until it
// expires: a token is accepted once, on whichever instance. Refusals wrap
// ErrRefused; a store failure is returned as it is.
func (v *Verifier) Verify(ctx context.Context, token string) (Claims, error) {
	c, err := v.Check(token)
	if err != nil {
		return Claims{}, err
	}
	return c, v.Use(ctx, c)
}

// Use spends the jti of claims Check accepted: the last check of Verify,
// so a token refused for another reason does not spend its jti. A token
// used before is refused (ErrRefused); a store failure is returned as it
// is.
func (v *Verifier) Use(ctx context.Context, c Claims) error {
	switch err := v.used.UseOnce(ctx, usedKind, usedID(c.Issuer, c.ID), c.ExpiresAt.Add(Leeway)); {
	case errors.Is(err, store.ErrUsed):
		return refused("jti %q was used before (a replay)", c.ID)
	case err != nil:
		return fmt.Errorf("portal: remember jti: %w", err)
	}
	return nil
}

// Check makes every check of Verify but the last: the token's jti is
// neither recorded nor looked up. For asking the person first (another
// account is signed in) before Use spends it.
func (v *Verifier) Check(token string) (Claims, error) {
	if len(token) > maxToken {
		return Claims{}, refused("longer than %d bytes", maxToken)
	}
	var c Claims
	if _, err := v.parser.ParseWithClaims(token, &c, v.keyFor); err != nil {
		if errors.Is(err, jwt.ErrTokenInvalidAudience) {
			return Claims{}, refused("%w: %w", ErrOtherAudience, err)
		}
		return Claims{}, refused("%w", err)
	}
	switch {
	case c.IssuedAt == nil:
		return Claims{}, refused("no iat")
	case c.ExpiresAt.Sub(c.IssuedAt.Time) > MaxLifetime:
		return Claims{}, refused("exp is %s after iat; at most %s is allowed", c.ExpiresAt.Sub(c.IssuedAt.Time), MaxLifetime)
	case c.ID == "":
		return Claims{}, refused("no jti")
	case len(c.ID) > 256:
		return Claims{}, refused("jti longer than 256 bytes")
	case !mailaddr.Valid(c.Email):
		return Claims{}, refused("no valid email claim: %s", mailaddr.Problem(c.Email))
	}
	return c, nil
}

// keyFor gives the verification key for a token whose header the bridge
// understands. A header that lists "crit" extensions is refused: the
// bridge implements none, and RFC 7515 §4.1.11 requires refusing a token
// whose critical extensions are not understood (an empty or malformed
// list is invalid too).
func (v *Verifier) keyFor(t *jwt.Token) (any, error) {
	if crit, ok := t.Header["crit"]; ok {
		return nil, fmt.Errorf("the header lists critical extensions the bridge does not implement (crit %v)", crit)
	}
	return v.key, nil
}

// usedID is how a token's jti is remembered: a hash of issuer and jti, so
// whatever bytes a jti holds (a NUL, which PostgreSQL text refuses) the
// stored id is 64 hex characters.
func usedID(issuer, jti string) string {
	sum := sha256.Sum256([]byte(issuer + "\x00" + jti))
	return hex.EncodeToString(sum[:])
}

// SignHS256 makes a token as a portal would (for `ssobridge portal-link`
// and the demo portal): issued now, expiring MaxLifetime later, with a
// random jti.
func SignHS256(secret []byte, issuer, audience string, c Claims, now time.Time) (string, error) {
	c.RegisteredClaims = jwt.RegisteredClaims{Issuer: issuer, Audience: jwt.ClaimStrings{audience}, ID: randid.Token(16),
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(MaxLifetime))}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
}

// LoadPublicKey reads a PEM public key (PKIX "PUBLIC KEY"; RSA, ECDSA
// P-256 or Ed25519) and says which algorithm it verifies.
func LoadPublicKey(path string) (crypto.PublicKey, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, "", errors.New("not a PEM public key (-----BEGIN PUBLIC KEY-----)")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, "", fmt.Errorf("not a public key: %w", err)
	}
	alg, _, err := algorithm(Config{PublicKey: key})
	if err != nil {
		return nil, "", err
	}
	return key, alg, nil
}
