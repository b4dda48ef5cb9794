package e2e

import (
	"bytes"
	"cmp"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"
	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func adminSession(t *testing.T) (*testApp, *browser, store.Account) {
	ta := startTestApp(t, testOptions{})
	root := ta.addAccount(t, "root@example.com", true)
	b := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, b.login("root@example.com", testPassword).status)
	return ta, b, root
}

func (b *browser) adminPost(path string, form url.Values) page {
	if form == nil {
		form = url.Values{}
	}
	form.Set("_csrf", b.csrf("/admin/accounts"))
	return b.post(path, form)
}

func TestAdminRequiresAdmin(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	ta.addAccount(t, "user@example.com", false)
	b := ta.browser(t)
	for _, path := range []string{"/admin/", "/admin/connection", "/admin/accounts", "/admin/platform-users", "/admin/audit"} {
		p := b.get(path)
		assert.Equal(t, http.StatusSeeOther, p.status, "signed out: %s", path)
		assert.Equal(t, "/login", p.header.Get("Location"))
	}
	require.Equal(t, http.StatusSeeOther, b.login("user@example.com", testPassword).status)
	for _, path := range []string{"/admin/", "/admin/connection", "/admin/accounts", "/admin/platform-users", "/admin/audit"} {
		p := b.get(path)
		assert.Equal(t, http.StatusForbidden, p.status, path)
		assert.Contains(t, p.body, `data-class="forbidden"`)
	}
	p := b.post("/admin/accounts/1/disable", url.Values{"_csrf": {b.csrf("/")}})
	assert.Equal(t, http.StatusForbidden, p.status, "actions too")
	a, _ := ta.store.AccountByEmail(t.Context(), "user@example.com")
	assert.False(t, a.Disabled)
	assert.NotContains(t, b.get("/").body, `href="/admin/"`, "no admin link for users")
}

func TestAdminConnectionPage(t *testing.T) {
	ta, b, _ := adminSession(t)
	assert.Contains(t, b.get("/").body, `href="/admin/"`)
	p := b.get("/admin/")
	assert.Equal(t, "/admin/connection", p.header.Get("Location"))
	p = b.get("/admin/connection")
	require.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, p.body, ta.sim.URL)
	assert.Contains(t, p.body, ta.sim.Credentials()[0].Key)
	assert.NotContains(t, p.body, ta.sim.Credentials()[0].Secret, "never the secret")

	p = b.post("/admin/connection/check", url.Values{"_csrf": {b.csrf("/admin/connection")}})
	require.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, p.body, `data-verdict="ok"`)
	assert.Contains(t, p.body, "in step with this server")

	ta.sim.SetClockOffset(600e9)
	p = b.post("/admin/connection/check", url.Values{"_csrf": {b.csrf("/admin/connection")}})
	assert.Contains(t, p.body, `data-verdict="clock_skew"`)
	assert.Contains(t, p.body, "10m0s ahead of this server")
	ta.sim.SetClockOffset(0)

	ta.sim.InjectFault("list_users", platformFault(403))
	p = b.post("/admin/connection/check", url.Values{"_csrf": {b.csrf("/admin/connection")}})
	assert.Contains(t, p.body, `data-verdict="forbidden"`)
	assert.Contains(t, p.body, "make the user that owns this API key an admin of the Instance")
	ta.sim.ClearFaults()
	ta.sim.InjectFault("list_users", platformFault(503))
	p = b.post("/admin/connection/check", url.Values{"_csrf": {b.csrf("/admin/connection")}})
	assert.Contains(t, p.body, `data-verdict="server_error"`)

	evs, _, err := ta.store.ListEvents(t.Context(), store.AuditFilter{Kind: store.KindAdmin})
	require.NoError(t, err)
	require.Len(t, evs, 4)
	assert.Equal(t, "connection check: server_error", evs[0].Detail)
	assert.Equal(t, "root@example.com", evs[0].Email)
}

