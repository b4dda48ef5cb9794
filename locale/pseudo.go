package locale

import (
	"strings"

	"github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

// Pseudo is the pseudo-language: the English catalog with every letter
// accented and every message between ⟦ and ⟧. A page in it shows at a
// glance (and to a test) any text that did not come from the catalog.
var Pseudo = language.MustParse("en-XA")

// PseudoOpen and PseudoClose enclose every pseudo-language message.
const (
	PseudoOpen  = "⟦"
	PseudoClose = "⟧"
)

// addPseudo adds the pseudo-language, made from the English catalog.
func addPseudo(bundle *i18n.Bundle) error {
	en, err := CatalogMessages("en")
	if err != nil {
		return err
	}
	msgs := make([]*i18n.Message, 0, len(en))
	for _, m := range en {
		msgs = append(msgs, &i18n.Message{ID: m.ID, One: pseudoText(m.One), Other: pseudoText(m.Other)})
	}
	return bundle.AddMessages(Pseudo, msgs...)
}

var accents = strings.NewReplacer(
	"a", "á", "b", "ƀ", "c", "ç", "d", "ð", "e", "é", "f", "ƒ", "g", "ĝ", "h", "ĥ", "i", "î", "j", "ĵ", "k", "ķ", "l", "ļ", "m", "ṁ",
	"n", "ñ", "o", "ö", "p", "þ", "q", "ǫ", "r", "ŕ", "s", "š", "t", "ţ", "u", "û", "v", "ṽ", "w", "ŵ", "x", "ẋ", "y", "ý", "z", "ž",
	"A", "Å", "B", "Ɓ", "C", "Ç", "D", "Ð", "E", "É", "F", "Ƒ", "G", "Ĝ", "H", "Ĥ", "I", "Î", "J", "Ĵ", "K", "Ķ", "L", "Ļ", "M", "Ṁ",
	"N", "Ñ", "O", "Ö", "P", "Þ", "Q", "Ǫ", "R", "Ŕ", "S", "Š", "T", "Ţ", "U", "Û", "V", "Ṽ", "W", "Ŵ", "X", "Ẋ", "Y", "Ý", "Z", "Ž",
)

// pseudoText accents a message's letters outside its placeholders.
func pseudoText(s string) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(PseudoOpen)
	for s != "" {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(accents.Replace(s))
			break
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			b.WriteString(accents.Replace(s))
			break
		}
		b.WriteString(accents.Replace(s[:i]))
		b.WriteString(s[i : i+j+2])
		s = s[i+j+2:]
	}
	b.WriteString(PseudoClose)
	return b.String()
}
