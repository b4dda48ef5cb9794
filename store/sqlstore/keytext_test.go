package sqlstore

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Any key round-trips as text every database takes (valid UTF-8, no
// NUL), and a key already looking encoded is encoded again, not read as
// another's.
func FuzzKeyText(f *testing.F) {
	for _, s := range []string{"", "a", "a\x00b", "\xff", "🎬", keyMark + "YQ", keyMark} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in := keyIn(s)
		if !utf8.ValidString(in) || strings.ContainsRune(in, 0) {
			t.Fatalf("keyIn(%q) = %q: not text every database takes", s, in)
		}
		if out := keyOut(in); out != s {
			t.Fatalf("keyOut(keyIn(%q)) = %q", s, out)
		}
		if p := plain(s); !utf8.ValidString(p) || strings.ContainsRune(p, 0) {
			t.Fatalf("plain(%q) = %q", s, p)
		}
	})
}
