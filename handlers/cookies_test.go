package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCookieValue(t *testing.T) {
	tests := []struct {
		name    string
		headers []string
		want    string
		found   bool
	}{
		{"one", []string{"s=abc"}, "abc", true},
		{"among others", []string{"a=1; s=abc; b=2"}, "abc", true},
		{"spaces", []string{"a=1;   s=abc  ; b=2"}, "abc", true},
		{"quoted", []string{`s="abc"`}, "abc", true},
		{"first of two", []string{"s=first; s=second"}, "first", true},
		{"second header line", []string{"a=1", "s=abc"}, "abc", true},
		{"empty value", []string{"s="}, "", true},
		{"a longer name is another cookie", []string{"ss=abc; s_=x"}, "", false},
		{"a prefix is another cookie", []string{"xs=abc"}, "", false},
		{"no equals sign", []string{"s"}, "", true},
		{"spaces around the name", []string{" s =abc"}, "abc", true},
		{"none", nil, "", false},
		{"value with equals signs", []string{"s=a=b=="}, "a=b==", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &http.Request{Header: http.Header{"Cookie": tt.headers}}
			v, ok := cookieValue(r, "s")
			assert.Equal(t, tt.found, ok)
			assert.Equal(t, tt.want, v)
		})
	}
}

// Where net/http finds exactly one cookie of the name with a valid value
// (RFC 6265 cookie-octets), cookieValue finds the same value; invalid
// values it returns as they are, and they do not open.
func FuzzCookieValue(f *testing.F) {
	f.Add("a=1; s=abc; b=2")
	f.Add(`s="q"; t=2`)
	f.Add("s=a=b; s=c")
	f.Fuzz(func(t *testing.T, header string) {
		r := &http.Request{Header: http.Header{"Cookie": {header}}}
		v, ok := cookieValue(r, "s")
		same := 0
		for _, c := range r.Cookies() {
			if c.Name == "s" {
				same++
			}
		}
		if c, err := r.Cookie("s"); err == nil && same == 1 && strings.Count(header, "s=") == 1 && cookieOctets(v) {
			if !ok || v != c.Value {
				t.Fatalf("net/http: %q, cookieValue: %q (%v)", c.Value, v, ok)
			}
		}
	})
}

// cookieOctets: every byte of v is an RFC 6265 cookie-octet.
func cookieOctets(v string) bool {
	for i := range len(v) {
		b := v[i]
		if b < 0x21 || b > 0x7e || b == '"' || b == ',' || b == ';' || b == '\\' {
			return false
		}
	}
	return true
}
