package views

import (
	"context"
	"html"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/ssobridge/ssobridge/locale"
)

// t translates a page's text (its English, the message's id) into the
// request's language; data are the placeholders' name, value pairs.
func t(ctx context.Context, id locale.ID, data ...any) string {
	return locale.From(ctx).T(id, data...)
}

// T is t for the pages a way in renders itself (LTI's): its texts are
// messages of the same catalogs, written literally where its own t is
// called.
func T(ctx context.Context, id locale.ID, data ...any) string { return t(ctx, id, data...) }

// tn translates a text with plural forms; n is its {{.Count}}.
func tn(ctx context.Context, one, other locale.ID, n int, data ...any) string {
	return locale.From(ctx).N(one, other, n, data...)
}

// tm translates a text whose **marked** words are strong and whose
// `marked` words are code: the text is escaped, then the marks become
// <strong> and <code>; placeholders' values are escaped and never read
// as marks.
func tm(ctx context.Context, id locale.ID, data ...any) templ.Component {
	held := make([]any, len(data))
	copy(held, data)
	var values []string
	for i := 1; i < len(held); i += 2 {
		values = append(values, html.EscapeString(toString(held[i])))
		held[i] = "\x00" + strconv.Itoa(len(values)-1) + "\x00"
	}
	s := markCode(markStrong(html.EscapeString(locale.From(ctx).T(id, held...))))
	for i, v := range values {
		s = strings.ReplaceAll(s, "\x00"+strconv.Itoa(i)+"\x00", v)
	}
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	})
}

// markStrong turns **pairs** into <strong> elements (an odd mark stays).
func markStrong(s string) string { return markPairs(s, "**", "strong") }

// markCode turns `pairs` into <code> elements (an odd mark stays): a
// setting's name inside a translated sentence.
func markCode(s string) string { return markPairs(s, "`", "code") }

// markPairs turns the text between pairs of mark into elements named
// tag; with an odd number of marks s stays as it is.
func markPairs(s, mark, tag string) string {
	parts := strings.Split(s, mark)
	if len(parts)%2 == 0 {
		return s
	}
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			b.WriteString("<" + tag + ">" + p + "</" + tag + ">")
		} else {
			b.WriteString(p)
		}
	}
	return b.String()
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	}
	return ""
}

// switchURL is the language switch's link to one language: the page
// again (back), with the language asked for.
func switchURL(tag, back string) string {
	if back == "" {
		back = "/"
	}
	sep := "?"
	if strings.Contains(back, "?") {
		sep = "&"
	}
	return back + sep + "lang=" + url.QueryEscape(tag)
}
