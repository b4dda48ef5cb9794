package portal_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/ssobridge/ssobridge/wayin/portal"
)

const (
	issuer   = "https://portal.example"
	audience = "https://sso.example"
)

// madeAt is when testdata's tokens were issued (make-tokens.sh).
var madeAt = time.Unix(1795000000, 0)

func openStore(t *testing.T) store.Store {
	s, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "db"), func() time.Time { return madeAt })
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func verifier(t *testing.T, cfg portal.Config, now time.Time) *portal.Verifier {
	if cfg.Issuer == "" {
		cfg.Issuer, cfg.Audience = issuer, audience
	}
	v, err := portal.NewVerifier(cfg, openStore(t), func() time.Time { return now })
	require.NoError(t, err)
	return v
}

func read(t *testing.T, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// Tokens made by openssl alone (testdata/make-tokens.sh), as a portal in
// another language makes them, are accepted, with every claim read.
func TestTokensMadeOutsideGo(t *testing.T) {
	for _, tc := range []struct{ token, key, alg string }{
		{"hs256.jwt", "hs256.secret", "HS256"}, {"rs256.jwt", "rs256.pub", "RS256"}, {"eddsa.jwt", "ed25519.pub", "EdDSA"},
	} {
		t.Run(tc.alg, func(t *testing.T) {
			cfg := portal.Config{}
			if tc.alg == "HS256" {
				cfg.Secret = read(t, tc.key)
			} else {
				key, alg, err := portal.LoadPublicKey(filepath.Join("testdata", tc.key))
				require.NoError(t, err)
				assert.Equal(t, tc.alg, alg)
				cfg.PublicKey = key
			}
			v := verifier(t, cfg, madeAt.Add(10*time.Second))
			c, err := v.Verify(context.Background(), strings.TrimSpace(string(read(t, tc.token))))
			require.NoError(t, err)
			assert.Equal(t, "ada@example.com", c.Email)
			assert.Equal(t, "Ada", c.GivenName)
			assert.Equal(t, "Lovelace", c.FamilyName)
			assert.Equal(t, "/editor/projects/42", c.ReturnTo)
			assert.Equal(t, "openssl-"+strings.ToLower(tc.alg), c.ID)
		})
	}
}

var secret = []byte("0123456789abcdef0123456789abcdef-test")

// ES256 (no openssl token: its signature is DER there, raw r||s in a JWT):
// a token signed with the private half verifies against the public half.
func TestES256(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	v := verifier(t, portal.Config{PublicKey: &key.PublicKey}, madeAt.Add(10*time.Second))
	assert.Equal(t, "ES256", v.Algorithm())
	c, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodES256, key, nil))
	require.NoError(t, err)
	assert.Equal(t, "ada@example.com", c.Email)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	_, err = portal.NewVerifier(portal.Config{PublicKey: &p384.PublicKey, Issuer: issuer, Audience: audience}, nil, nil)
	assert.ErrorContains(t, err, "P-256", "ES256 only")
}

// sign makes a token with the claims changed by edit, signed with method
// and key.
// signWithHeader is sign with header fields added (e.g. crit).
func signWithHeader(t *testing.T, header map[string]any) string {
	c := jwt.MapClaims{"iss": issuer, "aud": audience, "iat": madeAt.Unix(), "exp": madeAt.Add(2 * time.Minute).Unix(),
		"jti": "j-" + time.Now().Format("150405.000000000"), "email": "ada@example.com"}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	maps.Copy(tok.Header, header)
	s, err := tok.SignedString(secret)
	require.NoError(t, err)
	return s
}

func sign(t *testing.T, method jwt.SigningMethod, key any, edit func(jwt.MapClaims)) string {
	c := jwt.MapClaims{"iss": issuer, "aud": audience, "iat": madeAt.Unix(), "exp": madeAt.Add(2 * time.Minute).Unix(),
		"jti": "j-" + time.Now().Format("150405.000000000"), "email": "ada@example.com"}
	if edit != nil {
		edit(c)
	}
	tok, err := jwt.NewWithClaims(method, c).SignedString(key)
	require.NoError(t, err)
	return tok
}

