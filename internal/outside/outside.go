// Package outside bounds what an outsider sent (a login's iss, an LMS's
// error text, a path) before it reaches a log line, a page or the audit:
// a 300 KiB parameter must not become a 1.5 MB log line or a 1.2 MB page.
package outside

import (
	"strconv"
	"unicode/utf8"
)

// Max is how many characters of an outsider's value are shown.
const Max = 200

// Quote is s in Go's quoted form (control and invisible characters show
// as escapes), cut past Max characters with an ellipsis and the length
// it had: "https://a.example/aaaa…" (300000 bytes).
func Quote(s string) string {
	if utf8.RuneCountInString(s) <= Max {
		return strconv.Quote(s)
	}
	return strconv.Quote(cut(s, Max)+"…") + " (" + strconv.Itoa(len(s)) + " bytes)"
}

// Trim cuts s past n bytes (at a character's start) with an ellipsis and
// the length it had; shorter, it is s.
func Trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// cut is the first n characters of s.
func cut(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}
