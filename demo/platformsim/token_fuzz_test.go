package platformsim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzOpenToken: a token's text comes from any browser. Whatever it is,
// opening it never panics, and only what sealToken made opens; a sealed
// token opens to exactly what went in, and any one-byte change of it does
// not open.
func FuzzOpenToken(f *testing.F) {
	f.Add("", int64(0), "", uint16(0))
	f.Add("AAAA", int64(1_000_001), "/editor/projects?id=7", uint16(3))
	f.Add("not-a-token*", int64(-5), "/ü", uint16(70))
	s, err := New(Config{Credentials: []Credential{NewCredential(true)}})
	require.NoError(f, err)
	expires := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, text string, userID int64, redirectTo string, flip uint16) {
		if got, ok := s.openToken(text); ok {
			// Only a forged MAC could get here: 2^-128 per try.
			t.Fatalf("opened text the emulator never sealed: %q -> %+v", text, got)
		}
		token := s.sealToken(userID, expires, redirectTo)
		got, ok := s.openToken(token)
		require.True(t, ok)
		assert.Equal(t, userID, got.userID)
		assert.Equal(t, expires.UnixNano(), got.expires)
		assert.Equal(t, redirectTo, got.redirectTo)
		b := []byte(token)
		i := int(flip) % len(b)
		b[i] ^= 1 // stays in the base64url alphabet or makes it invalid: either way not this token
		if string(b) != token {
			_, ok = s.openToken(string(b))
			assert.False(t, ok, "token changed at %d still opens", i)
		}
	})
}
