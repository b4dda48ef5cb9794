package localpath

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{"/", "/editor", "/editor/projects/42?tab=audio&x=%2F%2F", "/a/b.c/d..e/", "/caf%C3%A9", "/x?next=/..//evil"} {
		assert.NoError(t, Check(ok), "%q", ok)
	}
	for _, bad := range []string{
		"", "editor", "https://evil.example/", "//evil.example", "/\\evil.example", "/x\\y",
		"/%2F%2Fevil.example", "/%2f/evil", "/%5Cevil.example", // decoded: // and \
		"/..//evil", "/../evil", "/a/../..//evil", "/./", "/%2E%2E//evil", "/a/%2e/b", // dot segments
		"/%09/evil", "/\t/evil", "/x%0D%0ALocation:%20//evil", "/%7F", "/%C2%85", // control characters
		"/x#//evil", "/#", "/%23//evil.example", "/a%23b", "/%2523x%23", // fragments, as written and decoded
		"/\xff", "/%zz",
	} {
		err := Check(bad)
		assert.ErrorIs(t, err, ErrNotLocal, "%q", bad)
	}
}

// FuzzCheck: whatever passes stays on the host it is resolved against,
// read as written or decoded, with dot segments resolved.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"/editor", "/%2F%2Fevil", "/..//evil", "/%09/evil", "/x#//evil", "/a/./b", "/%2e%2e/x", "/\\x", "/%23//evil"} {
		f.Add(s)
	}
	base, _ := url.Parse("https://platform.example/api/5/")
	f.Fuzz(func(t *testing.T, s string) {
		if Check(s) != nil {
			return
		}
		u, err := url.Parse(s)
		require.NoError(t, err)
		resolved := base.ResolveReference(u)
		assert.Equal(t, "platform.example", resolved.Host, "%q", s)
		assert.False(t, strings.HasPrefix(resolved.Path, "//"), "%q resolves to %q", s, resolved.Path)
		dec, err := url.PathUnescape(u.EscapedPath())
		require.NoError(t, err)
		assert.False(t, strings.HasPrefix(dec, "//") || strings.ContainsAny(dec, "\\#"), "%q", s)
		again, err := url.Parse("https://platform.example" + dec)
		if err == nil {
			assert.Equal(t, "platform.example", again.Host, "%q decoded", s)
		}
	})
}
