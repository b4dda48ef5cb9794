package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/internal/skipnote"
	"github.com/ssobridge/ssobridge/store"
)

// sharedBrowser is one headless Chromium for the whole test binary (a
// browser per test costs seconds each); every test gets its own tab.
type sharedBrowser struct {
	once    sync.Once
	ctx     context.Context
	cancel  func()
	missing string
}

var browserOnce sharedBrowser

func chromiumPath() string {
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	return ""
}

// newTab returns a browser tab. Without Chromium the test is skipped,
// except under CI=true, where a missing browser fails the run.
func newTab(t *testing.T) context.Context {
	t.Helper()
	b := &browserOnce
	b.once.Do(func() {
		path := chromiumPath()
		if path == "" {
			b.missing = "chromium not found"
			return
		}
		dir, err := os.MkdirTemp("", "ssobridge-chromium-")
		if err != nil {
			b.missing = err.Error()
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-sync", true),
			// Names under .test are sites of their own on loopback, over
			// httptest's certificate: a cross-site sign-in as in service.
			chromedp.Flag("host-resolver-rules", "MAP *.test 127.0.0.1"), chromedp.Flag("ignore-certificate-errors", true),
			chromedp.UserDataDir(dir), chromedp.WindowSize(1100, 900))
		actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, bcancel := chromedp.NewContext(actx)
		if err := chromedp.Do(bctx); err != nil { // starts the browser
			b.missing = "chromium did not start: " + err.Error()
			bcancel()
			acancel()
			return
		}
		b.ctx = bctx
		b.cancel = func() { bcancel(); acancel(); os.RemoveAll(dir) }
	})
	if b.ctx == nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("browser tests need Chromium under CI: %s", b.missing)
		}
		skipnote.Skip(t, "browser tests", b.missing+" (apt-get update && apt-get install -y chromium)")
	}
	tab, cancel := chromedp.NewContext(b.ctx)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(tab, 60*time.Second)
	t.Cleanup(cancelTimeout)
	return ctx
}

// screenshot saves a PNG under the test's temp dir and, when
// SSOBRIDGE_SCREENSHOTS names a folder, there too if the docs show it
// (docs/img/NAME.png in README.md or docs/*.md): the folder gets the
// pictures the docs show, none they do not.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG; below: JPEG
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(t.TempDir(), name+".png"), png, 0o600))
	if dir := os.Getenv("SSOBRIDGE_SCREENSHOTS"); dir != "" && docImages(t)["img/"+name+".png"] {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
	}
}

func signIn(t *testing.T, ctx context.Context, base, email string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.SendKeys(chromedp.ID("password"), testPassword),
		chromedp.Click(chromedp.ID("sign-in")),
		chromedp.WaitVisible(chromedp.ID("open-editor")),
	))
}

func TestBrowserSignInAndOpenEditor(t *testing.T) {
	ctx := newTab(t)
	ta := startTestApp(t, testOptions{})
	ta.addAccount(t, "ada@example.com", false)

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("sign-in"))))
	screenshot(t, ctx, "1-login")
	signIn(t, ctx, ta.srv.URL, "ada@example.com")
	screenshot(t, ctx, "2-home")

	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("open-editor")), chromedp.WaitVisible(chromedp.ID("who"))))
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("who")))
	require.NoError(t, err)
	assert.Equal(t, "Signed in as Ada Lovelace", who)
	loc, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	assert.Equal(t, ta.sim.URL+"/editor", loc, "the token URL is not what the browser stays on")
	screenshot(t, ctx, "3-editor")
	assert.Len(t, ta.sim.Users("ada@example.com"), 1)

	// Back to the start page: the last launch is shown, a second launch is a returning one.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("last-launch"))))
	last, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("last-launch")))
	require.NoError(t, err)
	assert.NotContains(t, last, "never")
	ta.calls()
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("open-editor")), chromedp.WaitVisible(chromedp.ID("who"))))
	assert.Equal(t, map[string]int{"issue_token": 1, "exchange": 1}, ta.calls())
}

