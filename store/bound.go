package store

import "unicode/utf8"

// Bounds of the text the store keeps from outside (an LMS's name, a
// course's title, a roster's outcome, an audit event's detail): whatever
// a registration, a launch or a roster sent, the store keeps at most this
// much, so no page, log line or console row that shows it grows with it.
const (
	MaxName   = 200  // an LMS's name, a course's title (bytes)
	MaxDetail = 2000 // an audit event's detail, a roster's outcome (bytes)
	MaxKey    = 1024 // an issuer, client id, context id or URL kept as a key (bytes); longer is refused
)

// Cut is s cut to at most n bytes at a character's start, with "…" in
// place of what was cut; s itself when it fits.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = "…"
	i := max(n-len(more), 0)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + more
}
