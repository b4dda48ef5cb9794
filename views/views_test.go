package views

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// render renders a component and parses it.
func render(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, c.Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	return doc
}

func text(doc *goquery.Document, sel string) string { return doc.Find(sel).First().Text() }

const token = "tok-123"

var (
	signedOut = Page{Title: "Sign in", CSRF: token}
	user      = Page{Title: "Home", CSRF: token, User: &User{Name: "Ada Lovelace", Email: "ada@example.com"}}
	admin     = Page{Title: "Admin", CSRF: token, User: &User{Name: "Root Admin", Email: "root@example.com", Admin: true}}
)

// assertForms: every form that posts carries the page's token as _csrf,
// but the portal's handoff (/sso/jwt), whose signed single-use token is
// its proof: a real portal posts it from another site; and a framed LTI
// launch's button (/lti/continue), whose sealed one-time continuation is
// its proof: inside the LMS's frame the anti-forgery cookie may be gone.
func assertForms(t *testing.T, doc *goquery.Document) {
	t.Helper()
	doc.Find(`form[method="post"]:not([action="/sso/jwt"]):not([action="/lti/continue"])`).Each(func(i int, s *goquery.Selection) {
		assert.Equal(t, token, s.Find(`input[type="hidden"][name="_csrf"]`).AttrOr("value", ""), "form %d (%s)", i, s.AttrOr("action", ""))
	})
}

// TestPagesFrame: every page has the title, the heading, a main landmark,
// the stylesheet and forms that carry the token.
func TestPagesFrame(t *testing.T) {
	pages := []struct {
		name  string
		comp  templ.Component
		title string
		h1    string
		posts int // forms that post
	}{
		{"login", Login(signedOut, LoginForm{}), "Sign in", "Sign in", 1},
		{"home", HomePage(user, Home{}), "Home", "Hello, Ada Lovelace", 3}, // launch, sign out, sign out everywhere
		{"connection", ConnectionPage(admin, Connection{BaseURL: "https://p.example", Method: "hmac", Scheme: "SVC", KeyID: "k"}), "Admin", "Instance connection", 2},
		{"accounts", AccountsList(admin, AccountsPage{Rows: []AccountRow{{ID: 2, Email: "bob@example.com", Name: "Bob"}}}), "Admin", "Accounts", 0},
		{"platform users", PlatformUsers(admin, PlatformUsersPage{}), "Admin", "Platform users", 1},
		{"audit", AuditLog(admin, AuditPage{Retention: "90 days"}), "Admin", "Audit log", 1},
		{"set password", SetPassword(signedOut, SetPasswordForm{Token: "tok", Email: "bob@example.com"}), "Sign in", "Choose your password", 1},
		{"sessions", AccountSessions(admin, SessionsPage{AccountID: 2, Email: "bob@example.com", Rows: []SessionRow{{ID: strings.Repeat("a", 64), ShortID: "aaaaaaaaaaaa"}}}),
			"Admin", "Sessions of bob@example.com", 3}, // sign out, end one, end all
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			doc := render(t, p.comp)
			assert.Equal(t, p.title+" · ssobridge", text(doc, "title"))
			assert.Equal(t, p.h1, text(doc, "main h1"))
			assert.Equal(t, "/static/app.css", doc.Find(`link[rel="stylesheet"]`).AttrOr("href", ""))
			assert.Equal(t, "en", doc.Find("html").AttrOr("lang", ""))
			assert.Empty(t, doc.Find("script").Nodes, "no scripts: the CSP allows none")
			if p.posts > 0 {
				assert.Equal(t, p.posts, doc.Find(`form[method="post"]`).Length())
			}
			assertForms(t, doc)
		})
	}
}

// TestAdminLinkOnlyForAdmins: the layout offers the console only to an
// admin; signed out, there is no account navigation at all.
func TestAdminLinkOnlyForAdmins(t *testing.T) {
	for _, tt := range []struct {
		name    string
		page    Page
		admin   bool
		signOut bool
	}{{"signed out", signedOut, false, false}, {"user", user, false, true}, {"admin", admin, true, true}} {
		t.Run(tt.name, func(t *testing.T) {
			var comp templ.Component = Login(tt.page, LoginForm{})
			if tt.page.User != nil {
				comp = HomePage(tt.page, Home{})
			}
			doc := render(t, comp)
			assert.Equal(t, tt.admin, doc.Find(`header a[href="/admin/"]`).Length() == 1)
			assert.Equal(t, tt.signOut, doc.Find(`header form[action="/logout"]`).Length() == 1)
			if tt.page.User != nil {
				assert.Equal(t, tt.page.User.Name, text(doc, "#signed-in-as"))
			}
		})
	}
}

