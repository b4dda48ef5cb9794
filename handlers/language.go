package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/localpath"
)

// languageParam is the query parameter of the language switch's links:
// the page again, in that language, which is then kept in a cookie.
const languageParam = "lang"

// language picks the language of the request's pages: the switch's choice
// (?lang=, then kept in a cookie), else the cookie's, else the browser's
// Accept-Language. A language that is not
// offered is ignored, as an Accept-Language header's would be: the page
// comes in the language negotiated without it.
func (h *server) language(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if strings.HasPrefix(r.URL.Path, "/static/") {
			return next(c) // files, in no language
		}
		hdr := c.Response().Header()
		chosen := ""
		if ck, err := r.Cookie(locale.CookieName); err == nil {
			chosen = ck.Value
		}
		if asked := r.URL.Query().Get(languageParam); asked != "" && r.Method == http.MethodGet {
			if l, ok := h.Languages.Lookup(asked); ok {
				chosen = l.Lang()
				c.SetCookie(locale.Cookie(chosen, h.Sessions.Secure))
			}
		}
		l := h.Languages.Choose(chosen, r.Header.Get("Accept-Language"))
		ctx := locale.With(r.Context(), l)
		ctx = locale.WithMenu(ctx, locale.Menu{Options: h.Languages.Offered(), Back: here(r), Lookup: h.Languages.Lookup})
		c.SetRequest(r.WithContext(ctx))
		hdr.Set("Content-Language", l.Lang())
		hdr.Add("Vary", "Accept-Language, Cookie")
		return next(c)
	}
}

// here is the page a language switch reloads: this one's path when it can
// be asked for again, else the start page. Never its query: a handoff's
// token, a link's secret or whatever another site put in the URL would
// come back in every link of the switch (a page whose query is its own
// state says so with switchBack).
func here(r *http.Request) string {
	if r.Method != http.MethodGet {
		return "/"
	}
	return localpath.SafeNext(r.URL.EscapedPath())
}

// switchBack makes the page's language switch come back to back (a local
// path the page itself rebuilt from its own checked state, such as the
// sign-in's next or a valid set-password link) instead of its bare path.
func switchBack(c echo.Context, back string) {
	r := c.Request()
	m := locale.MenuFrom(r.Context())
	if len(m.Options) == 0 {
		return
	}
	m.Back = localpath.SafeNext(back)
	c.SetRequest(r.WithContext(locale.WithMenu(r.Context(), m)))
}

// consoleEnglish: the admin console stays in English, without a language
// switch (it follows the checks that let an admin in: a person refused at
// its door reads why in their language).
func (h *server) consoleEnglish(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		ctx := locale.WithMenu(locale.With(r.Context(), h.Languages.English()), locale.Menu{})
		c.SetRequest(r.WithContext(ctx))
		c.Response().Header().Set("Content-Language", h.Languages.English().Lang())
		return next(c)
	}
}