func TestAdminAccountActions(t *testing.T) {
	ta, b, root := adminSession(t)
	ctx := t.Context()

	// create: bad input changes nothing
	p := b.adminPost("/admin/accounts", url.Values{"email": {"bad"}, "first_name": {"A"}, "last_name": {"B"}, "password": {"long enough"}})
	assert.Equal(t, http.StatusBadRequest, p.status)
	assert.Contains(t, p.body, "is not an e-mail address")
	assert.Contains(t, p.body, `value="bad"`, "the form keeps what was typed")
	p = b.adminPost("/admin/accounts", url.Values{"email": {"bob@example.com"}, "first_name": {"Bob"}, "last_name": {"B"}, "password": {"short"}})
	assert.Equal(t, http.StatusBadRequest, p.status)
	n, _ := ta.store.CountAccounts(ctx)
	assert.Equal(t, 1, n)

	p = b.adminPost("/admin/accounts", url.Values{"email": {"bob@example.com"}, "first_name": {"Bob"}, "last_name": {"Builder"}, "password": {"bobs password"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	assert.Contains(t, p.body, "Added bob@example.com.")
	p = b.adminPost("/admin/accounts", url.Values{"email": {"BOB@example.com"}, "first_name": {"Bob"}, "last_name": {"B"}, "password": {"bobs password"}})
	assert.Equal(t, http.StatusConflict, p.status)
	bob, err := ta.store.AccountByEmail(ctx, "bob@example.com")
	require.NoError(t, err)
	id := strconv.FormatInt(bob.ID, 10)

	// Bob signs in and launches; then the admin disables him.
	bobB := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, bobB.login("bob@example.com", "bobs password").status)
	require.Equal(t, http.StatusSeeOther, bobB.launch().status)
	p = b.get("/admin/accounts?q=bob")
	assert.Contains(t, p.body, `user <code class="id">9007199254740993</code>`, "link shown")

	p = b.adminPost("/admin/accounts/"+id+"/disable", nil)
	require.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, p.body, "Disabled bob@example.com")
	assert.Equal(t, http.StatusSeeOther, bobB.get("/").status, "his session stopped working")
	assert.Equal(t, http.StatusUnauthorized, bobB.login("bob@example.com", "bobs password").status, "and he cannot sign in")
	require.Equal(t, http.StatusOK, b.adminPost("/admin/accounts/"+id+"/enable", nil).status)
	require.Equal(t, http.StatusSeeOther, bobB.login("bob@example.com", "bobs password").status)

	// password reset ends sessions and the new password works
	p = b.adminPost("/admin/accounts/"+id+"/password", url.Values{"password": {"x"}})
	assert.Equal(t, http.StatusBadRequest, p.status)
	p = b.adminPost("/admin/accounts/"+id+"/password", url.Values{"password": {"a brand new one"}})
	require.Equal(t, http.StatusOK, p.status)
	assert.NotContains(t, p.body, "a brand new one")
	assert.Equal(t, http.StatusSeeOther, bobB.get("/").status)
	assert.Equal(t, http.StatusSeeOther, bobB.login("bob@example.com", "a brand new one").status)

	// unlink forces a fresh lookup on the next launch
	require.Equal(t, http.StatusOK, b.adminPost("/admin/accounts/"+id+"/unlink", nil).status)
	ta.calls()
	require.Equal(t, http.StatusSeeOther, bobB.launch().status)
	assert.Equal(t, map[string]int{"list_users": 1, "issue_token": 1}, ta.calls())

	// the last admin cannot be demoted or disabled
	rootID := strconv.FormatInt(root.ID, 10)
	p = b.adminPost("/admin/accounts/"+rootID+"/revoke-admin", nil)
	assert.Equal(t, http.StatusConflict, p.status)
	assert.Contains(t, p.body, "last active admin")
	assert.Equal(t, http.StatusConflict, b.adminPost("/admin/accounts/"+rootID+"/disable", nil).status)
	require.Equal(t, http.StatusOK, b.adminPost("/admin/accounts/"+id+"/grant-admin", nil).status)
	require.Equal(t, http.StatusOK, b.adminPost("/admin/accounts/"+rootID+"/revoke-admin", nil).status)
	assert.Equal(t, http.StatusForbidden, b.get("/admin/accounts").status, "root is no admin now")

	assert.Equal(t, http.StatusNotFound, bobB.adminPostAs(t, "/admin/accounts/999/disable").status)
	assert.Equal(t, http.StatusNotFound, bobB.adminPostAs(t, "/admin/accounts/"+id+"/explode").status)

	evs, _, _ := ta.store.ListEvents(ctx, store.AuditFilter{Kind: store.KindAdmin})
	var details []string
	for _, e := range evs {
		details = append(details, e.Detail)
	}
	assert.Contains(t, details, "disable: bob@example.com")
	assert.Contains(t, details, "password: bob@example.com")
	assert.Contains(t, details, "unlink: bob@example.com")
	assert.Contains(t, details, "created account (admin=false): bob@example.com")
}

func (b *browser) adminPostAs(t *testing.T, path string) page {
	return b.post(path, url.Values{"_csrf": {b.csrf("/admin/accounts")}})
}

func TestAdminCSVImport(t *testing.T) {
	ta, b, _ := adminSession(t)
	ctx := t.Context()
	bad := "email,firstName,lastName\nann@example.com,Ann,A\nnot-an-email,Bad,Row\nann@EXAMPLE.com,Ann,Again\nroot@example.com,R,A\nonly,two\n"
	p := b.adminPost("/admin/accounts/import", url.Values{"csv": {bad}})
	assert.Equal(t, http.StatusBadRequest, p.status)
	for _, msg := range []string{"row 3: &#34;not-an-email&#34; is not an e-mail address", "row 4: ann@EXAMPLE.com repeats row 2", "row 6: want 3 fields"} {
		assert.Contains(t, p.body, msg)
	}
	n, _ := ta.store.CountAccounts(ctx)
	assert.Equal(t, 1, n, "one bad row: nothing written")

	p = b.adminPost("/admin/accounts/import", url.Values{"csv": {"email,firstName,lastName\nroot@example.com,R,A\n"}})
	assert.Equal(t, http.StatusBadRequest, p.status)
	assert.Contains(t, p.body, "root@example.com has an account already")

	// A file upload of good rows imports all of them.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	require.NoError(t, mw.WriteField("_csrf", b.csrf("/admin/accounts")))
	fw, _ := mw.CreateFormFile("file", "accounts.csv")
	_, _ = fw.Write([]byte("ann@example.com,Ann,A\ncid@example.com, Cid , C\n"))
	require.NoError(t, mw.Close())
	req, _ := http.NewRequest("POST", b.base+"/admin/accounts/import", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	p = b.do(req)
	require.Equal(t, http.StatusOK, p.status, p.body)
	assert.Contains(t, p.body, "Imported 2 accounts")
	cid, err := ta.store.AccountByEmail(ctx, "cid@example.com")
	require.NoError(t, err)
	assert.Equal(t, "Cid", cid.FirstName)
	assert.Contains(t, p.body, "no password yet")

	// Imported accounts cannot sign in until a password is set.
	c := ta.browser(t)
	assert.Equal(t, http.StatusUnauthorized, c.login("cid@example.com", "anything at all").status)

	p = b.adminPost("/admin/accounts/import", url.Values{"csv": {"  \n"}})
	assert.Equal(t, http.StatusBadRequest, p.status)
	assert.Contains(t, p.body, "no rows")
}

func TestAdminPlatformUsersAndAudit(t *testing.T) {
	ta, b, _ := adminSession(t)
	for i := range 25 {
		_, err := ta.sim.AddUser("P", strconv.Itoa(i), "p"+strconv.Itoa(i)+"@example.com")
		require.NoError(t, err)
	}
	ta.addAccount(t, "p3@example.com", false)
	u := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, u.login("p3@example.com", testPassword).status)
	require.Equal(t, http.StatusSeeOther, u.launch().status)
	require.Equal(t, http.StatusUnauthorized, ta.browser(t).login("p3@example.com", "wrong password").status)

	ta.calls()
	p := b.get("/admin/platform-users")
	require.Equal(t, http.StatusOK, p.status)
	assert.Equal(t, map[string]int{"list_users": 1}, ta.calls(), "one platform call per page view")
	assert.Equal(t, 20, strings.Count(p.body, "<tr>")-1)
	assert.Contains(t, p.body, "Page 1 of 2 (25 in all)")
	assert.Regexp(t, regexp.MustCompile(`linked</span> p3@example.com`), p.body)
	p = b.get("/admin/platform-users?page=2")
	assert.Equal(t, 5, strings.Count(p.body, "<tr>")-1)
	p = b.get("/admin/platform-users?q=p1")
	assert.Contains(t, p.body, "p10@example.com")
	assert.NotContains(t, p.body, "p2@example.com")

	ta.sim.InjectFault("list_users", platformFault(503))
	p = b.get("/admin/platform-users")
	assert.Equal(t, http.StatusBadGateway, p.status)
	assert.Contains(t, p.body, "did not list its users")
	ta.sim.ClearFaults()

	p = b.get("/admin/audit")
	require.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, p.body, "Kept 90 days")
	p = b.get("/admin/audit?account=p3@example.com&kind=login")
	assert.Equal(t, 2, strings.Count(p.body, `<td data-label="Kind">login</td>`))
	assert.Contains(t, p.body, "wrong password")
	assert.NotContains(t, p.body, testPassword, "no passwords in the audit log")
	p = b.get("/admin/audit?account=p3@example.com&kind=launch&outcome=ok")
	assert.Equal(t, 1, strings.Count(p.body, `<td data-label="Kind">launch</td>`))
	assert.Contains(t, p.body, `<td data-label="Calls">2</td>`, "platform calls of an existing, unlinked user's launch")
	assert.Contains(t, p.body, "found")
	p = b.get("/admin/audit?account=nobody@example.com")
	assert.Contains(t, p.body, "No account has the email nobody@example.com.")
}