func TestLogin(t *testing.T) {
	doc := render(t, Login(signedOut, LoginForm{Email: "ada@example.com", Error: "Email or password is incorrect.", Notice: "You have been signed out."}))
	assert.Equal(t, "ada@example.com", doc.Find("#email").AttrOr("value", ""), "the email typed is kept")
	assert.Empty(t, doc.Find("#password").AttrOr("value", ""), "never the password")
	assert.Equal(t, "current-password", doc.Find("#password").AttrOr("autocomplete", ""))
	// The error summary (GOV.UK's pattern): it takes focus, links to the
	// field, which is marked invalid and described by its message.
	summary := doc.Find("#error-summary")
	assert.Equal(t, "Email or password is incorrect.", text(doc, "#error-summary li a"))
	assert.Equal(t, "#email", summary.Find("li a").AttrOr("href", ""))
	_, focused := summary.Attr("autofocus")
	assert.True(t, focused, "the summary takes focus on load")
	assert.Equal(t, "-1", summary.AttrOr("tabindex", ""))
	_, emailFocused := doc.Find("#email").Attr("autofocus")
	assert.False(t, emailFocused, "one autofocus: the summary's")
	assert.Equal(t, "true", doc.Find("#email").AttrOr("aria-invalid", ""))
	assert.Equal(t, "email-error", doc.Find("#email").AttrOr("aria-describedby", ""))
	assert.Contains(t, text(doc, "#email-error"), "Email or password is incorrect.")
	assert.Equal(t, "You have been signed out.", text(doc, `[role="status"]`))
	for _, id := range []string{"email", "password"} {
		assert.Equal(t, 1, doc.Find(`label[for="`+id+`"]`).Length(), "label for %s", id)
	}
	plain := render(t, Login(signedOut, LoginForm{}))
	assert.Empty(t, plain.Find("#error-summary, .notice, [aria-invalid]").Nodes)
	_, autofocus := plain.Find("#email").Attr("autofocus")
	assert.True(t, autofocus, "without an error, the email field has focus")
}

func TestPortal(t *testing.T) {
	doc := render(t, HomePage(user, Home{}))
	assert.Equal(t, "Open video editor", text(doc, "#open-editor"))
	assert.Equal(t, "/launch", doc.Find("#open-editor").Closest("form").AttrOr("action", ""))
	assert.Contains(t, text(doc, "#last-launch"), "never")
	assert.NotContains(t, doc.Text(), "linked (platform user")
	doc = render(t, HomePage(user, Home{LastLaunch: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), PlatformUserID: "9007199254740993"}))
	assert.Contains(t, text(doc, "#last-launch"), "November 22, 2026 at 10:00 UTC")
	assert.Contains(t, doc.Text(), "linked (platform user 9007199254740993)")
}

