package sqlstore

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// What an outsider names (an LMS's issuer, a learner's subject, a
// course's id, a token's jti) is kept as text every database takes:
// PostgreSQL's text refuses NUL and invalid UTF-8, which JSON's \u0000
// and a byte string can carry. keyIn writes such a value as a marked
// base64 text, reversibly (keyOut reads it back), and leaves every other
// value as it is; a value that happens to start with the mark is
// encoded too, so two values never share one text.
const keyMark = "\x01b64:"

func keyIn(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) && !strings.HasPrefix(s, keyMark) {
		return s
	}
	return keyMark + base64.RawStdEncoding.EncodeToString([]byte(s))
}

func keyOut(s string) string {
	if !strings.HasPrefix(s, keyMark) {
		return s
	}
	b, err := base64.RawStdEncoding.DecodeString(s[len(keyMark):])
	if err != nil {
		return s
	}
	return string(b)
}

// plain is outside text that is shown, not looked up (a course's title,
// an audit detail): NUL dropped and invalid UTF-8 replaced, so that every
// database keeps it.
func plain(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}
