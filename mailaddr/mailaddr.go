// Package mailaddr holds the one e-mail rule of the bridge. Local accounts
// (accounts) and platform users (apiclient) must agree on it: an account
// the Partner API client would refuse could never launch.
package mailaddr

import (
	"net/mail"
	"strings"
)

// MaxLen is the longest address accepted (RFC 5321's path limit less the
// angle brackets).
const MaxLen = 254

// Valid reports whether s is a bare address such as ada@example.com: no
// display name, no angle brackets or white space, a dot in the domain, at
// most MaxLen bytes. Non-ASCII local parts and domains (RFC 6532) pass.
func Valid(s string) bool {
	if len(s) > MaxLen || strings.ContainsAny(s, " \t\r\n<>") {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && strings.Contains(s[strings.LastIndexByte(s, '@'):], ".")
}
