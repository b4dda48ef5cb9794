package localpath

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"":                                 "/",
		"/":                                "/",
		"/open?return_to=%2Feditor":        "/open?return_to=%2Feditor",
		"/admin/accounts?q=ada":            "/admin/accounts?q=ada",
		"//evil.example":                   "/",
		"/\\evil.example":                  "/",
		"/%2F%2Fevil.example":              "/",
		"/%2f/evil.example":                "/",
		"/%5Cevil.example":                 "/",
		"https://evil.example/":            "/",
		"javascript:alert(1)":              "/",
		"evil.example":                     "/",
		"/\x00x":                           "/",
		"/a\r\nSet-Cookie: x=1":            "/",
		"/%0d%0aSet-Cookie:%20x=1":         "/",
		"/\tx":                             "/",
		"/ok path":                         "/ok path",
		"/..//evil.example":                "/",
		"/%2e%2e//evil.example":            "/",
		"/x#//evil":                        "/",
		"/" + strings.Repeat("a", MaxNext): "/",
	} {
		assert.Equal(t, want, SafeNext(in), "%q", in)
	}
}

// FuzzSafeNext: whatever comes in, what comes out is "/" or the input, and
// resolved against the bridge's URL it stays on the bridge, on a path that
// a proxy decoding it could not read as another host.
func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"/", "//x", "/\\x", "/%2F%2Fx", "https://x", "/open?return_to=/e", "/%09/x", "/\u2028", "/..//evil", "/x#//evil"} {
		f.Add(s)
	}
	base, _ := url.Parse("https://bridge.example/")
	f.Fuzz(func(t *testing.T, in string) {
		out := SafeNext(in)
		if out != "/" && out != in {
			t.Fatalf("SafeNext(%q) = %q: neither / nor the input", in, out)
		}
		u, err := base.Parse(out)
		if err != nil {
			t.Fatalf("SafeNext(%q) = %q does not parse: %v", in, out, err)
		}
		if u.Host != "bridge.example" || u.Scheme != "https" {
			t.Fatalf("SafeNext(%q) = %q leaves the bridge: %s", in, out, u)
		}
		if strings.HasPrefix(u.Path, "//") || u.Fragment != "" || strings.Contains(u.Path, "\\") || strings.ContainsAny(out, "\r\n\t\x00") {
			t.Fatalf("SafeNext(%q) = %q could be read as another host or split a header", in, out)
		}
	})
}
