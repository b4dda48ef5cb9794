// Package portal is how users arrive from the partner's portal: the
// signed JWT handoff (verifying the portal's token, single-use across
// instances through the store) and the rule for where a sign-in may
// continue (SafeNext). It knows nothing of HTTP routes or pages.
package portal

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNext bounds a next URL.
const MaxNext = 2048

// SafeNext returns next when it is a path on this site, else "/": it must
// start with one "/" (not "//" or "/\", which browsers read as another
// host), hold no backslash, no control character and no scheme, host or
// user, and the same must hold once decoded (so "/%2F%2Fevil.example",
// which a proxy may decode, is refused too).
func SafeNext(next string) string {
	if next == "" || len(next) > MaxNext || next[0] != '/' || !utf8.ValidString(next) ||
		strings.HasPrefix(next, "//") || strings.ContainsRune(next, '\\') || hasControl(next) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return "/"
	}
	if dec := u.Path; !strings.HasPrefix(dec, "/") || strings.HasPrefix(dec, "//") || strings.ContainsRune(dec, '\\') || hasControl(dec) {
		return "/"
	}
	return next
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}
