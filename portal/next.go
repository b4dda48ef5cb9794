// Package portal is how users arrive from the partner's portal: the
// signed JWT handoff (verifying the portal's token, single-use across
// instances through the store) and the rule for where a sign-in may
// continue (SafeNext). It knows nothing of HTTP routes or pages.
package portal

import "github.com/ssobridge/ssobridge/localpath"

// MaxNext bounds a next URL.
const MaxNext = 2048

// SafeNext returns next when it is a path on this site (localpath.Check,
// at most MaxNext bytes), else "/".
func SafeNext(next string) string {
	if len(next) > MaxNext || localpath.Check(next) != nil {
		return "/"
	}
	return next
}
