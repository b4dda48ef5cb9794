package e2e

import (
	"context"
	_ "embed"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/demo/samplelms"
	"github.com/ssobridge/ssobridge/internal/viewgallery"
	"github.com/ssobridge/ssobridge/static"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

// axeSource is axe-core (testdata/axe: its version, licence and how to
// update it).
//
//go:embed testdata/axe/axe.min.js
var axeSource string

// wcagAA are axe-core's tags for WCAG 2.0 and 2.1, levels A and AA.
const wcagAA = `['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']`

// axeViolations runs axe-core's WCAG 2.0/2.1 A and AA rules on the page
// in ctx: one line per violation, naming the rule, what it asks and the
// first elements that break it.
func axeViolations(t *testing.T, ctx context.Context) []string {
	t.Helper()
	found, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](axeSource+`;
(async () => {
  const r = await axe.run(document, {runOnly: {type: 'tag', values: `+wcagAA+`}, resultTypes: ['violations']});
  return r.violations.map(v => v.id + ' (' + v.impact + '): ' + v.help + ': ' +
    v.nodes.slice(0, 3).map(n => n.target.join(' ') + (n.failureSummary ? ' [' + n.failureSummary.replace(/\s+/g, ' ').slice(0, 160) + ']' : '')).join('; '));
})()`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	return found
}

// a11yPage is a page a person or an admin reaches: how to get there in
// the tab (signed in as needed), and what shows it is there.
type a11yPage struct {
	name  string
	open  func(t *testing.T, ctx context.Context)
	ready string // a CSS selector on the page
}

// TestBrowserAccessibility: every page a person and an admin can reach
// has no violation of WCAG 2.0/2.1 A and AA rules that axe-core finds, at
// a laptop's 1280 px and a phone's 375 px. The pages of the running app
// are opened as a person does; the error pages, the waiting page and the
// framed LTI page, which take a fault or an LMS's frame to reach, are
// rendered by the same views with the same stylesheet.
func TestBrowserAccessibility(t *testing.T) {
	ta := startTestApp(t, testOptions{sampleLMS: true})
	admin := ta.addNamedAccount(t, "ada.admin@partner.example", "Ada", "Admin", true)
	ta.addNamedAccount(t, "bob.builder@partner.example", "Bob", "Builder", false)
	gallery := galleryServer(t)

	nav := func(path, ready string) func(t *testing.T, ctx context.Context) {
		return func(t *testing.T, ctx context.Context) {
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(path), chromedp.WaitVisible(chromedp.CSS(ready))))
		}
	}
	b := ta.browser(t)
	b.login(admin.Email, testPassword)
	invite := b.csrf(fmt.Sprintf("/admin/accounts/%d", admin.ID))
	r := b.post(fmt.Sprintf("/admin/accounts/%d/invite", admin.ID+1), url.Values{"_csrf": {invite}})
	link := regexp.MustCompile(`/set-password\?token=[^"<\s]+`).FindString(r.body)
	require.NotEmpty(t, link, "a set-password link for bob")
	seedLTIConsole(t, ta, admin.Email)

	signedOut := []a11yPage{
		{name: "sign-in", open: nav(ta.srv.URL+"/login", "#sign-in"), ready: "#sign-in"},
		{name: "sign-in, wrong password", open: func(t *testing.T, ctx context.Context) {
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/login"), chromedp.WaitVisible(chromedp.ID("email")),
				chromedp.SendKeys(chromedp.ID("email"), "nobody@partner.example"), chromedp.SendKeys(chromedp.ID("password"), "not the password"),
				chromedp.Click(chromedp.ID("sign-in")), chromedp.WaitVisible(chromedp.CSS("#error-summary"))))
		}},
		{name: "set-password", open: nav(ta.srv.URL+link, "#set-password")},
		{name: "sample portal", open: nav(ta.srv.URL+"/demo/portal", "#deep-link")},
		{name: "LTI configuration", open: nav(ta.srv.URL+"/lti/config", "#lti-config")},
		{name: "not found", open: nav(ta.srv.URL+"/no-such-page", "#error-page")},
	}
	signedInAdmin := []a11yPage{
		{name: "start page", open: nav(ta.srv.URL+"/", "#open-editor")},
		{name: "console: connection", open: nav(ta.srv.URL+"/admin/connection", "main h1")},
		{name: "console: accounts", open: nav(ta.srv.URL+"/admin/accounts", "main h1")},
		{name: "console: an account", open: nav(fmt.Sprintf("%s/admin/accounts/%d", ta.srv.URL, admin.ID), "main h1")},
		{name: "console: sessions", open: nav(fmt.Sprintf("%s/admin/accounts/%d/sessions", ta.srv.URL, admin.ID), "main h1")},
		{name: "console: platform users", open: nav(ta.srv.URL+"/admin/platform-users", "main h1")},
		{name: "console: provisioning", open: nav(ta.srv.URL+"/admin/provisioning", "main h1")},
		{name: "console: sign-in bans", open: nav(ta.srv.URL+"/admin/bans", "main h1")},
		{name: "console: audit log", open: nav(ta.srv.URL+"/admin/audit", "main h1")},
		{name: "console: LTI", open: nav(ta.srv.URL+"/admin/lti", "#lti-courses")},
		{name: "switch accounts (a portal link of another person)", open: func(t *testing.T, ctx context.Context) {
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/demo/portal"), chromedp.WaitVisible(chromedp.ID("deep-link")),
				chromedp.Click(chromedp.CSS(`#demo-portal button[type="submit"]`)), chromedp.WaitVisible(chromedp.ID("handoff-switch"))))
		}},
	}
	galleryPages, galleryVariants := gallery.pages(gallery.names, nav), gallery.pages(gallery.variants, nav)

	total, violations := 0, 0
	// Signed out in a browser context of its own (no cookies); signed in
	// as the admin in the admin's.
	adminCtx, closeAdmin := pageTab(t, nil)
	defer closeAdmin()
	signIn(t, adminCtx, ta.srv.URL, admin.Email)
	// axe at a laptop's and a phone's width; then the reflow of WCAG 1.4.10
	// (320 CSS px: 1280 px at 400 %) and text at 200 % (1.4.4): nothing
	// scrolls sideways and no control leaves the page.
	for _, view := range []struct {
		width int64
		axe   bool
		text  string // the root font size
	}{{1280, true, ""}, {375, true, ""}, {320, false, ""}, {1280, false, "200%"}} {
		groups := []struct {
			pages []a11yPage
			in    context.Context
		}{{signedOut, nil}, {galleryPages, nil}, {signedInAdmin, adminCtx}}
		if view.width == 1280 && view.axe {
			// The error pages' other readers, at one width: their shell
			// is the person's, checked at every width.
			groups = append(groups, struct {
				pages []a11yPage
				in    context.Context
			}{galleryVariants, nil})
		}
		for _, group := range groups {
			ctx, cancel := pageTab(t, group.in)
			require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(view.width, 800)))
			for _, p := range group.pages {
				p.open(t, ctx)
				if view.axe {
					v := axeViolations(t, ctx)
					assert.Empty(t, v, "%s at %d px", p.name, view.width)
					total, violations = total+1, violations+len(v)
					continue
				}
				overflow := reflowProblems(t, ctx, view.text)
				assert.Empty(t, overflow, "%s at %d px, text %s", p.name, view.width, view.text)
			}
			cancel()
		}
	}
	t.Logf("axe-core (WCAG 2.0/2.1 A and AA): %d page views (%d pages at 1280 and 375 px, %d variants of the error pages at 1280), %d violations; reflow at 320 px and text at 200 %%",
		total, len(signedOut)+len(galleryPages)+len(signedInAdmin), len(galleryVariants), violations)
}