// TestErrorPages: each class has its heading and reference. An admin also
// sees the status, the technical detail and, where the partner admin must
// act, what to do; an end user gets a human message without operator
// words, and the reference to quote.
func TestErrorPages(t *testing.T) {
	info := ErrorInfo{Status: 502, RequestID: "0123456789abcdef", Detail: "platform GET list_users: 403: Forbidden", ClockSkew: "10m0s"}
	const userTitle = "The video editor is not available right now"
	pages := []struct {
		comp       func(Page, ErrorInfo) templ.Component
		class      string
		title      string // as an admin reads it
		setup      bool   // a platform setup problem: end users read userTitle and the admin part is the admin's
		retry      bool   // a "Try again" form
		userDetail bool   // the detail is the user's own input, shown to them too
	}{
		{PlatformForbidden, "platform-forbidden", "The video platform refused the bridge's access", true, false, false},
		{PlatformUnauthorized, "platform-unauthorized", "The video platform did not accept the bridge's credentials", true, false, false},
		{PlatformClockSkew, "platform-clock-skew", "The bridge's clock and the platform's clock disagree", true, false, false},
		{PlatformMisconfigured, "platform-misconfigured", "The video platform answered unexpectedly", true, false, false},
		{PlatformUnavailable, "platform-unavailable", "The video platform is busy or unavailable", false, true, false},
		{BadRequest, "bad-request", "That request could not be used", false, false, true},
		{NotFound, "not-found", "Page not found", false, false, false},
		{CSRFFailed, "csrf", "This form has expired or did not come from this site", false, false, false},
		{SessionExpired, "session-expired", "Your session has ended", false, false, false},
		{AccountDisabled, "account-disabled", "This account is disabled", false, false, false},
		{Forbidden, "forbidden", "You do not have access to this page", false, false, false},
		{InternalError, "internal", "Something went wrong on our side", false, false, false},
		{Busy, "busy", "The service is busy right now", false, false, false},
		{refusedAs(RefusedDenied), "idp-denied", "Your organisation's sign-in did not let you in", false, false, false},
		{refusedAs(RefusedNoAccount), "idp-denied", "Your organisation's sign-in did not let you in", false, false, false},
		{refusedAs(RefusedBadState), "idp-state", "This sign-in could not be completed", false, false, false},
		{refusedAs(RefusedReplayed), "idp-state", "This sign-in could not be completed", false, false, false},
		{refusedAs(RefusedExpired), "idp-expired", "The sign-in took too long", false, false, false},
		{refusedAs(RefusedUnavailable), "idp-unavailable", "Your organisation's sign-in is not reachable right now", false, false, false},
		{refusedAs(RefusedNoAddress), "idp-unverified", "Your email address is not verified", false, false, false},
		{refusedAs(RefusedDisabled), "account-disabled", "This account is disabled", false, false, false},
	}
	for _, p := range pages {
		t.Run(p.class, func(t *testing.T) {
			forAdmin := render(t, p.comp(admin, info))
			assert.Equal(t, p.class, forAdmin.Find("#error-page").AttrOr("data-class", ""))
			assert.Equal(t, p.title, text(forAdmin, "#error-title"))
			assert.Equal(t, "Error 502", text(forAdmin, "#error-page .status"))
			assert.Equal(t, "0123456789abcdef", text(forAdmin, "#request-id"))
			assert.Equal(t, info.Detail, text(forAdmin, "#error-detail"))
			assert.Equal(t, p.setup, forAdmin.Find(`h2:contains("For the partner admin")`).Length() == 1)
			assert.Equal(t, p.retry, forAdmin.Find("#try-again").Length() == 1)
			assert.Equal(t, "/", forAdmin.Find(`#error-page a[href="/"]`).AttrOr("href", ""), "a way back")
			assertForms(t, forAdmin)

			for _, page := range []Page{user, signedOut} {
				doc := render(t, p.comp(page, info))
				body := doc.Find("#error-page").Text()
				assert.Equal(t, p.class, doc.Find("#error-page").AttrOr("data-class", ""))
				if p.setup {
					assert.Equal(t, userTitle, text(doc, "#error-title"))
					assert.Contains(t, body, "not something you did")
				} else {
					assert.Equal(t, p.title, text(doc, "#error-title"))
				}
				assert.Empty(t, doc.Find("#error-page .status").Nodes, "no raw status heading")
				assert.Zero(t, doc.Find(`h2:contains("For the partner admin")`).Length(), "no operator instructions")
				for _, word := range []string{"SSOBRIDGE_", "platform.", "ssobridge check", "Instance", "API key", "NTP"} {
					assert.NotContains(t, body, word)
				}
				assert.Equal(t, "0123456789abcdef", text(doc, "#request-id"))
				assert.Contains(t, body, "Reference to quote")
				assert.Equal(t, p.userDetail, doc.Find("#error-detail").Length() == 1)
				assertForms(t, doc)
			}
			bare := render(t, p.comp(admin, ErrorInfo{Status: 400}))
			assert.Empty(t, bare.Find("#error-detail, #request-id").Nodes, "nothing shown that was not given")
		})
	}
}

// refusedAs is the refusal page family for one kind, in the words the
// ways share.
func refusedAs(kind Refusal) func(Page, ErrorInfo) templ.Component {
	return func(p Page, e ErrorInfo) templ.Component {
		e.Refusal = kind
		return Refused(p, e)
	}
}