// The 403 page: an admin reads the cause and what to change; an end user
// reads that it is not their doing, and the reference to quote.
func TestBrowserForbiddenPageExplains(t *testing.T) {
	ctx := newTab(t)
	ta := startTestApp(t, testOptions{simConfig: func(c *platformsim.Config) { c.Credentials[0].Admin = false }})
	ta.addAccount(t, "root@example.com", true)
	ta.addAccount(t, "ada@example.com", false)
	signIn(t, ctx, ta.srv.URL, "root@example.com")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("open-editor")), chromedp.WaitVisible(chromedp.ID("error-title"))))
	title, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("error-title")))
	require.NoError(t, err)
	assert.Equal(t, "The video platform refused the bridge's access", title)
	body, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("error-page")))
	require.NoError(t, err)
	assert.Contains(t, body, "not an admin of the Instance")
	assert.Contains(t, body, "For the partner admin")
	screenshot(t, ctx, "4-forbidden")

	// Tabs share the browser's cookies: sign root out, then Ada in.
	user := ctx
	require.NoError(t, chromedp.Do(user, chromedp.Navigate(ta.srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("open-editor")),
		chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)), chromedp.WaitVisible(chromedp.ID("email"))))
	signIn(t, user, ta.srv.URL, "ada@example.com")
	require.NoError(t, chromedp.Do(user, chromedp.Click(chromedp.ID("open-editor")), chromedp.WaitVisible(chromedp.ID("error-title"))))
	title, err = chromedp.Run(user, chromedp.Text(chromedp.ID("error-title")))
	require.NoError(t, err)
	assert.Equal(t, "The video editor is not available right now", title)
	body, err = chromedp.Run(user, chromedp.Text(chromedp.ID("error-page")))
	require.NoError(t, err)
	assert.Contains(t, body, "not something you did")
	assert.Contains(t, body, "Reference to quote")
	assert.NotContains(t, body, "For the partner admin")
	assert.NotContains(t, body, "SSOBRIDGE_")
	screenshot(t, user, "4-forbidden-user")
	assert.Empty(t, ta.sim.Users("ada@example.com"))
}

// At 375 px nothing scrolls sideways: not the portal, not the admin
// console with filled tables (a table may scroll inside its own frame).
func TestBrowserPhoneWidth(t *testing.T) {
	ctx := newTab(t)
	ta := startTestApp(t, testOptions{})
	ta.addAccount(t, "ada@example.com", true)
	for i := range 3 {
		ta.addAccount(t, fmt.Sprintf("a-rather-long-address-%d@partner-portal.example.com", i), false)
		_, err := ta.sim.AddUser("Platform", "User", fmt.Sprintf("platform-user-with-a-long-name-%d@video.example.com", i))
		require.NoError(t, err)
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(375, 700)))
	signIn(t, ctx, ta.srv.URL, "ada@example.com")
	overflows := func() bool {
		o, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
		require.NoError(t, err)
		return o
	}
	assert.False(t, overflows(), "no horizontal scrolling at 375 px: portal")
	screenshot(t, ctx, "5-home-phone")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/demo/portal"), chromedp.WaitVisible(chromedp.ID("deep-link"))))
	assert.False(t, overflows(), "no horizontal scrolling at 375 px: the sample portal (its deep link wraps)")
	screenshot(t, ctx, "5-sample-portal-phone")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/")))
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("open-editor")), chromedp.WaitVisible(chromedp.ID("who")))) // fills the audit log
	// Nor does a table scroll inside its frame: its rows stack, each cell
	// naming its column, so no column is hidden off to the side.
	hiddenColumns := func() int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`[...document.querySelectorAll('.table-wrap')].filter(w => w.scrollWidth > w.clientWidth + 1).length`))
		require.NoError(t, err)
		return n
	}
	for _, page := range []string{"/admin/connection", "/admin/accounts", "/admin/platform-users", "/admin/audit", "/admin/accounts/1/sessions"} {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+page), chromedp.WaitVisible(chromedp.CSS("main h1"))))
		assert.False(t, overflows(), "no horizontal scrolling at 375 px: %s", page)
		assert.Zero(t, hiddenColumns(), "no table scrolls sideways at 375 px: %s", page)
		screenshot(t, ctx, "8"+strings.ReplaceAll(page, "/", "-")+"-phone")
	}
}