// reflowProblems is what breaks the page's reflow with the root font
// size at text ("": as it is): a page that scrolls sideways (with the
// elements that stick out) and controls off the page.
func reflowProblems(t *testing.T, ctx context.Context, text string) []string {
	t.Helper()
	overflow, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
  if (`+strconv.Quote(text)+`) document.documentElement.style.fontSize = `+strconv.Quote(text)+`;
  const bad = [];
  if (document.documentElement.scrollWidth > window.innerWidth + 1) {
    const wide = [];
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const r = document.createRange();
      r.selectNodeContents(n);
      if ([...r.getClientRects()].some(x => x.right > window.innerWidth + 1)) wide.push(n.parentElement.tagName.toLowerCase() + (n.parentElement.id ? '#' + n.parentElement.id : '') + ' "' + n.textContent.trim().slice(0, 40) + '"');
    }
    for (const e of document.querySelectorAll('body *')) {
      if (e.getBoundingClientRect().right > window.innerWidth + 1) wide.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className ? '.' + e.className : ''));
    }
    bad.push('the page scrolls sideways (' + document.documentElement.scrollWidth + ' > ' + window.innerWidth + '): ' + wide.slice(0, 4).join(', '));
  }
  for (const el of document.querySelectorAll('main input, main select, main button, main a, main textarea')) {
    if (el.offsetParent !== null && el.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !el.closest('.table-wrap')) bad.push('off the page: ' + el.tagName + '#' + el.id + ' ' + (el.innerText || '').slice(0, 30));
  }
  return bad;
})()`))
	require.NoError(t, err)
	return overflow
}

// seedLTIConsole gives the console's LTI page a registered LMS and a
// course.
func seedLTIConsole(t *testing.T, ta *testApp, by string) {
	t.Helper()
	require.NoError(t, (&lti.Records{Store: ta.store}).AddPlatform(t.Context(), lti.Registered{Name: "sample-lms (moodle.school.example)", Issuer: "https://moodle.school.example",
		ClientID: "registered-1", DeploymentID: "1", AuthURL: "https://moodle.school.example/auth", JWKSURL: "https://moodle.school.example/jwks",
		RegisteredAt: time.Now(), RegisteredBy: by, CreateAccounts: true}))
	require.NoError(t, (&lti.Records{Store: ta.store}).SeeCourse(t.Context(), lti.Course{Issuer: "https://moodle.school.example", ClientID: "registered-1", ContextID: "7",
		Title: "Media studies", MembershipsURL: "https://moodle.school.example/nrps/7", LaunchedBy: "teacher@school.example", LastLaunchAt: time.Now()}))
}

// gallery serves every page that takes a fault, an LMS's frame or a
// waiting line to reach, rendered by the views with the real stylesheet:
// each error page as an end user and as an admin reads it.
type gallery struct {
	srv   *httptest.Server
	names []string // every page; as a person reads it where there are variants
	// variants are the error pages as an admin and as a signed-out person
	// read them: the same shell with the status and the technical detail
	// (an admin), or without a header (signed out).
	variants []string
}

// pages are the gallery's pages of these names, opened by nav.
func (g gallery) pages(names []string, nav func(path, ready string) func(*testing.T, context.Context)) []a11yPage {
	var out []a11yPage
	for _, name := range names {
		out = append(out, a11yPage{name: name, open: nav(g.srv.URL+"/"+url.PathEscape(name), "main")})
	}
	return out
}

func galleryServer(t *testing.T) gallery {
	t.Helper()
	pages := map[string]templ.Component{}
	var names, variants []string
	for _, p := range viewgallery.Pages(nil, wayin.Wordings(app.Modules()), wayin.Samples(app.Modules(), nil)) {
		pages[p.Name] = p.View
		if p.Variant {
			variants = append(variants, p.Name)
		} else {
			names = append(names, p.Name)
		}
	}
	mux := http.NewServeMux()
	css, err := fs.Sub(static.Files, ".")
	require.NoError(t, err)
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(css)))
	mux.HandleFunc("GET /launch/wait/abc/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ready":false,"say":"40 seconds","waited":12,"total":52,"every":5000}`)) // the page stays as it is
	})
	mux.HandleFunc("GET /{name}", func(w http.ResponseWriter, r *http.Request) {
		page, ok := pages[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = page.Render(r.Context(), w)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	if testing.Verbose() {
		t.Logf("gallery: %s", strings.Join(names, ", "))
	}
	return gallery{srv: srv, names: names, variants: variants}
}

// focused describes the focused element: its id (or tag and text), and
// whether its focus is visible (an outline or a ring).
type focused struct {
	ID, Tag, Text string
	Visible       bool
}

const focusedJS = `(() => {
  const el = document.activeElement;
  if (!el || el === document.body) return {ID: "", Tag: "body", Text: "", Visible: false};
  const cs = getComputedStyle(el);
  const ring = (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2) || (cs.boxShadow && cs.boxShadow !== 'none');
  return {ID: el.id, Tag: el.tagName.toLowerCase(), Text: (el.innerText || el.value || '').trim().slice(0, 60), Visible: ring || el.id === 'main' || el.id === 'error-summary' && cs.outlineStyle !== 'none'};
})()`

func whatHasFocus(t *testing.T, ctx context.Context) focused {
	t.Helper()
	f, err := chromedp.Run(ctx, chromedp.Evaluate[focused](focusedJS))
	require.NoError(t, err)
	return f
}

// tabTo presses Tab until the element with id has focus (at most 30
// times), checking that every element on the way shows its focus, and
// returns how many presses it took.
func tabTo(t *testing.T, ctx context.Context, id string) int {
	t.Helper()
	var path []string
	for n := 1; n <= 30; n++ {
		require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)))
		f := whatHasFocus(t, ctx)
		path = append(path, f.Tag+"#"+f.ID+" "+f.Text)
		assert.True(t, f.Visible, "focus is visible on %s#%s %q", f.Tag, f.ID, f.Text)
		if f.ID == id {
			return n
		}
	}
	t.Fatalf("Tab never reached #%s; focus went: %s", id, strings.Join(path, " > "))
	return 0
}