// Every refusal of a portal token (docs/portal.md): each wraps ErrRefused (one page for all) and
// says in its text (the log) which rule failed.
func TestRefusals(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	pubPEM := read(t, "rs256.pub")
	rsPub, _, err := portal.LoadPublicKey(filepath.Join("testdata", "rs256.pub"))
	require.NoError(t, err)
	now := madeAt.Add(10 * time.Second)
	hs := portal.Config{Secret: secret}
	rs := portal.Config{PublicKey: rsPub}

	tests := []struct {
		name  string
		cfg   portal.Config
		token func() string
		why   string
	}{
		{"bad signature", hs, func() string {
			return sign(t, jwt.SigningMethodHS256, []byte("another-secret-of-32-bytes-or-more!"), nil)
		}, "signature is invalid"},
		{"tampered payload", hs, func() string {
			p := strings.Split(sign(t, jwt.SigningMethodHS256, secret, nil), ".")
			other := strings.Split(sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { c["email"] = "eve@example.com" }), ".")
			return p[0] + "." + other[1] + "." + p[2]
		}, "signature is invalid"},
		{"crit names an extension", hs, func() string {
			return signWithHeader(t, map[string]any{"crit": []string{"exp"}, "b64": false})
		}, "crit"},
		{"crit empty", hs, func() string { return signWithHeader(t, map[string]any{"crit": []string{}}) }, "crit"},
		{"crit not a list", hs, func() string { return signWithHeader(t, map[string]any{"crit": "b64"}) }, "crit"},
		{"alg none", hs, func() string { return sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, nil) }, "signing method none is invalid"},
		{"HS512 to an HS256 verifier", hs, func() string { return sign(t, jwt.SigningMethodHS512, secret, nil) }, "signing method HS512 is invalid"},
		{"RS256 to an HS256 verifier", hs, func() string { return sign(t, jwt.SigningMethodRS256, rsaKey, nil) }, "signing method RS256 is invalid"},
		{"HS256 signed with the public key's bytes", rs, func() string { return sign(t, jwt.SigningMethodHS256, pubPEM, nil) }, "signing method HS256 is invalid"},
		{"ES256 to an RS256 verifier", rs, func() string { return sign(t, jwt.SigningMethodES256, ecKey, nil) }, "signing method ES256 is invalid"},
		{"expired", hs, func() string {
			return sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) {
				c["iat"], c["exp"] = madeAt.Add(-3*time.Minute).Unix(), madeAt.Add(-31*time.Second).Unix()
			})
		}, "token is expired"},
		{"no exp", hs, func() string {
			return sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { delete(c, "exp") })
		}, "exp claim is required"},
		{"too long-lived", hs, func() string {
			return sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { c["exp"] = madeAt.Add(6 * time.Minute).Unix() })
		}, "at most 5m0s"},
		{"no iat", hs, func() string {
			return sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { delete(c, "iat") })
		}, "no iat"},
		{"issued in the future", hs, func() string {
			return sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) {
				c["iat"], c["exp"] = madeAt.Add(time.Minute).Unix(), madeAt.Add(2*time.Minute).Unix()
			})
		}, "token used before issued"},
		{"wrong issuer", hs, func() string {
			return sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })
		}, "token has invalid issuer"},
		{"wrong audience", hs, func() string {
			return sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { c["aud"] = "https://other.example" })
		}, "token has invalid audience"},
		{"missing email", hs, func() string {
			return sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { delete(c, "email") })
		}, "no valid email"},
		{"not an email", hs, func() string {
			return sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { c["email"] = "Ada <ada@example.com>" })
		}, "no valid email"},
		{"missing jti", hs, func() string {
			return sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { delete(c, "jti") })
		}, "no jti"},
		{"garbage", hs, func() string { return "not.a.token" }, "token is malformed"},
		{"too long", hs, func() string { return strings.Repeat("a", 9000) }, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := verifier(t, tt.cfg, now).Verify(context.Background(), tt.token())
			require.ErrorIs(t, err, portal.ErrRefused)
			assert.Contains(t, err.Error(), tt.why)
			assert.Equal(t, tt.name == "wrong audience", errors.Is(err, portal.ErrOtherAudience), "only another audience is told apart")
		})
	}

	t.Run("replayed jti, on another instance too", func(t *testing.T) {
		s := openStore(t)
		a, err := portal.NewVerifier(portal.Config{Secret: secret, Issuer: issuer, Audience: audience}, s, func() time.Time { return now })
		require.NoError(t, err)
		b, err := portal.NewVerifier(portal.Config{Secret: secret, Issuer: issuer, Audience: audience}, s, func() time.Time { return now })
		require.NoError(t, err)
		tok := sign(t, jwt.SigningMethodHS256, secret, nil)
		_, err = a.Verify(context.Background(), tok)
		require.NoError(t, err)
		_, err = b.Verify(context.Background(), tok)
		require.ErrorIs(t, err, portal.ErrRefused)
		assert.Contains(t, err.Error(), "a replay")
	})
}

