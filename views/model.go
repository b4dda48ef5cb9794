// Package views holds the templ components of the bridge's pages. It
// imports only what it renders; handlers fill the view models.
package views

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/ssobridge/ssobridge/locale"
)

// Page is what every page's layout needs.
type Page struct {
	Title string
	User  *User  // nil when signed out
	CSRF  string // token for the forms on the page
	// Home is the place people who do not sign in here with a password
	// come from (the partner's portal), where "back" links take them;
	// its URL is empty when none is configured.
	Home WayBack
	// FromHome: the visitor is not signed in here with a password (signed
	// out, or a session a handoff from Home began), so "back" means Home.
	FromHome bool
	// Contact is whom a person asks for help, as pages name it
	// (server.contact_name, else the catalog's "your IT help desk" in the
	// person's language); ContactURL, when set, where to reach them.
	Contact    string
	ContactURL string
	// Refresh, when set, reloads the page by itself (a meta refresh:
	// "seconds;url=path"). With Script set, only browsers without
	// JavaScript reload; the script updates the page in place instead.
	Refresh string
	// Script is the page's one script (a path under /static/), or "".
	Script string
	// ConsolePages are the pages ways in add to the console's navigation.
	ConsolePages []ConsoleLink
}

// LaunchWait is the page of a user waiting in line for the platform.
type LaunchWait struct {
	Seconds    int    // about how long still
	WaitedSecs int    // since the user arrived
	Next       string // the refresh's path
	// Still: the person stopped the reloads (no JavaScript): the page
	// offers "check now" and "reload by itself again" instead.
	Still bool
	// Every is how often, in seconds, the page reloads (or is checked).
	Every int
}

// WaitEstimate says how long is left as the waiting page shows it, in the
// localizer's language: in steps of 10 s above 10 s, so that a live region
// speaks only when the estimate has moved, not at every check.
func WaitEstimate(l *locale.Localizer, seconds int) string {
	switch {
	case seconds <= 10:
		return l.T("A few seconds more.")
	case seconds < 120:
		return l.N("About {{.Count}} second more.", "About {{.Count}} seconds more.", (seconds+9)/10*10)
	default:
		return l.N("About {{.Count}} minute more.", "About {{.Count}} minutes more.", (seconds+59)/60)
	}
}

// User is the signed-in user as the layout shows it.
type User struct {
	Name  string
	Email string
	Admin bool
}

// LoginForm is the sign-in page's state.
type LoginForm struct {
	Email  string
	Error  string // shown above the form
	Notice string // e.g. "You have been signed out."
	Next   string // where a sign-in continues (a local path; "" or "/": the portal)
	// Buttons are the ways in's "Sign in with ..." buttons.
	Buttons   []SignInButton
	HideLocal bool // the password form is off (oidc.local_login)
	Local     bool // the form was asked for with ?local=1: posts keep asking
}

// SignInButton is a way in's button on the sign-in page.
type SignInButton struct {
	ID    string // the element's id ("idp-sign-in")
	Label string // the IdP's name: the button says "Sign in with <name>"
	URL   string
}

// SetPasswordForm is the page of a set-password link.
type SetPasswordForm struct {
	Token string // the link's token (posted back with the form)
	Email string // whose password it sets
	Error string // a refused password (in the person's language)
	Gone  bool   // the link has expired or was used: no form
}

// errors is the form's error, on its password field.
func (f SetPasswordForm) errors() []FieldError {
	if f.Error == "" {
		return nil
	}
	return []FieldError{{Field: "new-password", Message: f.Error}}
}

// errors is the sign-in's error, on the email field (a refused sign-in
// does not say which of the two was wrong).
func (f LoginForm) errors() []FieldError {
	if f.Error == "" {
		return nil
	}
	return []FieldError{{Field: "email", Message: f.Error}}
}

// HandoffSwitch asks a browser signed in as one account whether a portal
// link for another account may switch it.
type HandoffSwitch struct {
	SignedIn string // the account signed in now
	Arriving string // the account the arrival signs in
	Via      string // what arrives, as a sentence: "The link from your portal signs in another account:"
	Action   string // where the confirmation posts
	Field    string // the form field that carries Token
	Token    string // what the confirmation posts back: the portal's token (spent then), or a sealed pending sign-in
}

// Home is the start page's state (who is signed in is in Page.User).
type Home struct {
	LastLaunch     time.Time // zero if never
	PlatformUserID string    // empty if not linked yet
}

// WayBack is a link back to where a person came from.
type WayBack struct {
	URL   string
	Label locale.ID // "Back to your portal"
}

// ErrorInfo is what an error page shows beyond its fixed text.
type ErrorInfo struct {
	Status     int
	RequestID  string
	Detail     string // safe to show: no secret, token or password
	RetryAfter int    // seconds, for "try again" pages
	// PlaceKept: minutes for which the person's place in the platform's
	// line is kept (0: none), for the "too busy" page.
	PlaceKept int
	ClockSkew string // measured offset, for the clock page
	Endpoint  string // which platform call failed
	SignIn    bool   // offer a sign-in link
	// Handoff: the request carried a one-time handoff token from the
	// portal, which cannot be sent again; the way on is a fresh one.
	Handoff bool
	// Public: the detail describes what another system sent (never a
	// token) and is shown to anyone: the person who set that system up
	// reads it there.
	Public bool
	// Refusal is the kind of a refused arrival, of the one set every way
	// in wraps; Wording is its way's own text for it (zero: the text the
	// ways share).
	Refusal Refusal
	Wording Wording
	// Source names the way in of a refused arrival for the log ("LTI:
	// Canvas"). SourceName is its name as a person knows it, shown as it
	// is ("Springfield Canvas"); SourceNoun what the pages call it when it
	// has no such name ("your portal", translated).
	Source     string
	SourceName string
	SourceNoun locale.ID
	// WayBack is where a refused arrival's page sends the person (the
	// course page a launch came from) instead of the bridge's start page,
	// which a pupil has no password for.
	WayBack WayBack
	// ByIdP: the account was disabled by the partner's identity provider
	// (SCIM), not in the console.
	ByIdP bool
}

// count says n things as a person would: "1 account", "2 accounts".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// minutes is a wait in seconds in whole minutes, rounded up (at least
// one).
func minutes(seconds int) int {
	return max(1, (seconds+59)/60)
}

// titled is the page with the title its heading says (an error page's).
func titled(p Page, title string) Page {
	p.Title = title
	return p
}

// JoinNames lists names as a sentence does: "A", "A and B", "A, B and C".
func JoinNames(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// sortedKeys are a map's keys in order (a form's fields, stable).
func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// ConsoleLink is a page a way in adds to the admin console: its path
// (also its section, for the navigation's current page) and its label.
type ConsoleLink struct {
	Path, Label string
}

// Sample is a page rendered with fixed data, for the page gallery's
// accessibility and language tests: a way in's own pages come so.
type Sample struct {
	Name string
	View templ.Component
}