// The ways a person goes with the keyboard alone (Tab, Shift+Tab, Enter,
// Space), focus always visible: the skip link, sign-in with an error
// summary that takes focus and leads to its field, the start page to the
// editor, a set-password link, the handoff's confirmation, and a console
// action.
func TestBrowserKeyboardOnly(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	admin := ta.addNamedAccount(t, "ada.admin@partner.example", "Ada", "Admin", true)
	bob := ta.addNamedAccount(t, "bob.builder@partner.example", "Bob", "Builder", false)
	ctx := newTab(t)
	k := keyboard{t, ctx}
	key, typeText, waitFor := k.key, k.key, k.waitFor

	// The first Tab of a page reaches "Skip to content", which moves focus
	// to the page's content.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/no-such-page"), chromedp.WaitVisible(chromedp.ID("error-page"))))
	key(kb.Tab)
	f := whatHasFocus(t, ctx)
	assert.Equal(t, "Skip to content", f.Text)
	assert.True(t, f.Visible)
	key(kb.Enter)
	assert.Equal(t, "main", whatHasFocus(t, ctx).ID, "the skip link moves focus to the content")

	// The language switch, with the keyboard: the page again in German,
	// kept for the next page, and as accessible as in English; then back.
	tabTo(t, ctx, "lang-de")
	key(kb.Enter)
	waitFor(`html[lang="de"] #error-page`)
	heading, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('error-title').innerText`))
	require.NoError(t, err)
	assert.Equal(t, "Seite nicht gefunden", heading)
	assert.Empty(t, axeViolations(t, ctx), "the German page")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/login"), chromedp.WaitVisible(chromedp.CSS(`html[lang="de"] #email`))))
	tabTo(t, ctx, "lang-en")
	key(kb.Enter)
	waitFor(`html[lang="en"] #email`)

	keyboardSignIn(k, ta.srv.URL, admin.Email)

	// A console action: end Bob's sessions from his page.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/admin/accounts/%d", ta.srv.URL, bob.ID)), chromedp.WaitVisible(chromedp.CSS("main h1"))))
	for n := 0; n < 40; n++ {
		key(kb.Tab)
		a, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.dataset.action || ''`))
		require.NoError(t, err)
		if a == "end-sessions" {
			break
		}
	}
	key(" ") // Space presses a button
	waitFor("#notice")
	notice, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("notice")))
	require.NoError(t, err)
	assert.Contains(t, notice, "Ended every session of "+bob.Email)

	// The handoff's confirmation: the sample portal signs in another
	// person; the switch page is answered with the keyboard.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/demo/portal"), chromedp.WaitVisible(chromedp.ID("portal-open-editor"))))
	tabTo(t, ctx, "portal-open-editor")
	key(kb.Enter)
	waitFor("#handoff-switch")
	tabTo(t, ctx, "switch-account")
	key(" ")
	waitFor("#who")
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("who")))
	require.NoError(t, err)
	assert.Equal(t, "Signed in as Grace Hopper", who)

	// A set-password link, used with the keyboard alone.
	b := ta.browser(t)
	b.login(admin.Email, testPassword)
	r := b.post(fmt.Sprintf("/admin/accounts/%d/invite", bob.ID), url.Values{"_csrf": {b.csrf(fmt.Sprintf("/admin/accounts/%d", bob.ID))}})
	link := regexp.MustCompile(`/set-password\?token=[^"<\s]+`).FindString(r.body)
	require.NotEmpty(t, link)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+html.UnescapeString(link)), chromedp.WaitVisible(chromedp.ID("new-password"))))
	tabTo(t, ctx, "new-password")
	typeText("a keyboard password")
	key(kb.Tab)
	assert.Equal(t, "confirm-password", whatHasFocus(t, ctx).ID)
	typeText("a keyboard password")
	key(kb.Enter)
	waitFor("#open-editor")
	name, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("signed-in-as")))
	require.NoError(t, err)
	assert.Equal(t, "Bob Builder", name)
}

