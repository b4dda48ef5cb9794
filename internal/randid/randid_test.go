package randid

import (
	"encoding/base64"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShapes(t *testing.T) {
	for _, n := range []int{1, 8, 16, 32} {
		h := Hex(n)
		assert.Len(t, h, 2*n)
		_, err := hex.DecodeString(h)
		require.NoError(t, err)
		tok := Token(n)
		b, err := base64.RawURLEncoding.DecodeString(tok)
		require.NoError(t, err)
		assert.Len(t, b, n)
		assert.Len(t, Bytes(n), n)
	}
}

// Identifiers do not repeat (128 bits: a repeat would mean no randomness).
func TestNoRepeats(t *testing.T) {
	seen := map[string]bool{}
	for range 10000 {
		id := Token(16)
		require.False(t, seen[id], "repeated %s", id)
		seen[id] = true
	}
}
