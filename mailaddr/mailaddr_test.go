package mailaddr

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
	})
}
