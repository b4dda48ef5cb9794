package outside

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestQuote(t *testing.T) {
	assert.Equal(t, `"https://lms.example"`, Quote("https://lms.example"))
	assert.Equal(t, `"a\u200bb\n"`, Quote("a\u200bb\n"), "invisible and control characters show")
	long := Quote(strings.Repeat("é", 300000))
	assert.Less(t, len(long), 1024)
	assert.True(t, strings.HasSuffix(long, `…" (600000 bytes)`), long)
	assert.Equal(t, `"`+strings.Repeat("x", Max)+`"`, Quote(strings.Repeat("x", Max)), "at the bound: whole")
}

func TestTrim(t *testing.T) {
	assert.Equal(t, "short", Trim("short", 10))
	got := Trim(strings.Repeat("é", 10), 5) // 2 bytes each: cut at a character's start
	assert.True(t, utf8.ValidString(got))
	assert.Equal(t, "éé… (20 bytes)", got)
}

func FuzzQuote(f *testing.F) {
	f.Add("https://lms.example")
	f.Add(strings.Repeat("\xff", 500))
	f.Fuzz(func(t *testing.T, s string) {
		q := Quote(s)
		if len(q) > 4*Max*4+64 {
			t.Fatalf("%d bytes out of %d in", len(q), len(s))
		}
		if tr := Trim(s, 50); len(tr) > 50+32 || !strings.HasPrefix(s, strings.SplitN(tr, "…", 2)[0]) {
			t.Fatalf("Trim(%q) = %q", s, tr)
		}
	})
}
