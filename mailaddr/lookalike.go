package mailaddr

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// confusables maps letters that look like ASCII letters or digits in
// common fonts onto them: Cyrillic and Greek homoglyphs, and letter-like
// symbols. It is a short list of the usual spoofs, not Unicode's full
// confusables table; fullwidth forms and accents are handled apart.
var confusables = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'һ': 'h', 'і': 'i', 'ї': 'i', 'ј': 'j', 'к': 'k', 'м': 'm', 'н': 'h',
	'о': 'o', 'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'ѕ': 's', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ѵ': 'v', 'ɡ': 'g',
	'А': 'a', 'В': 'b', 'Е': 'e', 'Ё': 'e', 'Н': 'h', 'І': 'i', 'Ј': 'j', 'К': 'k', 'М': 'm', 'О': 'o',
	'Р': 'p', 'С': 'c', 'Т': 't', 'У': 'y', 'Х': 'x', 'Ѕ': 's', 'Ԁ': 'd', 'Ԛ': 'q', 'Ԝ': 'w',
	// Greek
	'α': 'a', 'ο': 'o', 'ρ': 'p', 'ν': 'v', 'ι': 'i', 'κ': 'k', 'τ': 't', 'υ': 'u', 'χ': 'x', 'ϲ': 'c',
	'Α': 'a', 'Β': 'b', 'Ε': 'e', 'Ζ': 'z', 'Η': 'h', 'Ι': 'i', 'Κ': 'k', 'Μ': 'm', 'Ν': 'n', 'Ο': 'o',
	'Ρ': 'p', 'Τ': 't', 'Υ': 'y', 'Χ': 'x',
	// Letter-like symbols, dotted and dotless i, and the usual digit stand-ins
	'K': 'k', 'Å': 'a', 'ℓ': 'l', 'ı': 'i', 'İ': 'i', 'ǀ': 'l', 'ℹ': 'i',
}

// Skeleton is what an address looks like: lower case, fullwidth forms and
// homoglyphs mapped to their ASCII look-alike, combining marks dropped.
// Two different addresses with one skeleton look alike ("dеmo@" with a
// Cyrillic е and "demo@"); the skeleton is for showing that, never for
// matching accounts.
func Skeleton(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(unicode.ToLower(r))
		case unicode.Is(unicode.Mn, r), unicode.Is(unicode.Cf, r):
			// combining marks (a dot above, an accent) add nothing to the
			// look; format characters (zero-width, BOM) show as nothing
		case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII
			b.WriteRune(unicode.ToLower(r - 0xFF01 + '!'))
		default:
			if a, ok := confusables[r]; ok {
				b.WriteRune(a)
			} else {
				b.WriteRune(unicode.ToLower(r))
			}
		}
	}
	return b.String()
}

// MixesScripts reports whether a label of the address (its local part or
// a domain label) mixes Latin letters with Cyrillic or Greek ones: the
// usual way to make a look-alike of an existing address.
func MixesScripts(s string) bool {
	for _, label := range strings.FieldsFunc(s, func(r rune) bool { return r == '@' || r == '.' }) {
		var latin, other bool
		for _, r := range label {
			switch {
			case unicode.Is(unicode.Latin, r):
				latin = true
			case unicode.Is(unicode.Cyrillic, r) || unicode.Is(unicode.Greek, r):
				other = true
			}
		}
		if latin && other {
			return true
		}
	}
	return false
}