// TestRefusedPageFamily: one page renders every refusal. Every kind of
// the set has the ways' shared words; a way's own wording replaces them
// whole (class, title, lead, items), with the source's name, its marks
// and the way back filled in.
func TestRefusedPageFamily(t *testing.T) {
	for _, kind := range Refusals() {
		doc := render(t, refusedAs(kind)(user, ErrorInfo{Status: 400, Source: "kiosk"}))
		assert.NotEmpty(t, doc.Find("#error-page").AttrOr("data-class", ""), kind)
		assert.NotEmpty(t, text(doc, "#error-title"), kind)
		assert.NotContains(t, doc.Text(), "{{", "%s: every placeholder filled", kind)
	}

	own := Wording{Class: "kiosk-no-card", Title: "No card was read", Lead: "**{{.Source}}** read no card. Ask {{.Contact}}.",
		Items: []locale.ID{"Hold the card `flat`.", "Try again."}, Again: "Back to the kiosk"}
	info := ErrorInfo{Status: 400, Refusal: RefusedNoAddress, Wording: own, SourceName: "Hall <kiosk>",
		WayBack: WayBack{URL: "https://kiosk.example/start", Label: "Back to the kiosk"}}
	withContact := user
	withContact.Contact = "the school office"
	doc := render(t, Refused(withContact, info))
	assert.Equal(t, "kiosk-no-card", doc.Find("#error-page").AttrOr("data-class", ""))
	assert.Equal(t, "No card was read", text(doc, "#error-title"))
	assert.Equal(t, "Hall <kiosk>", text(doc, "#refusal-lead strong"), "the source's name, escaped, in the marked words")
	assert.Contains(t, text(doc, "#refusal-lead"), "Ask the school office.")
	assert.Equal(t, 2, doc.Find("#refusal-items li").Length())
	assert.Equal(t, "flat", text(doc, "#refusal-items code"))
	assert.Equal(t, "https://kiosk.example/start", doc.Find("#again").AttrOr("href", ""), "the way back, as the wording's button")
	assert.Equal(t, "https://kiosk.example/start", doc.Find("#way-back").AttrOr("href", ""))
	assert.Zero(t, doc.Find(`#error-page a[href="/"]`).Length(), "no start page a pupil has no password for")

	for _, tt := range []struct {
		info ErrorInfo
		want string
	}{
		{ErrorInfo{SourceName: "Springfield Canvas", SourceNoun: "your portal", Source: "LTI: Springfield Canvas"}, "You arrived through Springfield Canvas,"},
		{ErrorInfo{SourceNoun: "your portal", Source: "portal"}, "You arrived through your portal,"},
		{ErrorInfo{Source: "kiosk"}, "You arrived through kiosk,"},
	} {
		tt.info.Refusal = RefusedNotTrusted
		doc := render(t, Refused(signedOut, tt.info))
		assert.Equal(t, "arrival-refused", doc.Find("#error-page").AttrOr("data-class", ""))
		assert.Contains(t, text(doc, "#refusal-lead"), tt.want)
	}

	home := signedOut
	home.Home, home.FromHome = WayBack{URL: "https://portal.example/", Label: "Back to your portal"}, true
	doc = render(t, Refused(home, ErrorInfo{Refusal: RefusedExpired}))
	assert.Equal(t, "https://portal.example/", doc.Find("#back-home").AttrOr("href", ""), "a visitor from the portal goes back there")
	assert.Zero(t, doc.Find("#again").Length(), "the shared words offer no button")
}

func TestErrorPageDetails(t *testing.T) {
	doc := render(t, PlatformClockSkew(admin, ErrorInfo{Status: 502, ClockSkew: "10m0s"}))
	assert.Equal(t, "10m0s", text(doc, "#clock-offset"))
	doc = render(t, PlatformUnavailable(user, ErrorInfo{Status: 503, RetryAfter: 7}))
	assert.Contains(t, doc.Text(), "Please try again in about 7 seconds.")
	doc = render(t, PlatformUnavailable(user, ErrorInfo{Status: 503}))
	assert.Contains(t, doc.Text(), "Please try again in a minute.")
	doc = render(t, SessionExpired(signedOut, ErrorInfo{Status: 401, SignIn: true}))
	assert.Equal(t, 1, doc.Find(`#error-page a[href="/login"]`).Length(), "offers to sign in")
}