// A refused token spends nothing, every jti is remembered, and the clocks
// get 30 s of leeway.
func TestRefusalEdges(t *testing.T) {
	now := madeAt.Add(10 * time.Second)
	hs := portal.Config{Secret: secret}
	t.Run("a refused token does not spend its jti", func(t *testing.T) {
		v := verifier(t, hs, now)
		bad := sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { c["jti"], c["aud"] = "same", "https://other.example" })
		good := sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { c["jti"] = "same" })
		_, err := v.Verify(context.Background(), bad)
		require.ErrorIs(t, err, portal.ErrRefused)
		_, err = v.Verify(context.Background(), good)
		assert.NoError(t, err)
	})
	t.Run("any jti, a NUL byte too, is remembered and refused the second time", func(t *testing.T) {
		v := verifier(t, hs, now)
		tok := sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { c["jti"] = "a\x00b\n" + strings.Repeat("é", 100) })
		_, err := v.Verify(context.Background(), tok)
		require.NoError(t, err)
		_, err = v.Verify(context.Background(), tok)
		require.ErrorIs(t, err, portal.ErrRefused)
	})
	t.Run("30 s of leeway", func(t *testing.T) {
		tok := sign(t, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) {
			c["iat"], c["exp"] = madeAt.Add(-2*time.Minute).Unix(), madeAt.Add(-20*time.Second).Unix()
		})
		_, err := verifier(t, hs, now.Add(-10*time.Second)).Verify(context.Background(), tok)
		assert.NoError(t, err, "expired 10 s ago: within the leeway")
	})
}

func TestConfigRefused(t *testing.T) {
	for name, cfg := range map[string]portal.Config{
		"short secret": {Secret: []byte("short"), Issuer: issuer, Audience: audience},
		"no issuer":    {Secret: secret, Audience: audience},
		"no audience":  {Secret: secret, Issuer: issuer},
	} {
		_, err := portal.NewVerifier(cfg, nil, nil)
		assert.Error(t, err, name)
	}
	_, _, err := portal.LoadPublicKey(filepath.Join("testdata", "hs256.secret"))
	assert.ErrorContains(t, err, "not a PEM public key")
	_, _, err = portal.LoadPublicKey(filepath.Join("testdata", "rs256.key"))
	assert.ErrorContains(t, err, "not a PEM public key", "a private key is not the public key")
}

// SignHS256 makes what Verify accepts (portal-link and the demo portal).
func TestSignHS256RoundTrip(t *testing.T) {
	tok, err := portal.SignHS256(secret, issuer, audience, portal.Claims{Email: "grace@example.com", GivenName: "Grace", ReturnTo: "/editor"}, madeAt)
	require.NoError(t, err)
	c, err := verifier(t, portal.Config{Secret: secret}, madeAt.Add(time.Minute)).Verify(context.Background(), tok)
	require.NoError(t, err)
	assert.Equal(t, "grace@example.com", c.Email)
	assert.Equal(t, "/editor", c.ReturnTo)
	assert.Equal(t, portal.MaxLifetime, c.ExpiresAt.Sub(c.IssuedAt.Time))
}
