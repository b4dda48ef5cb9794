// Package mailaddr holds the one e-mail rule of the bridge. Local accounts
// (accounts) and platform users (apiclient) must agree on it: an account
// the Partner API client would refuse could never launch.
package mailaddr

import (
	"fmt"
	"net/mail"
	"strings"
	"unicode"
)

// MaxLen is the longest address accepted (RFC 5321's path limit less the
// angle brackets).
const MaxLen = 254

// Valid reports whether s is a bare address such as ada@example.com: no
// display name, no angle brackets or white space, a dot in the domain, at
// most MaxLen bytes, no invisible character (Invisible). Non-ASCII local
// parts and domains (RFC 6532) pass.
func Valid(s string) bool {
	if len(s) > MaxLen || strings.ContainsAny(s, " \t\r\n<>") {
		return false
	}
	if _, ok := Invisible(s); ok {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && strings.Contains(s[strings.LastIndexByte(s, '@'):], ".")
}

// Invisible returns the first Unicode format character of s (category Cf:
// a zero-width space or joiner, a byte-order mark, a soft hyphen, a
// direction mark): it shows as nothing, so "kim\u200b@…" would be an
// account beside "kim@…" that no one can tell apart. No address holds one.
func Invisible(s string) (rune, bool) {
	for _, r := range s {
		if unicode.Is(unicode.Cf, r) {
			return r, true
		}
	}
	return 0, false
}

// Problem says why s is not Valid, for a message that names the field or
// the row ("" when it is valid).
func Problem(s string) string {
	if r, ok := Invisible(s); ok {
		return fmt.Sprintf("%q holds an invisible character (U+%04X): type the address again instead of copying it", s, r)
	}
	if !Valid(s) {
		return fmt.Sprintf("%q is not an e-mail address such as ada@example.com", s)
	}
	return ""
}

// Key is the form under which an address is unique: ASCII letters folded
// to lower case (mail standards treat the domain as case-insensitive, and
// every provider in use does the local part alike), every other character
// kept as it is. Unicode case mapping is never applied: it maps different
// addresses onto one ("kİm" and "Kim" with the Kelvin sign both lower to
// "kim"). Surrounding white space is dropped.
func Key(s string) string {
	s = strings.TrimSpace(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// Equal reports whether a and b name one address: Key(a) == Key(b).
func Equal(a, b string) bool { return Key(a) == Key(b) }

// Domain is the domain of an address in its key's form (the part after
// the last @, ASCII case folded); "" when there is no @.
func Domain(s string) string {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return ""
	}
	return Key(s[at+1:])
}
