package csvsafe

import (
	"encoding/csv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCell(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ada@example.com", "ada@example.com"},
		{"=1+2@example.com", "'=1+2@example.com"},
		{"=cmd|'/Ccalc'!A0@example.com", "'=cmd|'/Ccalc'!A0@example.com"},
		{"+cmd@example.com", "'+cmd@example.com"},
		{"-x@example.com", "'-x@example.com"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"", ""},
		{"created", "created"},
		{"a=b", "a=b"}, // only the first character makes a formula
	} {
		assert.Equal(t, tt.want, Cell(tt.in), "%q", tt.in)
	}
}

// A written file reads back as CSV, every cell inert and otherwise as given.
func TestWriterRoundTrip(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	rows := [][]string{{"email", "reason"}, {"=1+2@example.com", "platform said: -1, \"bad\"\nline two"}, {"ada@example.com", "@risk"}}
	for _, r := range rows {
		require.NoError(t, w.Write(r))
	}
	w.Flush()
	require.NoError(t, w.Error())
	got, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, []string{"'=1+2@example.com", "platform said: -1, \"bad\"\nline two"}, got[1])
	assert.Equal(t, []string{"ada@example.com", "'@risk"}, got[2])
}

// FuzzCell: no cell comes out starting with a formula character, and one
// that was escaped is the input behind an apostrophe.
func FuzzCell(f *testing.F) {
	for _, s := range []string{"=1+2", "ada@example.com", "", "'", "\t", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Cell(s)
		if c != "" {
			assert.NotContains(t, "=+-@\t\r", string(c[0]), "%q", s)
		}
		assert.True(t, c == s || c == "'"+s, "%q -> %q", s, c)
	})
}