// A person's sessions: the admin opens an account's Sessions from the
// list and ends another device's session with a click; then, in the
// portal, "Sign out on every device" signs the browser and every other
// device out.
func TestBrowserSessions(t *testing.T) {
	ctx := newTab(t)
	ta := startTestApp(t, testOptions{})
	root := ta.addAccount(t, "root@example.com", true)
	phone := ta.browser(t) // another device of root's, over plain HTTP
	require.Equal(t, http.StatusSeeOther, phone.login("root@example.com", testPassword).status)
	signIn(t, ctx, ta.srv.URL, "root@example.com")

	sessions := fmt.Sprintf(`a[href="/admin/accounts/%d/sessions"]`, root.ID)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/admin/accounts"),
		chromedp.Click(chromedp.CSS(`tr[data-email="root@example.com"] a[data-action="manage"]`)), chromedp.WaitVisible(chromedp.ID("account")),
		chromedp.Click(chromedp.CSS(sessions)), chromedp.WaitVisible(chromedp.ID("sessions"))))
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#sessions tbody tr').length`))
	require.NoError(t, err)
	assert.Equal(t, 2, rows, "this browser and the phone")
	screenshot(t, ctx, "9-admin-sessions")
	// End the row that is not this device.
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#sessions tr:not(:has(.pill)) button[data-action="end-session"]`)),
		chromedp.WaitVisible(chromedp.ID("notice"))))
	rows, err = chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#sessions tbody tr').length`))
	require.NoError(t, err)
	assert.Equal(t, 1, rows)
	assert.Equal(t, "/login?expired=1", phone.get("/").header.Get("Location"), "the phone is signed out")

	require.Equal(t, http.StatusSeeOther, phone.login("root@example.com", testPassword).status)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/"), chromedp.Click(chromedp.ID("logout-everywhere")),
		chromedp.WaitVisible(chromedp.ID("email"))))
	notice, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".notice")))
	require.NoError(t, err)
	assert.Contains(t, notice, "signed out on every device")
	assert.Equal(t, "/login?expired=1", phone.get("/").header.Get("Location"), "every device is signed out")
}

// A person in the partner's portal clicks "Open video editor" and lands in
// the editor, signed in, without typing a password (the sample portal of
// the embedded demo, which signs a handoff token with the demo's key).
func TestBrowserPortalToEditorWithoutAPassword(t *testing.T) {
	ctx := newTab(t)
	ta := startTestApp(t, testOptions{})
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/demo/portal"), chromedp.WaitVisible(chromedp.ID("portal-open-editor"))))
	screenshot(t, ctx, "10-sample-portal")
	start := time.Now()
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("portal-open-editor")), chromedp.WaitVisible(chromedp.ID("who"))))
	took := time.Since(start)
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("who")))
	require.NoError(t, err)
	assert.Equal(t, "Signed in as Grace Hopper", who)
	t.Logf("portal click to the editor: %s", took.Round(time.Millisecond))
	screenshot(t, ctx, "11-editor-from-portal")
	acct, err := ta.store.AccountByEmail(t.Context(), "grace.hopper@portal.example")
	require.NoError(t, err, "the portal user's account was created on first arrival")
	assert.Equal(t, passhash.NoPassword, acct.PasswordHash, "and has no password: none was typed")
}

// A deep link while signed out: the sign-in page, then the editor at the
// link's path.
func TestBrowserDeepLinkThroughSignIn(t *testing.T) {
	ctx := newTab(t)
	ta := startTestApp(t, testOptions{})
	ta.addAccount(t, "ada@example.com", false)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/open?return_to=%2Feditor%2Fprojects%2F42"),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), "ada@example.com"),
		chromedp.SendKeys(chromedp.ID("password"), testPassword),
		chromedp.Click(chromedp.ID("sign-in")),
		chromedp.WaitVisible(chromedp.ID("who"))))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	u, err := url.Parse(loc)
	require.NoError(t, err)
	assert.Equal(t, "/editor/projects/42", u.Path, "the editor at the link's path")
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("who")))
	require.NoError(t, err)
	assert.Equal(t, "Signed in as Ada Lovelace", who)
}

// A person signs in through the partner's identity provider: a deep link,
// the bridge's "Sign in with ..." button, Dex's real login page, then the
// editor at the link's path.
func TestBrowserSignInWithTheIdentityProvider(t *testing.T) {
	ta := dexBridge(t, testOptions{}, "")
	ctx := newTab(t)
	start := time.Now()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+"/open?return_to=%2Feditor%2Fprojects%2F5"),
		chromedp.WaitVisible(chromedp.ID("idp-sign-in"))))
	screenshot(t, ctx, "12-login-with-idp")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("idp-sign-in")),
		chromedp.WaitVisible(chromedp.ID("login")),
		chromedp.SendKeys(chromedp.ID("login"), dexAda.email),
		chromedp.SendKeys(chromedp.ID("password"), dexAda.password),
		chromedp.Click(chromedp.ID("submit-login")),
		chromedp.WaitVisible(chromedp.ID("who"))))
	t.Logf("deep link to the editor through Dex's login page: %s", time.Since(start).Round(time.Millisecond))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	u, err := url.Parse(loc)
	require.NoError(t, err)
	assert.Equal(t, "/editor/projects/5", u.Path)
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("who")))
	require.NoError(t, err)
	assert.Contains(t, who, "Signed in as")
}

