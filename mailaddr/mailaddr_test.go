package mailaddr

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValid(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"ada@example.com", true},
		{"Ada.Lovelace+video@Example.COM", true},
		{"jürgen+o.x@example.com", true},
		{"zoë@bücher.example", true},
		{"", false},
		{"no-at-sign", false},
		{"ada@localhost", false},
		{"Ada <ada@example.com>", false},
		{"<ada@example.com>", false},
		{"ada @example.com", false},
		{"ada@example.com\n", false},
		{"a@b@example.com", false},
		{strings.Repeat("a", 243) + "@example.com", false}, // 255 bytes
		{strings.Repeat("a", 242) + "@example.com", true},  // 254 bytes
		// Invisible (format) characters: an account beside kim@ that no
		// one could tell from it.
		{"kim\u200b@partner.example", false}, // zero-width space
		{"\ufeffkim@partner.example", false}, // byte-order mark
		{"kim@partner\u00ad.example", false}, // soft hyphen
		{"ki\u200dm@partner.example", false}, // zero-width joiner
		{"kim\u2060@partner.example", false}, // word joiner
		{"kim\u200e@partner.example", false}, // left-to-right mark
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Valid(tt.addr), "%q", tt.addr)
	}
}

// FuzzValid: an accepted address is bare, bounded and has a dotted domain,
// whatever the input.
func FuzzValid(f *testing.F) {
	for _, s := range []string{"ada@example.com", "Ada <ada@example.com>", "a@b", "\"quoted local\"@example.com", "zoë@bücher.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !Valid(s) {
			return
		}
		assert.LessOrEqual(t, len(s), MaxLen)
		assert.False(t, strings.ContainsAny(s, " \t\r\n<>"), "%q", s)
		at := strings.LastIndexByte(s, '@')
		assert.Positive(t, at, "%q", s)
		assert.Contains(t, s[at:], ".", "%q", s)
		_, invisible := Invisible(s)
		assert.False(t, invisible, "%q", s)
		assert.Empty(t, Problem(s))
	})
}

// Problem names what is wrong, an invisible character by its code point.
func TestProblem(t *testing.T) {
	assert.Empty(t, Problem("kim@partner.example"))
	assert.Equal(t, `"kim\u200b@partner.example" holds an invisible character (U+200B): type the address again instead of copying it`, Problem("kim\u200b@partner.example"))
	assert.Equal(t, `"kim" is not an e-mail address such as ada@example.com`, Problem("kim"))
}

// Key folds ASCII letters only: two different addresses never share a key.
func TestKey(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"kim@example.com", "KIM@Example.COM", true},
		{" kim@example.com ", "kim@example.com", true},
		{"kİm@example.com", "kim@example.com", false},      // U+0130: Unicode lower case is "i"
		{"\u212Aim@example.com", "kim@example.com", false}, // Kelvin sign: Unicode lower case is "k"
		{"kim@exampl\u0130.com", "kim@exampli.com", false},
		{"dеmo@example.com", "demo@example.com", false}, // Cyrillic е
		{"zoë@bücher.example", "zoë@bücher.example", true},
		{"Zoë@Bücher.example", "zoë@bücher.example", true},
		{"ZOË@example.com", "zoë@example.com", false}, // non-ASCII letters keep their case
		{"ß@example.com", "ss@example.com", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.same, Equal(tt.a, tt.b), "%q ~ %q", tt.a, tt.b)
		assert.Equal(t, tt.same, Key(tt.a) == Key(tt.b), "%q ~ %q", tt.a, tt.b)
	}
	assert.Equal(t, "kim@example.com", Key("KIM@EXAMPLE.COM"))
}

// Skeleton and MixesScripts mark look-alikes without merging them.
func TestLookAlikes(t *testing.T) {
	for _, tt := range []struct {
		a, b  string
		alike bool
		mixed bool // whether a mixes scripts
	}{
		{"dеmo@example.com", "demo@example.com", true, true}, // Cyrillic е
		{"kİm@example.com", "kim@example.com", true, false},
		{"\u212Aim@example.com", "kim@example.com", true, false},
		{"ａｄａ@example.com", "ada@example.com", true, false}, // fullwidth
		{"аdа@ехаmple.com", "ada@example.com", true, true},
		{"олег@пример.рф", "oleg@example.com", false, false}, // all Cyrillic: a name, not a spoof
		{"ada@example.com", "bob@example.com", false, false},
		{"kim\u200b@partner.example", "kim@partner.example", true, false}, // invisible: looks the same
		{"\ufeffkim@partner.exam\u00adple", "kim@partner.example", true, false},
	} {
		assert.Equal(t, tt.alike, Skeleton(tt.a) == Skeleton(tt.b), "%q ~ %q", tt.a, tt.b)
		assert.Equal(t, tt.mixed, MixesScripts(tt.a), "%q", tt.a)
	}
}

// FuzzKey: Key is idempotent, changes only ASCII capitals, and so never
// maps an address onto one that differs in anything but ASCII case.
func FuzzKey(f *testing.F) {
	for _, s := range []string{"kim@example.com", "kİm@example.com", "\u212Aim@EXAMPLE.com", "ZOË@x.y", "\xff@x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := Key(s)
		assert.Equal(t, k, Key(k))
		trimmed := strings.TrimSpace(s)
		require.Len(t, k, len(trimmed))
		for i := range len(k) {
			if trimmed[i] != k[i] {
				assert.True(t, 'A' <= trimmed[i] && trimmed[i] <= 'Z' && k[i] == trimmed[i]+'a'-'A', "%q -> %q", s, k)
			}
		}
	})
}