// keyboard presses keys in one tab.
type keyboard struct {
	t   *testing.T
	ctx context.Context
}

// key presses k (or types the text k).
func (k keyboard) key(s string, opts ...chromedp.KeyOption) {
	k.t.Helper()
	require.NoError(k.t, chromedp.Do(k.ctx, chromedp.KeyEvent(s, opts...)))
}

func (k keyboard) waitFor(sel string) {
	k.t.Helper()
	require.NoError(k.t, chromedp.Do(k.ctx, chromedp.WaitVisible(chromedp.CSS(sel))))
}

// keyboardSignIn signs in at base with the keyboard alone: a wrong password first
// (the error summary takes focus; its link moves focus to the field,
// which says it is invalid), then the right one, then the editor.
func keyboardSignIn(k keyboard, base, email string) {
	t, ctx := k.t, k.ctx
	t.Helper()
	key, typeText, waitFor := k.key, k.key, k.waitFor
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.ID("email"))))
	assert.Equal(t, "email", whatHasFocus(t, ctx).ID, "the sign-in page starts in its first field")
	typeText(email)
	key(kb.Tab)
	assert.Equal(t, "password", whatHasFocus(t, ctx).ID)
	typeText("not the password")
	key(kb.Enter)
	waitFor("#error-summary")
	assert.Equal(t, "error-summary", whatHasFocus(t, ctx).ID, "the summary takes focus")
	key(kb.Tab)
	assert.Equal(t, "a", whatHasFocus(t, ctx).Tag, "the summary's link to the field")
	// Enter on a link acts on its key down; a browser then sends no
	// keypress to the field the link focused (CDP's separate "char" event
	// would, and submit the form).
	require.NoError(t, chromedp.Do(ctx, keyWithoutChar('\r')))
	assert.Equal(t, "email", whatHasFocus(t, ctx).ID, "the link moves focus to its field")
	invalid, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('email').getAttribute('aria-invalid') + ' ' + document.getElementById(document.getElementById('email').getAttribute('aria-describedby')).innerText`))
	require.NoError(t, err)
	assert.Contains(t, invalid, "true Error:")

	// The right password, then the editor.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('email').select(), true`))
	require.NoError(t, err)
	typeText(email)
	key(kb.Tab)
	typeText(testPassword)
	key(kb.Enter)
	waitFor("#open-editor")
	tabTo(t, ctx, "open-editor")
	key(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift))
	assert.NotEqual(t, "open-editor", whatHasFocus(t, ctx).ID, "Shift+Tab goes back")
	key(kb.Tab)
	assert.Equal(t, "open-editor", whatHasFocus(t, ctx).ID)
	key(kb.Enter)
	waitFor("#who")
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("who")))
	require.NoError(t, err)
	assert.Equal(t, "Signed in as Ada Admin", who)
}

