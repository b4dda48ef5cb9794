// Package localpath holds the one rule for a path the bridge sends a
// browser to on a host it names: where a sign-in continues (next) and
// where the editor opens (return_to). A path that passes stays on that
// host however it is read: as written, percent-decoded, or resolved with
// its dot segments by a browser or the platform.
package localpath

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrNotLocal is wrapped by every refusal of Check.
var ErrNotLocal = errors.New("not a local path")

// Check accepts s when it is a path on the same host, such as
// /editor/projects/42?tab=audio: it starts with one slash, and neither as
// written nor percent-decoded does it start with two, hold a backslash, a
// control character or a dot segment ("." or ".."), nor does it carry a
// scheme, host or fragment.
func Check(s string) error {
	switch {
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: not valid UTF-8", ErrNotLocal)
	case s == "" || s[0] != '/':
		return fmt.Errorf("%w: it must start with /", ErrNotLocal)
	case strings.ContainsRune(s, '#'):
		return fmt.Errorf("%w: it must not contain a fragment (#)", ErrNotLocal)
	}
	if err := checkPath(s); err != nil {
		return err
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return fmt.Errorf("%w: it must be a path, not a URL", ErrNotLocal)
	}
	return checkPath(u.Path) // decoded: %2F%2F, %5C, %09 and %2E%2E are what they stand for
}

// checkPath applies the rule to one reading of the path.
func checkPath(p string) error {
	switch {
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("%w: it must start with /", ErrNotLocal)
	case strings.HasPrefix(p, "//"):
		return fmt.Errorf("%w: it must not start with //", ErrNotLocal)
	case strings.ContainsRune(p, '\\'):
		return fmt.Errorf("%w: it must not contain a backslash", ErrNotLocal)
	case strings.ContainsRune(p, '#'):
		// As written it is refused above; decoded (%23), a platform that
		// decodes before it redirects would cut the path there.
		return fmt.Errorf("%w: it must not contain a fragment (#, or %%23)", ErrNotLocal)
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: it must not contain control characters", ErrNotLocal)
	}
	path, _, _ := strings.Cut(p, "?")
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("%w: it must not contain . or .. segments", ErrNotLocal)
		}
	}
	return nil
}

// MaxReturnTo bounds a path of the editor (/open's return_to, a deep
// link's path).
const MaxReturnTo = 1024

// CheckReturnTo accepts a path of the editor: at most MaxReturnTo bytes,
// and Check's rule ("" is no path: the caller says whether it may be
// empty).
func CheckReturnTo(s string) error {
	if len(s) > MaxReturnTo {
		return fmt.Errorf("%w: longer than %d bytes", ErrNotLocal, MaxReturnTo)
	}
	return Check(s)
}

// MaxNext bounds where a sign-in continues (next).
const MaxNext = 2048

// SafeNext returns next when it is a path on this site (Check, at most
// MaxNext bytes), else "/": where a sign-in continues, whichever way in
// it took.
func SafeNext(next string) string {
	if len(next) > MaxNext || Check(next) != nil {
		return "/"
	}
	return next
}