func TestConnectionPage(t *testing.T) {
	doc := render(t, ConnectionPage(admin, Connection{BaseURL: "http://127.0.0.1:9", Embedded: true, Method: "hmac", Scheme: "SVC", KeyID: "key-1"}))
	assert.Contains(t, text(doc, "#base-url"), "(built-in emulator)")
	assert.Equal(t, "key-1", text(doc, "#key-id"))
	assert.Contains(t, doc.Text(), "the secret is never shown")
	assert.Empty(t, doc.Find("#check-result").Nodes)
	assert.Equal(t, "page", doc.Find(`.admin-nav a[href="/admin/connection"]`).AttrOr("aria-current", ""))

	res := &CheckView{OK: false, Verdict: "clock_skew", Summary: "Clock skew.", Advice: []string{"Use NTP.", "Check again."}, Status: "401", Latency: "3ms", Clock: "10m0s ahead of this server's", URL: "https://p/api/5/public/users"}
	doc = render(t, ConnectionPage(admin, Connection{Result: res}))
	assert.Equal(t, "clock_skew", doc.Find("#check-result").AttrOr("data-verdict", ""))
	assert.True(t, doc.Find("#check-result").HasClass("check-bad"))
	assert.Equal(t, "Clock skew.", text(doc, "#check-summary"))
	assert.Equal(t, 2, doc.Find("#check-advice li").Length())
	assert.Equal(t, "10m0s ahead of this server's", text(doc, "#check-clock"))
	ok := render(t, ConnectionPage(admin, Connection{Result: &CheckView{OK: true, Verdict: "ok", Summary: "OK."}}))
	assert.True(t, ok.Find("#check-result").HasClass("check-ok"))
	assert.Empty(t, ok.Find("#check-advice, #check-clock").Nodes)
}

// An account's page: its state, and the actions that apply to it.
func TestAccountDetail(t *testing.T) {
	on := render(t, AccountDetail(admin, AccountPage{Account: AccountRow{ID: 2, Email: "bob@example.com", Name: "Bob B", PlatformUserID: "9007199254740993",
		LinkedAt: "2026-11-01 08:00 UTC", LastLaunch: "never", BannedUntil: "10:15 UTC"}, Notice: "Done.", InviteLink: "https://sso/set-password?token=x"}))
	assert.Equal(t, "bob@example.com", text(on, "#account h1"))
	assert.Equal(t, "Done.", text(on, "#notice"))
	assert.Equal(t, "https://sso/set-password?token=x", text(on, "#invite-link"))
	assert.Contains(t, text(on, "#account-link"), "9007199254740993")
	for action, want := range map[string]int{"disable": 1, "enable": 0, "grant-admin": 1, "revoke-admin": 0, "unlink": 1, "lift-ban": 1, "end-sessions": 1, "invite": 1} {
		assert.Equal(t, want, on.Find(`button[data-action="`+action+`"]`).Length(), action)
	}
	assert.Equal(t, "/admin/accounts/2/password", on.Find(`input[name="password"]`).Closest("form").AttrOr("action", ""))
	assertForms(t, on)

	off := render(t, AccountDetail(admin, AccountPage{Account: AccountRow{ID: 3, Email: "off@example.com", Disabled: true, Admin: true}, Error: "Refused."}))
	assert.Equal(t, "Refused.", text(off, "#admin-error"))
	for action, want := range map[string]int{"disable": 0, "enable": 1, "grant-admin": 0, "revoke-admin": 1, "unlink": 0, "lift-ban": 0} {
		assert.Equal(t, want, off.Find(`button[data-action="`+action+`"]`).Length(), action)
	}
	assert.Contains(t, text(off, "#account-link"), "not linked")
}