// pageTab is a tab for a run of pages, closed by cancel: in the browser
// context of in (its cookies), or with in nil in a new one (none).
func pageTab(t *testing.T, in context.Context) (context.Context, func()) {
	t.Helper()
	newTab(t) // starts the browser (or skips) first
	var tab context.Context
	var closeTab func()
	if in == nil {
		tab, closeTab = chromedp.NewContext(browserOnce.ctx, chromedp.WithNewBrowserContext())
	} else {
		tab, closeTab = chromedp.NewContext(in)
	}
	ctx, cancel := context.WithTimeout(tab, 5*time.Minute)
	return ctx, func() { cancel(); closeTab() }
}

// keyWithoutChar presses r: its key down and key up, without the separate
// "char" event of chromedp.KeyEvent.
func keyWithoutChar(r rune) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, k := range kb.Encode(r) {
			if k.Type == kb.KeyChar {
				continue
			}
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, *k); err != nil {
				return err
			}
		}
		return nil
	})
}

// The demo's own sample pages reflow at 320 CSS px too, in every
// language: the sample partner portal (a long address, Portuguese's long
// words) and the sample LMS's course page with the tool in its frame.
func TestBrowserDemoPagesReflowAt320(t *testing.T) {
	ta := startTestApp(t, testOptions{sampleLMS: true})
	require.NotNil(t, ta.lms)
	// A browser context of its own: the language chosen by ?lang= is kept
	// in a cookie, which the other tests' tabs must not inherit.
	ctx, closeTab := pageTab(t, nil)
	defer closeTab()
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(320, 800)))
	wide := func(u string) string {
		t.Helper()
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitReady("body")))
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
  if (document.documentElement.scrollWidth <= window.innerWidth + 1) return "";
  const wide = [];
  for (const e of document.querySelectorAll('body *')) {
    if (e.getBoundingClientRect().right > window.innerWidth + 1) wide.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : ''));
  }
  return document.documentElement.scrollWidth + " > " + window.innerWidth + ": " + wide.slice(0, 4).join(", ");
})()`))
		require.NoError(t, err)
		return got
	}
	for _, lang := range []string{"en", "es", "fr", "de", "pt-BR"} {
		assert.Empty(t, wide(ta.srv.URL+"/demo/portal?lang="+lang), "the sample portal in %s", lang)
	}
	assert.Empty(t, wide(ta.lms.URL()+samplelms.CoursePath), "the sample LMS's course page")
	assert.Empty(t, wide(ta.lms.URL()+"/framed/ada"), "the tool in the course page's frame")
}