func TestBrowserAdminChecksConnectionAndDisablesAccount(t *testing.T) {
	ctx := newTab(t)
	ta := startTestApp(t, testOptions{})
	ta.addNamedAccount(t, "root@example.com", "Rosa", "Root", true)
	ta.addNamedAccount(t, "bob@example.com", "Bob", "Builder", false)
	signIn(t, ctx, ta.srv.URL, "root@example.com")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`a[href="/admin/"]`)),
		chromedp.WaitVisible(chromedp.ID("run-check")),
		chromedp.Click(chromedp.ID("run-check")),
		chromedp.WaitVisible(chromedp.ID("check-result")),
	))
	summary, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("check-summary")))
	require.NoError(t, err)
	assert.Contains(t, summary, "OK: the platform accepted the signed call")
	screenshot(t, ctx, "6-admin-connection")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`a[href="/admin/accounts"]`)),
		chromedp.WaitVisible(chromedp.ID("accounts")),
		chromedp.Click(chromedp.CSS(`tr[data-email="bob@example.com"] a[data-action="manage"]`)),
		chromedp.WaitVisible(chromedp.ID("account")),
		chromedp.Click(chromedp.CSS(`button[data-action="disable"]`)),
		chromedp.WaitVisible(chromedp.ID("notice")),
	))
	notice, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("notice")))
	require.NoError(t, err)
	assert.Contains(t, notice, "Disabled bob@example.com")
	screenshot(t, ctx, "7-admin-accounts")
	bob, err := ta.store.AccountByEmail(t.Context(), "bob@example.com")
	require.NoError(t, err)
	assert.True(t, bob.Disabled)
}

