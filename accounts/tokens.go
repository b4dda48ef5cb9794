package accounts

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// NewSessionToken returns a fresh random session token (for the cookie)
// and the ID its record is stored under.
func NewSessionToken() (token, id string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, SessionID(token)
}

// SessionID is the stored ID of a session token: its SHA-256, so the
// store (and the admin console, which shows a prefix) never holds a value
// that could be replayed as a cookie.
func SessionID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
