// Package viewgallery is every page a person can see, rendered by the
// views with fixed data: the pages that take a fault, an LMS's frame or a
// waiting line to reach included, each error page as a person, a
// signed-out visitor and an admin read it. The accessibility and language
// tests open them all; EnglishLeft finds text a page in another language
// left in English.
package viewgallery

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/views"
)

// Data are the gallery's own values (names, addresses, the LMS, ids):
// text of no language, which EnglishLeft does not count.
var Data = []string{"Bob Builder", "bob.builder@partner.example", "Ada Admin", "ada.admin@partner.example", "Springfield Canvas",
	"LTI: Springfield Canvas", "Grace Hopper", "g@example.com", "Acme SSO", "9007199254740993", "4f2a9c1d0e7b3a65",
	"/open?return_to=%2Feditor", "ssobridge", "UTC", "/editor/projects/42", "/editor/templates/trailer", "Make a trailer", "//elsewhere"}

// Page is one page of the gallery.
type Page struct {
	Name string
	View templ.Component
	// Admin: the page as a partner admin reads it (the console's part
	// stays English).
	Admin bool
	// Variant: a second reading of a page the gallery has already (an
	// admin's, a signed-out visitor's), which the browser tests open at
	// one width only.
	Variant bool
}

// Pages is the gallery, sorted by name; l writes the texts a handler
// gives a view (a refused password, what arrives) in its language. The
// refusal page family is rendered for every kind of the refusal set in
// the words the ways share, and in each of the ways' own wordings;
// samples are the pages ways in render themselves.
func Pages(l *locale.Localizer, wordings []views.Wording, samples []views.Sample) []Page {
	user := views.Page{Title: "Error", User: &views.User{Name: "Bob Builder", Email: "bob.builder@partner.example"}, CSRF: "token"}
	adminPage := views.Page{Title: "Error", User: &views.User{Name: "Ada Admin", Email: "ada.admin@partner.example", Admin: true}, CSRF: "token"}
	info := views.ErrorInfo{Status: 503, RequestID: "4f2a9c1d0e7b3a65", Detail: "platform answered 503 on POST /api/5/public/users", RetryAfter: 30,
		ClockSkew: "6m12s ahead", Endpoint: "create_user", SourceName: "Springfield Canvas", Source: "LTI: Springfield Canvas", Public: true,
		WayBack: views.WayBack{URL: "https://canvas.example/courses/7", Label: "Back to the course"}}
	errorPages := map[string]func(views.Page, views.ErrorInfo) templ.Component{
		"PlatformForbidden": views.PlatformForbidden, "PlatformUnauthorized": views.PlatformUnauthorized, "PlatformClockSkew": views.PlatformClockSkew,
		"PlatformUnavailable": views.PlatformUnavailable, "PlatformBusy": views.PlatformBusy, "BadRequest": views.BadRequest, "NotFound": views.NotFound,
		"CSRFFailed": views.CSRFFailed, "SessionExpired": views.SessionExpired, "AccountDisabled": views.AccountDisabled, "Forbidden": views.Forbidden,
		"InternalError": views.InternalError, "PlatformMisconfigured": views.PlatformMisconfigured, "Busy": views.Busy, "StoreUnavailable": views.StoreUnavailable,
	}
	signedOut := views.Page{Title: l.T("Sign in"), CSRF: "token"}
	pages := []Page{
		{Name: "waiting page", View: views.LaunchWaiting(views.Page{Title: l.T("Opening the video editor"), User: user.User, CSRF: "token", Refresh: "5;url=/launch/wait/abc", Script: "/static/wait.js"},
			views.LaunchWait{Seconds: 40, WaitedSecs: 12, Next: "/launch/wait/abc", Every: 5})},
		{Name: "waiting page, reloads stopped", View: views.LaunchWaiting(views.Page{Title: l.T("Opening the video editor"), User: user.User, CSRF: "token", Script: "/static/wait.js"},
			views.LaunchWait{Seconds: 40, WaitedSecs: 12, Next: "/launch/wait/abc", Every: 5, Still: true})},
		{Name: "set-password, gone", View: views.SetPassword(views.Page{Title: l.T("Set your password")}, views.SetPasswordForm{Gone: true})},
		{Name: "set-password", View: views.SetPassword(views.Page{Title: l.T("Set your password"), CSRF: "token"}, views.SetPasswordForm{Token: "t", Email: "bob.builder@partner.example"})},
		{Name: "set-password, refused", View: views.SetPassword(views.Page{Title: l.T("Set your password"), CSRF: "token"},
			views.SetPasswordForm{Token: "t", Email: "bob.builder@partner.example", Error: l.T("The two passwords differ.")})},
		{Name: "sign-in", View: views.Login(signedOut, views.LoginForm{})},
		{Name: "sign-in with an IdP", View: views.Login(signedOut, views.LoginForm{Buttons: []views.SignInButton{{ID: "idp-sign-in", Label: "Acme SSO", URL: "/auth/oidc"}}})},
		{Name: "sign-in with an IdP of the default name", View: views.Login(signedOut, views.LoginForm{Buttons: []views.SignInButton{{ID: "idp-sign-in", Label: "your organisation", URL: "/auth/oidc"}}})},
		{Name: "home", View: views.HomePage(views.Page{Title: l.T("Home"), User: user.User, CSRF: "token"}, views.Home{})},
		{Name: "home, launched before", View: views.HomePage(views.Page{Title: l.T("Home"), User: user.User, CSRF: "token"},
			views.Home{LastLaunch: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), PlatformUserID: "9007199254740993"})},
		{Name: "switch accounts", View: views.HandoffSwitchPage(views.Page{Title: l.T("Switch accounts?"), User: user.User, CSRF: "token"},
			views.HandoffSwitch{SignedIn: "bob.builder@partner.example", Arriving: "g@example.com", Via: l.T("The link from your portal signs in another account:"), Action: "/portal/confirm", Field: "jwt", Token: "t"})},
	}
	for _, p := range samples {
		pages = append(pages, Page{Name: p.Name, View: p.View})
	}
	for _, kind := range views.Refusals() {
		errorPages["Refused: "+string(kind)] = refused(views.ErrorInfo{Refusal: kind})
	}
	for _, w := range wordings {
		name := "Refused: " + w.Class
		for n := 2; errorPages[name] != nil; n++ { // one class, two leads (the portal's)
			name = "Refused: " + w.Class + " #" + strconv.Itoa(n)
		}
		errorPages[name] = refused(views.ErrorInfo{Refusal: views.RefusedInvalid, Wording: w})
	}
	for name, page := range errorPages {
		pages = append(pages,
			Page{Name: name + " (a person)", View: page(user, info)},
			Page{Name: name + " (an admin)", View: page(adminPage, info), Admin: true, Variant: true},
			Page{Name: name + " (signed out)", View: page(views.Page{Title: "Error"}, views.ErrorInfo{Status: 400, RequestID: "4f2a9c1d0e7b3a65"}), Variant: true})
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].Name < pages[j].Name })
	return pages
}