// server.time_zone sets the zone of every time a page shows, with its
// abbreviation: the start page's last launch and the console's audit
// log; the default is UTC; a name that is no IANA zone is refused at
// start, naming the key.
func TestTimesInTheDistrictsZone(t *testing.T) {
	for zone, abbrev := range map[string]string{"Europe/Berlin": "CE", "": "UTC"} {
		t.Run(cmp.Or(zone, "default"), func(t *testing.T) {
			yaml := ""
			if zone != "" {
				yaml = "server:\n  time_zone: " + zone + "\n"
			}
			ta := startTestApp(t, testOptions{yaml: yaml})
			ta.addAccount(t, "root@example.com", true)
			b := ta.browser(t)
			require.Equal(t, http.StatusSeeOther, b.login("root@example.com", testPassword).status)
			require.Equal(t, http.StatusSeeOther, b.launch().status)
			home := b.get("/")
			doc, err := goquery.NewDocumentFromReader(strings.NewReader(home.body))
			require.NoError(t, err)
			last := doc.Find("#last-launch").Text()
			require.NotEmpty(t, last, home.body)
			assert.Contains(t, last, abbrev, "the start page's time in the zone")
			audit := b.get("/admin/audit")
			require.Equal(t, http.StatusOK, audit.status)
			doc, err = goquery.NewDocumentFromReader(strings.NewReader(audit.body))
			require.NoError(t, err)
			when := doc.Find("td.when").First().Text()
			assert.Contains(t, when, abbrev, "the console's times too: %q", when)
		})
	}
	cfg, _ := writeConfig(t, "server:\n  time_zone: Mars/Olympus\n")
	code, _, stderr := runCLI(t, "", nil, "check", "--config", cfg)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `server.time_zone: "Mars/Olympus" is not an IANA time zone`)
}
