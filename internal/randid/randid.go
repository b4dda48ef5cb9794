// Package randid makes the bridge's random identifiers and secrets, all
// from crypto/rand: an identifier that names something a client may hold
// (a session, a ticket, a state) must not be guessable.
package randid

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
)

// Bytes returns n random bytes.
func Bytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return b
}

// Hex returns n random bytes as lower-case hex (2n characters): for names
// that end up in logs, SQL and file names.
func Hex(n int) string { return hex.EncodeToString(Bytes(n)) }

// Token returns n random bytes as unpadded base64url: safe in a URL, a
// cookie and a header, and shorter than Hex.
func Token(n int) string { return base64.RawURLEncoding.EncodeToString(Bytes(n)) }
