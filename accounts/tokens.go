package accounts

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/ssobridge/ssobridge/internal/randid"
)

// NewSessionToken returns a fresh random session token (for the cookie)
// and the ID its record is stored under.
func NewSessionToken() (token, id string) {
	token = randid.Token(32)
	return token, SessionID(token)
}

// SessionID is the stored ID of a session token: its SHA-256, so the
// store (and the admin console, which shows a prefix) never holds a value
// that could be replayed as a cookie.
func SessionID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