func TestAccountsList(t *testing.T) {
	d := AccountsPage{Query: "b", Notice: "Added bob@example.com.", Rows: []AccountRow{
		{ID: 2, Email: "bob@example.com", Name: "Bob B", PlatformUserID: "77", LinkedAt: "2026-11-01 08:00 UTC", LastLaunch: "never"},
		{ID: 3, Email: "off@example.com", Name: "Off", Disabled: true, Admin: true, NoPassword: true},
	}, Pager: Pager{Page: 1, Pages: 2, Total: 30, NextURL: "/admin/accounts?page=2"}}
	doc := render(t, AccountsList(admin, d))
	assert.Equal(t, "Added bob@example.com.", text(doc, "#notice"))
	assert.Equal(t, "b", doc.Find("#q").AttrOr("value", ""))
	bob := doc.Find(`tr[data-email="bob@example.com"]`)
	assert.Contains(t, bob.Text(), "77")
	assert.Zero(t, bob.Find("button, form").Length(), "the list shows state; the actions are on the account's page")
	assert.Equal(t, "/admin/accounts/2", bob.Find(`a[data-action="manage"]`).AttrOr("href", ""))
	off := doc.Find(`tr[data-email="off@example.com"]`)
	assert.Contains(t, off.Text(), "disabled")
	assert.Contains(t, off.Text(), "no password yet")
	assert.Equal(t, "/admin/accounts?page=2", doc.Find(`a[rel="next"]`).AttrOr("href", ""))
	assert.Empty(t, doc.Find(`a[rel="prev"]`).Nodes)
	assertForms(t, doc)

	failed := render(t, AccountsList(admin, AccountsPage{Error: "An account with email bob@example.com exists already.",
		New:          NewAccountForm{Email: "bob@example.com", FirstName: "Bob", LastName: "B", Admin: true},
		ImportErrors: []string{"row 3: bad"}, ImportCSV: "a,b,c"}))
	assert.Equal(t, "An account with email bob@example.com exists already.", text(failed, "#admin-error"))
	assert.Equal(t, "bob@example.com", failed.Find("#new-email").AttrOr("value", ""))
	assert.Empty(t, failed.Find("#new-password").AttrOr("value", ""), "never a password")
	assert.Equal(t, "row 3: bad", text(failed, "#import-errors li"))
	assert.Equal(t, "a,b,c", text(failed, "#csv"))
	assert.Equal(t, "multipart/form-data", failed.Find(`form[action="/admin/accounts/import"]`).AttrOr("enctype", ""))
}

func TestPlatformUsersAndAudit(t *testing.T) {
	doc := render(t, PlatformUsers(admin, PlatformUsersPage{Query: "p", Rows: []PlatformUserRow{
		{UserID: "1", Name: "Pat", Email: "pat@example.com"}, {UserID: "2", Name: "Bob", Email: "bob@example.com", LinkedTo: "bob@example.com"}}}))
	assert.Equal(t, 2, doc.Find("#platform-users tbody tr").Length())
	assert.Equal(t, "p", doc.Find("#pq").AttrOr("value", ""))
	failed := render(t, PlatformUsers(admin, PlatformUsersPage{Error: "The platform did not list its users: 503"}))
	assert.Contains(t, failed.Text(), "The platform did not list its users: 503")

	doc = render(t, AuditLog(admin, AuditPage{Kind: "launch", Retention: "90 days", Rows: []AuditRow{
		{At: "2026-11-22 10:00:00", Kind: "launch", Email: "bob@example.com", Outcome: "ok", Calls: 3, Latency: "25ms", RequestID: "abc"}}}))
	assert.Equal(t, 1, doc.Find("#audit tbody tr").Length())
	assert.Contains(t, doc.Find("#audit tbody tr").Text(), "25ms")
	assert.Equal(t, "launch", doc.Find(`#f-kind option[selected]`).AttrOr("value", ""), "the filter keeps its choice")
	assert.Contains(t, doc.Text(), "Kept 90 days")
}

