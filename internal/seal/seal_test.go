package seal

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	testHashKey  = []byte("0123456789abcdef0123456789abcdef")
	testBlockKey = []byte("fedcba9876543210fedcba9876543210")
)

func TestSealer(t *testing.T) {
	now := time.Unix(1_795_000_000, 0)
	clock := func() time.Time { return now }
	s := New(Session, Keys{Hash: testHashKey, Block: testBlockKey}, Keys{}, time.Hour, clock)
	v := s.Seal("c", []byte("payload"))

	got, sealed, err := s.Open(nil, "c", v)
	require.NoError(t, err)
	assert.Equal(t, "payload", string(got))
	assert.Equal(t, now, sealed)
	assert.NotEqual(t, v, s.Seal("c", []byte("payload")), "a fresh nonce every time")
	assert.NotContains(t, v, base64.RawURLEncoding.EncodeToString([]byte("payload")))

	raw, err := base64.RawURLEncoding.DecodeString(v)
	require.NoError(t, err)
	for i := range raw {
		flipped := append([]byte{}, raw...)
		flipped[i] ^= 0x01
		_, _, err := s.Open(nil, "c", base64.RawURLEncoding.EncodeToString(flipped))
		require.ErrorIs(t, err, ErrNotSealed, "byte %d flipped", i)
	}
	for name, bad := range map[string]string{
		"empty": "", "not base64": "%%%%" + v, "cut": v[:len(v)-2], "too short": v[:20], "padded base64": v + "==", "huge": string(make([]byte, 5000)),
		"line breaks the decoder skips": "AX0" + strings.Repeat("\r", 60) + "0", "only line breaks": strings.Repeat("\n", 80),
	} {
		_, _, err := s.Open(nil, "c", bad)
		assert.ErrorIs(t, err, ErrNotSealed, name)
	}
	_, _, err = s.Open(nil, "other", v)
	assert.ErrorIs(t, err, ErrNotSealed, "the name is bound in")
	_, _, err = New(Session, Keys{[]byte("another deployment's hash key, 32+"), testBlockKey}, Keys{}, time.Hour, clock).Open(nil, "c", v)
	assert.ErrorIs(t, err, ErrNotSealed, "other keys")

	now = now.Add(time.Hour + time.Second)
	_, _, err = s.Open(nil, "c", v)
	assert.ErrorIs(t, err, ErrExpired, "older than maxAge")
	now = now.Add(-time.Hour - 2*time.Minute)
	_, _, err = s.Open(nil, "c", v)
	assert.ErrorIs(t, err, ErrExpired, "sealed in the future, beyond a minute of skew")
}

// The session's key is the one sessions had before the purposes were
// separated: no one is signed out by it.
func TestSessionDerivationUnchanged(t *testing.T) {
	assert.Equal(t, "ssobridge cookie seal v1", Session.hkdfInfo())
	assert.Equal(t, "ssobridge seal v2: oidc flow", Purpose("oidc flow").hkdfInfo())
}

func FuzzOpen(f *testing.F) {
	clock := func() time.Time { return time.Unix(1_795_000_000, 0) }
	s := New(Session, Keys{Hash: testHashKey, Block: testBlockKey}, Keys{}, time.Hour, clock)
	f.Add(s.Seal("c", []byte("payload")), []byte("payload"))
	f.Add("", []byte{})
	f.Add("AQ", []byte{0})
	f.Fuzz(func(t *testing.T, value string, payload []byte) {
		if got, _, err := s.Open(nil, "c", value); err == nil {
			// Only a value this sealer made opens; it gives back what was sealed.
			again, _, err := s.Open(nil, "c", s.Seal("c", got))
			require.NoError(t, err)
			require.Equal(t, got, again)
		}
		got, _, err := s.Open(nil, "c", s.Seal("c", payload))
		if len(payload) < 3000 {
			require.NoError(t, err)
			require.Equal(t, string(payload), string(got))
		}
	})
}
