package passhash

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
)

// commonPasswordList is the 20,000 most common passwords of 8 to 64
// printable ASCII characters, lower-cased, most common first: the top of
// the "10 million passwords" list of OWASP SecLists (Daniel Miessler and
// Jason Haddix, CC BY-SA 3.0; SECURITY.md says where it comes from).
// Shorter ones need no list: the length rule refuses them.
//
//go:embed common-passwords.txt
var commonPasswordList string

// commonPasswords is the list sorted, for a binary search; built on first
// use (a slice of 20,000 strings pointing into the embedded text).
var commonPasswords = sync.OnceValue(func() []string {
	l := strings.Fields(commonPasswordList)
	slices.Sort(l)
	return l
})

// isCommonPassword reports whether pw, in any letter case, is on the list.
func isCommonPassword(pw string) bool {
	_, found := slices.BinarySearch(commonPasswords(), strings.ToLower(pw))
	return found
}