// The sessions page names each device, marks the admin's own and offers
// an End form per device posting to that device's session.
func TestAccountSessionsPage(t *testing.T) {
	id := strings.Repeat("b", 64)
	doc := render(t, AccountSessions(admin, SessionsPage{AccountID: 7, Email: "bob@example.com", Rows: []SessionRow{
		{ID: strings.Repeat("a", 64), ShortID: "aaaaaaaaaaaa", Created: "2026-11-24 10:00 UTC", LastSeen: "2026-11-24 11:00 UTC", UserAgent: "Firefox"},
		{ID: id, ShortID: "bbbbbbbbbbbb", UserAgent: "Chromium", ThisDevice: true},
	}}))
	rows := doc.Find("#sessions tbody tr")
	require.Equal(t, 2, rows.Length())
	assert.Contains(t, rows.Eq(0).Text(), "Firefox")
	assert.Contains(t, rows.Eq(0).Text(), "2026-11-24 11:00 UTC")
	assert.Equal(t, 0, rows.Eq(0).Find(".pill").Length())
	assert.Contains(t, rows.Eq(1).Find(".pill").Text(), "this device")
	assert.Equal(t, "/admin/accounts/7/sessions/"+id+"/end", rows.Eq(1).Find("form").AttrOr("action", ""))
	assert.Equal(t, 1, doc.Find(`form[action="/admin/accounts/7/end-sessions"]`).Length(), "end all")

	empty := render(t, AccountSessions(admin, SessionsPage{AccountID: 7, Email: "bob@example.com"}))
	assert.Equal(t, 1, empty.Find("#no-sessions").Length())
	assert.Equal(t, 0, empty.Find(`form[action="/admin/accounts/7/end-sessions"]`).Length())
}

// The set-password page posts the link's token back with both passwords;
// a used link shows no form at all.
func TestSetPasswordPage(t *testing.T) {
	doc := render(t, SetPassword(signedOut, SetPasswordForm{Token: "tok-1", Email: "bob@example.com", Error: "too short"}))
	form := doc.Find(`form[action="/set-password"]`)
	assert.Equal(t, "tok-1", form.Find(`input[name="token"]`).AttrOr("value", ""))
	assert.Equal(t, 2, form.Find(`input[type="password"]`).Length(), "asked twice")
	assert.Equal(t, "too short", text(doc, "#error-summary li a"))
	assert.Equal(t, "#new-password", doc.Find("#error-summary li a").AttrOr("href", ""))
	assert.Equal(t, "true", doc.Find("#new-password").AttrOr("aria-invalid", ""))
	assert.Equal(t, "new-password-error", doc.Find("#new-password").AttrOr("aria-describedby", ""))
	assert.Contains(t, text(doc, "main"), "bob@example.com")
	gone := render(t, SetPassword(signedOut, SetPasswordForm{Gone: true}))
	assert.Zero(t, gone.Find("form[action='/set-password']").Length())
	assert.Contains(t, text(gone, "#link-gone"), "expired or has been used")
}

// The sign-in form carries next only when it leads somewhere.
func TestLoginCarriesNext(t *testing.T) {
	doc := render(t, Login(signedOut, LoginForm{Next: "/open?return_to=%2Fe"}))
	assert.Equal(t, "/open?return_to=%2Fe", doc.Find(`form input[name="next"]`).AttrOr("value", ""))
	assert.Zero(t, render(t, Login(signedOut, LoginForm{Next: "/"})).Find(`input[name="next"]`).Length())
}

// The IdP's button, above the form or instead of it.
func TestLoginWithIdP(t *testing.T) {
	doc := render(t, Login(signedOut, LoginForm{Buttons: []SignInButton{{ID: "idp-sign-in", Label: "Acme SSO", URL: "/auth/oidc?next=%2Fx"}}}))
	assert.Equal(t, "Sign in with Acme SSO", text(doc, "#idp-sign-in"))
	assert.Equal(t, "/auth/oidc?next=%2Fx", doc.Find("#idp-sign-in").AttrOr("href", ""))
	assert.Equal(t, 1, doc.Find(`form[action="/login"]`).Length())
	hidden := render(t, Login(signedOut, LoginForm{Buttons: []SignInButton{{ID: "idp-sign-in", Label: "Acme SSO", URL: "/auth/oidc"}}, HideLocal: true}))
	assert.Zero(t, hidden.Find(`form[action="/login"]`).Length())
	assert.Zero(t, render(t, Login(signedOut, LoginForm{})).Find("#idp-sign-in").Length(), "no IdP: no button")
}

// TestAuditLogSaysHowFarItSearches: the page names the window its filters
// and counts cover, its thousands grouped.
func TestAuditLogSaysHowFarItSearches(t *testing.T) {
	for window, want := range map[int]string{999: "the newest 999 events", 250000: "the newest 250,000 events", 1234567: "the newest 1,234,567 events"} {
		doc := render(t, AuditLog(admin, AuditPage{Retention: "90 days", Window: window}))
		assert.Contains(t, doc.Find(".lead").Text(), want)
	}
}