// layoutProblems lists, for the page in the tab, every control whose label
// wraps or that sticks out of the page, every platform id or audit time
// broken over lines, every placeholder cut off, an empty band above a
// card's first line, a stacked cell shown with its label and no value, a
// stacked audit event of more than six lines (a long address and a long
// detail take two each), and sideways scrolling.
const layoutProblems = `(() => {
  const bad = [];
  const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.dataset.action ? '[' + el.dataset.action + ']' : '') +
    ' "' + (el.innerText || el.placeholder || el.value || '').trim().slice(0, 40) + '"';
  const lines = el => {
    const r = document.createRange();
    r.selectNodeContents(el);
    return new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top))).size;
  };
  const shown = el => el.offsetParent !== null;
  for (const el of document.querySelectorAll('main button, main a.button, main td code, main code.id, #audit td:first-child, main .pill')) {
    if (shown(el) && lines(el) > 1) bad.push('wraps: ' + name(el));
  }
  for (const el of document.querySelectorAll('main input, main select, main button, main a.button')) {
    if (shown(el) && el.getBoundingClientRect().right > document.documentElement.clientWidth + 1) bad.push('off the page: ' + name(el));
  }
  const ctx = document.createElement('canvas').getContext('2d');
  for (const el of document.querySelectorAll('main input[placeholder]')) {
    if (!shown(el)) continue;
    const cs = getComputedStyle(el);
    ctx.font = cs.font;
    const room = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    if (ctx.measureText(el.placeholder).width > room + 1) bad.push('placeholder cut off: ' + name(el));
  }
  for (const card of document.querySelectorAll('main .card')) {
    const first = card.firstElementChild;
    if (!first || !shown(first)) continue;
    const gap = first.getBoundingClientRect().top - card.getBoundingClientRect().top - parseFloat(getComputedStyle(card).paddingTop) - parseFloat(getComputedStyle(card).borderTopWidth);
    if (gap > 2) bad.push('a band of ' + Math.round(gap) + ' px above ' + name(first));
  }
  for (const td of document.querySelectorAll('main td[data-label]')) {
    if (shown(td) && getComputedStyle(td).display === 'block' && td.innerText.trim() === '') bad.push('a label without a value: ' + td.dataset.label);
  }
  for (const tr of document.querySelectorAll('#audit tbody tr')) {
    if (getComputedStyle(tr).display === 'table-row') continue; // a table's row: as tall as its widest cell needs
    // Its cells side by side make a row; a row is as tall as its tallest.
    const rows = new Map();
    for (const td of tr.querySelectorAll('td')) {
      if (!shown(td)) continue;
      const r = td.getBoundingClientRect(), cs = getComputedStyle(td);
      const text = r.height - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);
      rows.set(Math.round(r.top), Math.max(rows.get(Math.round(r.top)) || 0, text));
    }
    const lh = parseFloat(getComputedStyle(tr.querySelector('td')).lineHeight) || 24;
    const n = Math.round([...rows.values()].reduce((a, b) => a + b, 0) / lh);
    if (n > 6) bad.push('an audit event of ' + n + ' lines');
  }
  if (document.documentElement.scrollWidth > window.innerWidth) bad.push('the page scrolls sideways');
  return bad;
})()`