// Texts are the words a person reads on a page (an HTML document): its
// text, its title, and the labels a screen reader says (aria-label, alt,
// title, placeholder). Code (<code>: ids, settings, a technical detail),
// scripts, and parts marked as another language (the language switch's
// names, lang="…") are not the page's language and are left out; so are
// the Data values and the data given.
func Texts(doc string, data ...string) ([]string, error) {
	root, err := html.ParseWithOptions(strings.NewReader(doc), html.ParseOptionEnableScripting(false))
	if err != nil {
		return nil, err
	}
	var out []string
	data = append(data, Data...)
	add := func(s string) {
		for _, d := range data {
			s = strings.ReplaceAll(s, d, " ")
		}
		if s = strings.Join(strings.Fields(s), " "); s != "" {
			out = append(out, s)
		}
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Code, atom.Script, atom.Style:
				return
			}
			for _, a := range n.Attr {
				switch a.Key {
				case "lang":
					if n.DataAtom != atom.Html {
						return
					}
				case "aria-label", "alt", "title", "placeholder":
					add(a.Val)
				}
			}
		}
		if n.Type == html.TextNode {
			add(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out, nil
}

var (
	word   = regexp.MustCompile(`[A-Za-z]{2,}`)
	marked = regexp.MustCompile(regexp.QuoteMeta(locale.PseudoOpen) + `[^` + locale.PseudoOpen + locale.PseudoClose + `]*` + regexp.QuoteMeta(locale.PseudoClose))
)

// EnglishLeft lists the texts of a page rendered in the pseudo-language
// that hold a word outside its ⟦marked⟧ messages: text that did not come
// from the catalog.
func EnglishLeft(doc string, data ...string) ([]string, error) {
	texts, err := Texts(doc, data...)
	if err != nil {
		return nil, err
	}
	var left []string
	for _, t := range texts {
		rest := t
		for { // innermost first: a message may hold another (a date's month)
			next := marked.ReplaceAllString(rest, " ")
			if next == rest {
				break
			}
			rest = next
		}
		if word.MatchString(rest) {
			left = append(left, t)
		}
	}
	return left, nil
}

// English finds the English catalog's sentences on a page rendered in the
// language tag: each piece of a message (cut at its placeholders and
// marks, 12 characters or more) whose translation says it otherwise.
type English struct {
	pieces []piece
}

type piece struct{ id, text string }

// NewEnglish reads the English catalog and the language's.
func NewEnglish(tag string) (*English, error) {
	en, err := locale.CatalogMessages("en")
	if err != nil {
		return nil, err
	}
	tr, err := locale.CatalogMessages(tag)
	if err != nil {
		return nil, err
	}
	same := map[string]bool{} // said the same way in that language (a name, "Error:")
	for _, m := range tr {
		same[m.ID] = m.Other == m.ID
	}
	e := &English{}
	for _, m := range en {
		if same[m.ID] {
			continue
		}
		for _, form := range []string{m.Other, m.One} {
			for _, p := range splitPlaceholders(form) {
				if len(p) >= 12 {
					e.pieces = append(e.pieces, piece{m.ID, p})
				}
			}
		}
	}
	return e, nil
}

// Left lists the English messages whose pieces are on the page.
func (e *English) Left(doc string, data ...string) ([]string, error) {
	texts, err := Texts(doc, data...)
	if err != nil {
		return nil, err
	}
	page := strings.Join(texts, "\n")
	var left []string
	for _, p := range e.pieces {
		if strings.Contains(page, p.text) {
			left = append(left, p.id)
		}
	}
	return left, nil
}

func splitPlaceholders(s string) []string {
	var out []string
	for _, part := range strings.Split(s, "**") {
		for part != "" {
			i := strings.Index(part, "{{")
			if i < 0 {
				out = append(out, strings.TrimSpace(part))
				break
			}
			out = append(out, strings.TrimSpace(part[:i]))
			j := strings.Index(part[i:], "}}")
			if j < 0 {
				break
			}
			part = part[i+j+2:]
		}
	}
	return out
}

// refused renders the refusal page family with the kind and wording of
// r over the info a page is given.
func refused(r views.ErrorInfo) func(views.Page, views.ErrorInfo) templ.Component {
	return func(p views.Page, e views.ErrorInfo) templ.Component {
		e.Refusal, e.Wording = r.Refusal, r.Wording
		return views.Refused(p, e)
	}
}
