package lti

import (
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/locale"
)

// The LTI pages are answers to POSTs, shown inside the LMS's frame: a
// language switch that linked to another page would leave the frame on a
// page that refuses framing, and lose what the page holds. Their switch
// posts the page's own sealed state again, with the language chosen
// (switchField marks such a post), and the page comes back as it was, in
// that language.
const switchField = "switch_language"

// rePostSwitch makes the page's language switch post fields to action.
func rePostSwitch(c echo.Context, action string, fields map[string]string) {
	r := c.Request()
	m := locale.MenuFrom(r.Context())
	if len(m.Options) == 0 {
		return
	}
	all := map[string]string{switchField: "1"}
	for k, v := range fields {
		all[k] = v
	}
	m.Form = &locale.MenuForm{Action: action, Fields: all}
	c.SetRequest(r.WithContext(locale.WithMenu(r.Context(), m)))
}

// postedLanguage makes this request's pages speak the language the
// form posted ("lang": a switch's choice, or the page's language carried
// by its form), keeping it in the language cookie where the browser
// keeps one (inside a frame it may not: the form carries it on).
func (w *Way) postedLanguage(c echo.Context) {
	r := c.Request()
	m := locale.MenuFrom(r.Context())
	tag := r.PostFormValue("lang")
	if tag == "" || m.Lookup == nil {
		return
	}
	l, ok := m.Lookup(tag)
	if !ok {
		return
	}
	c.SetRequest(r.WithContext(locale.With(r.Context(), l)))
	c.Response().Header().Set("Content-Language", l.Lang())
	c.SetCookie(locale.Cookie(l.Lang(), w.k.Secure()))
}

// switching reports whether the post is a language switch's.
func switching(c echo.Context) bool { return c.Request().PostFormValue(switchField) != "" }

// noSwitch leaves the language switch out of a page that keeps no state
// to post again and is shown in the LMS's frame (a refused launch, the
// platform-storage pages, the registration's pages): a link would take
// the frame to a page that refuses framing. The page speaks the
// person's language all the same (the browser's, or the cookie's).
func noSwitch(c echo.Context) {
	r := c.Request()
	c.SetRequest(r.WithContext(locale.WithMenu(r.Context(), locale.Menu{})))
}