// The console at a laptop's 1280 px and a phone's 375 px: on every page
// no control wraps or sticks out, platform ids and audit times stay whole,
// no placeholder is cut off, nothing scrolls sideways. Screenshots of
// each page at both widths.
func TestBrowserConsoleLayout(t *testing.T) {
	ctx := newTab(t)
	ta := startTestApp(t, testOptions{})
	root := ta.addNamedAccount(t, "ada.admin@partner-portal.example.com", "Ada", "Admin", true)
	b := ta.browser(t)
	for i, name := range [][2]string{{"Grace", "Hopper"}, {"Katherine", "Johnson"}, {"Margaret", "Hamilton-Whitfield"}, {"Radia", "Perlman"}} {
		email := fmt.Sprintf("%s.%s@a-rather-long-partner-portal.example.com", strings.ToLower(name[0]), strings.ToLower(name[1]))
		ta.addNamedAccount(t, email, name[0], name[1], false)
		if i == 3 {
			continue // not linked yet
		}
		user := ta.browser(t)
		require.Equal(t, http.StatusSeeOther, user.login(email, testPassword).status)
		require.Equal(t, http.StatusSeeOther, user.launch().status) // a link with a platform id beyond 2^53, audit rows
	}
	require.Equal(t, http.StatusUnauthorized, b.login("radia.perlman@a-rather-long-partner-portal.example.com", "wrong password").status) // a failed sign-in in the log
	bob, err := ta.store.AccountByEmail(t.Context(), "grace.hopper@a-rather-long-partner-portal.example.com")
	require.NoError(t, err)
	signIn(t, ctx, ta.srv.URL, root.Email)
	pages := map[string]string{
		"accounts": "/admin/accounts", "account": fmt.Sprintf("/admin/accounts/%d", bob.ID), "sessions": fmt.Sprintf("/admin/accounts/%d/sessions", bob.ID),
		"audit": "/admin/audit", "platform-users": "/admin/platform-users", "connection": "/admin/connection", "bans": "/admin/bans",
	}
	// A SCIM client's ban and an address's, for the bans page.
	for _, email := range []string{store.SCIMTokenAddress("2001:db8:85a3::8a2e:370:7334"), "radia.perlman@a-rather-long-partner-portal.example.com"} {
		for range 5 {
			id, _, err := ta.store.AdmitSignIn(t.Context(), store.SignIn{Email: email, IP: "192.0.2.7", At: time.Now()}, store.RegulationConfig{MaxRetries: 3, FindTime: time.Minute, BanTime: time.Hour})
			require.NoError(t, err)
			_, err = ta.store.FailSignIn(t.Context(), id, store.RegulationConfig{MaxRetries: 3, FindTime: time.Minute, BanTime: time.Hour}, time.Now())
			require.NoError(t, err)
		}
	}
	for _, width := range []int64{1280, 375} {
		require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(width, 800)))
		for name, path := range pages {
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ta.srv.URL+path), chromedp.WaitVisible(chromedp.CSS("main h1"))))
			problems, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](layoutProblems))
			require.NoError(t, err)
			assert.Empty(t, problems, "%s at %d px", path, width)
			screenshot(t, ctx, fmt.Sprintf("10-console-%s-%d", name, width))
		}
	}

	// A set-password link from the account's page, and the page it opens.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(ta.srv.URL+pages["account"]),
		chromedp.Click(chromedp.CSS(`button[data-action="invite"]`)), chromedp.WaitVisible(chromedp.ID("invite-link"))))
	screenshot(t, ctx, "11-console-set-password-link")
	link, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("invite-link")))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("set-password"))))
	screenshot(t, ctx, "12-set-password")
}

// A launch that waits for the platform shows the waiting page, and the
// browser, without any script of ours, moves on by itself into the editor
// A launch that waits for the platform shows the waiting page. Its script
// checks the line in place: the page is never reloaded while the person
// waits (so focus stays where the person put it, and a screen reader is
// not sent back to the top), the estimate is a polite live region, and the
// editor opens by itself when the turn comes.
func TestBrowserWaitingPageLandsInTheEditor(t *testing.T) {
	ctx := newTab(t)
	ta := startTestApp(t, testOptions{realPacing: true}) // the pause is waited for
	ta.addAccount(t, "ada@example.com", false)
	signIn(t, ctx, ta.srv.URL, "ada@example.com")
	ta.budget.Pause(12 * time.Second) // as a 429 would: a line forms (checked at about 3 s and 8 s)

	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("open-editor")), chromedp.WaitVisible(chromedp.ID("launch-waiting"))))
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("launch-waiting")))
	require.NoError(t, err)
	assert.Contains(t, text, "Opening the video editor")
	assert.Contains(t, text, "Many people are starting at the same time")
	live, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('wait-status').getAttribute('aria-live')`))
	require.NoError(t, err)
	assert.Equal(t, "polite", live)
	screenshot(t, ctx, "waiting")
	// The person puts focus on the "continue" link; a mark on the page
	// tells whether the page was loaded again.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`window.sameLoad = true; document.getElementById('wait-continue').focus(), true`))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		checks, err := chromedp.Run(ctx, chromedp.Evaluate[int](`performance.getEntriesByType('resource').filter(e => e.name.includes('/status')).length`))
		return err == nil && checks >= 2
	}, 20*time.Second, 100*time.Millisecond, "the script checks the line")
	state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(window.sameLoad ? 'same page' : 'reloaded') + ', focus on ' + document.activeElement.id`))
	require.NoError(t, err)
	assert.Equal(t, "same page, focus on wait-continue", state, "checked in place: no reload, focus kept")

	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("who"))), "the page moved on by itself")
	loc, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	assert.Equal(t, ta.sim.URL+"/editor", loc)
	assert.Len(t, ta.sim.Users("ada@example.com"), 1)
}
