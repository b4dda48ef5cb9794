package handlers

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/handlers/console"
	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var adminPages = []string{"/admin/", "/admin/connection", "/admin/accounts", "/admin/platform-users", "/admin/audit", "/admin/bans"}

// adminFixture signs an admin in; bob is a plain account.
func adminFixture(t *testing.T) (*fixture, *client, store.Account, store.Account) {
	f := setup(t)
	root := f.account("root@example.com", true)
	bob := f.account("bob@example.com", false)
	c := f.client()
	c.signIn("root@example.com")
	return f, c, root, bob
}

func TestAdminAccessRules(t *testing.T) {
	f := setup(t)
	f.account("root@example.com", true)
	bob := f.account("bob@example.com", false)
	anon := f.client()
	for _, p := range adminPages {
		r := anon.get(p)
		assert.Equal(t, http.StatusSeeOther, r.status, "signed out: %s", p)
		assert.Equal(t, "/login", r.header.Get("Location"))
	}
	c := f.client()
	c.signIn("bob@example.com")
	for _, p := range adminPages {
		r := c.get(p)
		assert.Equal(t, http.StatusForbidden, r.status, p)
		assert.Equal(t, "forbidden", r.class())
	}
	tok := c.csrf("/")
	for _, action := range []string{"disable", "grant-admin", "password", "unlink"} {
		r := c.post(fmt.Sprintf("/admin/accounts/%d/%s", bob.ID, action), url.Values{"_csrf": {tok}, "password": {"new password"}})
		assert.Equal(t, http.StatusForbidden, r.status, action)
	}
	got, _ := f.accts.AccountByID(t.Context(), bob.ID)
	assert.False(t, got.Admin || got.Disabled, "nothing changed")
	assert.Equal(t, "hash:"+testPassword, got.PasswordHash)
	assert.Empty(t, f.accts.eventsOf(store.KindAdmin))
}

func TestAdminConnection(t *testing.T) {
	f, c, root, _ := adminFixture(t)
	r := c.get("/admin/")
	assert.Equal(t, "/admin/connection", r.header.Get("Location"))
	r = c.get("/admin/connection")
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "https://platform.example", r.text("#base-url"))
	assert.Equal(t, "key-1", r.text("#key-id"))
	assert.Equal(t, "hmac", r.text("#auth-method"))
	assert.Empty(t, r.doc.Find("#check-result").Nodes, "no check until asked")
	assert.Equal(t, "page", r.doc.Find(`a[href="/admin/connection"]`).AttrOr("aria-current", ""))

	f.platform.set(func(p *fakePlatform) {
		p.report = console.CheckReport{Verdict: "forbidden", Summary: "Forbidden (403): not an admin.", Advice: []string{"Make the user an admin."},
			URL: "https://platform.example/api/5/public/users?page=0&size=1", Status: 403, Latency: 12 * time.Millisecond,
			Clock: "in step with this server's", Err: apiErr("list_users", 403)}
	})
	r = c.submit("/admin/connection", "/admin/connection/check", nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "forbidden", r.doc.Find("#check-result").AttrOr("data-verdict", ""))
	assert.Equal(t, "Forbidden (403): not an admin.", r.text("#check-summary"))
	assert.Equal(t, "Make the user an admin.", r.text("#check-advice li"))
	assert.Equal(t, "in step with this server's", r.text("#check-clock"))
	assert.Contains(t, r.body, "403 in 12ms")
	assert.Equal(t, 1, f.platform.checks)
	evs := f.accts.eventsOf(store.KindAdmin)
	require.Len(t, evs, 1)
	assert.Equal(t, store.Event{ID: evs[0].ID, At: f.clock.Now(), Kind: store.KindAdmin, AccountID: root.ID, Email: root.Email, Outcome: "ok",
		Detail: "connection check: forbidden", RequestID: r.header.Get("X-Request-Id")}, evs[0])

	f.platform.set(func(p *fakePlatform) {
		p.conn = console.Connection{BaseURL: "http://127.0.0.1:1", Embedded: true, Method: "simple", Scheme: "SVCSIMPLE"}
	})
	r = c.get("/admin/connection")
	assert.Contains(t, r.text("#base-url"), "(built-in emulator)")
	assert.Equal(t, "(none: simple method)", r.text("#key-id"))
}

func TestAdminAccountsList(t *testing.T) {
	f, c, _, bob := adminFixture(t)
	for i := range 30 {
		f.account(fmt.Sprintf("user%02d@example.com", i), false)
	}
	f.accts.link(bob.ID, "77", time.Time{})
	r := c.get("/admin/accounts")
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, console.AccountsPerPage, r.doc.Find("#accounts tbody tr").Length())
	assert.Contains(t, r.text(".pager"), "Page 1 of 2 (32 in all)")
	assert.Contains(t, r.doc.Find(`tr[data-email="bob@example.com"]`).Text(), "77")
	r = c.get("/admin/accounts?page=2")
	assert.Equal(t, 7, r.doc.Find("#accounts tbody tr").Length())
	r = c.get("/admin/accounts?q=USER1")
	assert.Equal(t, 10, r.doc.Find("#accounts tbody tr").Length(), "search is case-insensitive")
	assert.Equal(t, "USER1", r.doc.Find("#q").AttrOr("value", ""), "the search box keeps the query")
	assertFormsCarryCSRF(t, r)
}

// Addresses that look like another account's, or mix alphabets, are
// marked in the list; ordinary ones (ASCII, or wholly in one alphabet)
// are not.
func TestAdminAccountsListMarksLookAlikes(t *testing.T) {
	f, c, _, _ := adminFixture(t)
	for _, e := range []string{"demo@example.com", "d\u0435mo@example.com", "k\u0130m@example.com", "p\u0430ypal@\u0435xample.org", "\u043e\u043b\u0435\u0433@example.com", "zo\u00eb@example.com"} {
		f.account(e, false)
	}
	r := c.get("/admin/accounts")
	require.Equal(t, http.StatusOK, r.status)
	mark := func(email string) string {
		return strings.TrimSpace(r.doc.Find(`tr[data-email="` + email + `"] [data-lookalike]`).Text())
	}
	assert.Equal(t, "looks like demo@example.com", mark("d\u0435mo@example.com"))
	assert.Equal(t, "mixes alphabets", mark("p\u0430ypal@\u0435xample.org"))
	for _, plain := range []string{"demo@example.com", "\u043e\u043b\u0435\u0433@example.com", "zo\u00eb@example.com", "k\u0130m@example.com"} {
		assert.Empty(t, mark(plain), plain)
	}
}

// assertFormsCarryCSRF: every form that posts carries the page's token.
func assertFormsCarryCSRF(t *testing.T, r *response) {
	t.Helper()
	forms := r.doc.Find(`form[method="post"]`)
	require.Positive(t, forms.Length())
	forms.Each(func(i int, s *goquery.Selection) {
		assert.NotEmpty(t, s.Find(`input[name="_csrf"]`).AttrOr("value", ""), "form %d (%s) has no _csrf", i, s.AttrOr("action", ""))
	})
}

func TestAdminCreateAccount(t *testing.T) {
	tests := []struct {
		name    string
		form    url.Values
		status  int
		message string // the notice or the error shown
		created bool
	}{
		{"ok", url.Values{"email": {"cid@example.com"}, "first_name": {"Cid"}, "last_name": {"C"}, "password": {"long enough"}}, 200, "Added cid@example.com.", true},
		{"admin", url.Values{"email": {"dee@example.com"}, "first_name": {"Dee"}, "last_name": {"D"}, "password": {"long enough"}, "admin": {"on"}}, 200, "Added dee@example.com.", true},
		{"bad email", url.Values{"email": {"bad"}, "first_name": {"A"}, "last_name": {"B"}, "password": {"long enough"}}, 400, `"bad" is not an e-mail address such as ada@example.com`, false},
		{"no name", url.Values{"email": {"cid@example.com"}, "last_name": {"B"}, "password": {"long enough"}}, 400, "first and last name are required", false},
		{"invalid UTF-8", url.Values{"email": {"cid@example.com"}, "first_name": {"C\xffd"}, "last_name": {"B"}, "password": {"long enough"}}, 400, "the first name is not valid UTF-8 text", false},
		{"short password", url.Values{"email": {"cid@example.com"}, "first_name": {"A"}, "last_name": {"B"}, "password": {"short"}}, 400, "a password needs at least 8 characters", false},
		{"spaces password", url.Values{"email": {"cid@example.com"}, "first_name": {"A"}, "last_name": {"B"}, "password": {"          "}}, 400, "a password cannot be only spaces", false},
		{"common password", url.Values{"email": {"cid@example.com"}, "first_name": {"A"}, "last_name": {"B"}, "password": {"Password1"}}, 400, "this password is one of the most common ones, which are guessed first; choose another (a few unrelated words make a good one)", false},
		{"taken", url.Values{"email": {"BOB@example.com"}, "first_name": {"B"}, "last_name": {"B"}, "password": {"long enough"}}, 409, "An account with email BOB@example.com exists already.", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c, _, _ := adminFixture(t)
			r := c.submit("/admin/accounts", "/admin/accounts", tt.form)
			assert.Equal(t, tt.status, r.status)
			_, total, _ := f.accts.ListAccounts(t.Context(), store.AccountFilter{})
			if !tt.created {
				assert.Equal(t, tt.message, r.text("#admin-error"))
				assert.Equal(t, 2, total, "bad input changes nothing")
				assert.Equal(t, tt.form.Get("email"), r.doc.Find(`input[name="email"]`).AttrOr("value", ""), "the form keeps what was typed")
				assert.Empty(t, f.accts.eventsOf(store.KindAdmin))
				return
			}
			assert.Equal(t, tt.message, r.text("#notice"))
			assert.Equal(t, 3, total)
			a, err := f.accts.AccountByEmail(t.Context(), tt.form.Get("email"))
			require.NoError(t, err)
			assert.Equal(t, "hash:long enough", a.PasswordHash, "stored hashed")
			assert.Equal(t, tt.form.Get("admin") != "", a.Admin)
			assert.NotContains(t, r.body, "long enough", "the password is not echoed")
			evs := f.accts.eventsOf(store.KindAdmin)
			require.Len(t, evs, 1)
			assert.Equal(t, fmt.Sprintf("created account (admin=%v): %s", a.Admin, a.Email), evs[0].Detail)
		})
	}
}

func TestAdminAccountActions(t *testing.T) {
	tests := []struct {
		action string
		form   url.Values
		status int
		notice string
		check  func(t *testing.T, bob store.Account, before store.Account, f *fixture)
	}{
		{"disable", nil, 200, "Disabled bob@example.com", func(t *testing.T, bob, before store.Account, _ *fixture) {
			assert.True(t, bob.Disabled)
			assert.Greater(t, bob.SessionEpoch, before.SessionEpoch, "sessions end")
		}},
		{"grant-admin", nil, 200, "bob@example.com is now a partner admin.", func(t *testing.T, bob, _ store.Account, _ *fixture) { assert.True(t, bob.Admin) }},
		{"unlink", nil, 200, "Unlinked bob@example.com", func(t *testing.T, bob, _ store.Account, f *fixture) {
			_, err := f.accts.LinkFor(t.Context(), bob.ID)
			assert.ErrorIs(t, err, store.ErrNotFound)
		}},
		{"password", url.Values{"password": {"a brand new one"}}, 200, "Set a new password for bob@example.com", func(t *testing.T, bob, before store.Account, _ *fixture) {
			assert.Equal(t, "hash:a brand new one", bob.PasswordHash)
			assert.Greater(t, bob.SessionEpoch, before.SessionEpoch, "sessions end")
		}},
		{"password", url.Values{"password": {"short"}}, 400, "", func(t *testing.T, bob, before store.Account, _ *fixture) {
			assert.Equal(t, before, bob, "a refused password changes nothing")
		}},
		{"password", url.Values{"password": {"         "}}, 400, "", func(t *testing.T, bob, before store.Account, _ *fixture) {
			assert.Equal(t, before, bob, "only spaces")
		}},
		{"password", url.Values{"password": {"qwertyuiop"}}, 400, "", func(t *testing.T, bob, before store.Account, _ *fixture) {
			assert.Equal(t, before, bob, "a common password")
		}},
		{"explode", nil, 404, "", func(t *testing.T, bob, before store.Account, _ *fixture) { assert.Equal(t, before, bob) }},
	}
	for _, tt := range tests {
		t.Run(tt.action+" "+tt.form.Encode(), func(t *testing.T) {
			f, c, root, bob := adminFixture(t)
			f.accts.link(bob.ID, "77", time.Time{})
			r := c.submit("/admin/accounts", fmt.Sprintf("/admin/accounts/%d/%s", bob.ID, tt.action), tt.form)
			assert.Equal(t, tt.status, r.status)
			after, err := f.accts.AccountByID(t.Context(), bob.ID)
			require.NoError(t, err)
			tt.check(t, after, bob, f)
			evs := f.accts.eventsOf(store.KindAdmin)
			if tt.status != 200 {
				assert.Empty(t, evs)
				return
			}
			assert.Contains(t, r.text("#notice"), tt.notice)
			require.Len(t, evs, 1)
			assert.Equal(t, tt.action+": bob@example.com", evs[0].Detail)
			assert.Equal(t, root.ID, evs[0].AccountID, "the acting admin")
			assert.NotContains(t, r.body, "a brand new one")
		})
	}
}

// TestAdminIdPManagedAccount: an account the identity provider manages
// (SCIM) says so on its page, with its last change, offers no action on
// what the IdP owns, and refuses those actions when posted anyway; ending
// its sessions and a set-password link stay.
func TestAdminIdPManagedAccount(t *testing.T) {
	f, c, _, _ := adminFixture(t)
	kim, err := f.accts.CreateAccount(t.Context(), store.NewAccount{Email: "kim@example.com", FirstName: "Kim", LastName: "Lee",
		PasswordHash: passhash.NoPassword, ManagedBy: store.ManagedBySCIM, ExternalID: "entra-9"})
	require.NoError(t, err)
	page := fmt.Sprintf("/admin/accounts/%d", kim.ID)
	r := c.get(page)
	require.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, r.text("#account-status"), "managed by your identity provider")
	assert.Contains(t, r.text("#account-managed"), "your identity provider (SCIM), last change ")
	for _, action := range []string{"disable", "grant-admin"} {
		assert.Empty(t, r.doc.Find(fmt.Sprintf(`form[action="%s/%s"]`, page, action)).Nodes, "no %s button", action)
	}
	assert.NotEmpty(t, r.doc.Find(fmt.Sprintf(`form[action="%s/end-sessions"]`, page)).Nodes)
	for _, action := range []string{"disable", "enable", "grant-admin", "revoke-admin"} {
		r := c.submit(page, page+"/"+action, nil)
		assert.Equal(t, http.StatusConflict, r.status, action)
		assert.Contains(t, r.text("#admin-error"), "your identity provider manages kim@example.com", action)
	}
	after, err := f.accts.AccountByID(t.Context(), kim.ID)
	require.NoError(t, err)
	assert.False(t, after.Disabled || after.Admin, "nothing changed")
	assert.Empty(t, f.accts.eventsOf(store.KindAdmin))
	r = c.submit(page, page+"/end-sessions", nil)
	assert.Equal(t, http.StatusOK, r.status, "its sessions can still be ended")
}

func TestAdminAccountActionsRefused(t *testing.T) {
	_, c, root, bob := adminFixture(t)
	for _, action := range []string{"revoke-admin", "disable"} {
		r := c.submit("/admin/accounts", fmt.Sprintf("/admin/accounts/%d/%s", root.ID, action), nil)
		assert.Equal(t, http.StatusConflict, r.status, action)
		assert.Contains(t, r.text("#admin-error"), "last active admin")
	}
	for _, path := range []string{"/admin/accounts/999/disable", "/admin/accounts/abc/disable"} {
		r := c.submit("/admin/accounts", path, nil)
		assert.Equal(t, http.StatusNotFound, r.status, path)
		assert.Equal(t, "not-found", r.class())
	}
	require.Equal(t, http.StatusOK, c.submit("/admin/accounts", fmt.Sprintf("/admin/accounts/%d/grant-admin", bob.ID), nil).status)
	require.Equal(t, http.StatusOK, c.submit("/admin/accounts", fmt.Sprintf("/admin/accounts/%d/revoke-admin", root.ID), nil).status)
	assert.Equal(t, http.StatusForbidden, c.get("/admin/accounts").status, "root is no admin now, at once")
}

func TestAdminImportCSV(t *testing.T) {
	f, c, _, _ := adminFixture(t)
	count := func() int { _, n, _ := f.accts.ListAccounts(t.Context(), store.AccountFilter{}); return n }

	bad := "email,firstName,lastName\nann@example.com,Ann,A\nnot-an-email,Bad,Row\nann@EXAMPLE.com,Ann,Again\nonly,two\n"
	r := c.submit("/admin/accounts", "/admin/accounts/import", url.Values{"csv": {bad}})
	assert.Equal(t, http.StatusBadRequest, r.status)
	var problems []string
	r.doc.Find("#import-errors li").Each(func(_ int, s *goquery.Selection) { problems = append(problems, s.Text()) })
	assert.Equal(t, []string{`row 3: "not-an-email" is not an e-mail address such as ada@example.com`, "row 4: ann@EXAMPLE.com repeats row 2",
		"row 5: want 3 fields (email,firstName,lastName), got 2"}, problems)
	assert.Equal(t, bad, r.doc.Find(`textarea[name="csv"]`).Text(), "the pasted text is kept")
	assert.Equal(t, 2, count(), "one bad row: nothing written")

	r = c.submit("/admin/accounts", "/admin/accounts/import", url.Values{"csv": {"bob@example.com,B,B\n"}})
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, r.text("#import-errors"), "bob@example.com has an account already")
	r = c.submit("/admin/accounts", "/admin/accounts/import", url.Values{"csv": {" \n"}})
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, r.text("#import-errors"), "no rows")
	assert.Equal(t, 2, count())

	// An uploaded file wins over the text field.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	require.NoError(t, mw.WriteField("_csrf", c.csrf("/admin/accounts")))
	require.NoError(t, mw.WriteField("csv", "ignored@example.com,I,I"))
	fw, err := mw.CreateFormFile("file", "accounts.csv")
	require.NoError(t, err)
	_, _ = fw.Write([]byte("ann@example.com,Ann,A\ncid@example.com, Cid , C\n"))
	require.NoError(t, mw.Close())
	req, _ := http.NewRequest("POST", c.base+"/admin/accounts/import", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	r = c.do(req)
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.Contains(t, r.text("#notice"), "Imported 2 accounts")
	assert.Equal(t, 4, count())
	cid, err := f.accts.AccountByEmail(t.Context(), "cid@example.com")
	require.NoError(t, err)
	assert.Equal(t, "Cid", cid.FirstName, "trimmed")
	assert.Equal(t, passhash.NoPassword, cid.PasswordHash, "imported accounts have no password")
	evs := f.accts.eventsOf(store.KindAdmin)
	require.Len(t, evs, 1)
	assert.Equal(t, "imported 2 accounts from CSV", evs[0].Detail)
}

func TestAdminPlatformUsers(t *testing.T) {
	f, c, _, bob := adminFixture(t)
	f.accts.link(bob.ID, "u-2", time.Time{})
	f.platform.set(func(p *fakePlatform) {
		p.users = console.UserPage{Total: 45, Users: []console.PlatformUser{{ID: "u-1", FirstName: "Pat", LastName: "One", Email: "pat@example.com"},
			{ID: "u-2", FirstName: "Bob", LastName: "B", Email: "bob@example.com"}}}
	})
	r := c.get("/admin/platform-users?q=example&page=2")
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, []string{fmt.Sprintf("example 2 %d", console.PlatformUsersPerPage)}, f.platform.listed, "one call, the 1-based page")
	assert.Equal(t, 2, r.doc.Find("tbody tr").Length())
	assert.Contains(t, r.doc.Find("tbody tr").Eq(0).Text(), "not linked")
	assert.NotContains(t, r.doc.Find("tbody tr").Eq(1).Text(), "not linked")
	assert.Contains(t, r.doc.Find("tbody tr").Eq(1).Text(), "linked")
	assert.Contains(t, r.text(".pager"), "Page 2 of 3 (45 in all)")
	prev := r.doc.Find(`a[rel="prev"]`).AttrOr("href", "")
	assert.Equal(t, "/admin/platform-users?page=1&q=example", prev, "the pager keeps the query")

	assert.Zero(t, r.doc.Find(".address-differs").Length(), "a link between one address is not marked")

	// A link to a platform user with another address is marked.
	f.platform.set(func(p *fakePlatform) {
		p.users = console.UserPage{Total: 1, Users: []console.PlatformUser{{ID: "u-2", FirstName: "Grace", LastName: "H", Email: "grace@example.com"}}}
	})
	r = c.get("/admin/platform-users")
	require.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, r.text("tbody tr"), "other address")
	assert.Contains(t, r.text("tbody tr .address-differs"), "Unlink it")

	f.platform.set(func(p *fakePlatform) { p.listErr = apiErr("list_users", 503) })
	r = c.get("/admin/platform-users")
	assert.Equal(t, http.StatusBadGateway, r.status)
	assert.Contains(t, r.body, "The platform did not list its users")
}

func TestAdminAudit(t *testing.T) {
	f, c, _, bob := adminFixture(t)
	ctx := t.Context()
	require.NoError(t, f.accts.Record(ctx, store.Event{Kind: store.KindLaunch, AccountID: bob.ID, Email: bob.Email, Outcome: "ok", PlatformCalls: 3, Latency: 25 * time.Millisecond, Detail: "created"}))
	require.NoError(t, f.accts.Record(ctx, store.Event{Kind: store.KindLaunch, AccountID: bob.ID, Email: bob.Email, Outcome: "ok", PlatformCalls: 1, Latency: 300 * time.Microsecond}))
	require.NoError(t, f.accts.Record(ctx, store.Event{Kind: store.KindLaunch, AccountID: bob.ID, Email: bob.Email, Outcome: "platform_forbidden", PlatformCalls: 1}))

	r := c.get("/admin/audit")
	require.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, r.body, "Kept 90 days")
	assert.Contains(t, r.body, "the newest 250,000 events", "the search is bounded, and says so")
	assert.Equal(t, 4, r.doc.Find("tbody tr").Length(), "the admin's sign-in and three launches")

	r = c.get("/admin/audit?account=BOB@example.com&kind=launch&outcome=ok")
	assert.Equal(t, 2, r.doc.Find("tbody tr").Length())
	assert.Contains(t, r.doc.Find("tbody tr").Eq(0).Text(), "<1ms", "newest first; under a millisecond")
	assert.Contains(t, r.doc.Find("tbody tr").Eq(1).Text(), "25ms")

	r = c.get("/admin/audit?account=nobody@example.com")
	assert.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, r.body, "No account has the email nobody@example.com.")

	forever := setup(t, func(d *Deps) { d.AuditRetention = 0 })
	forever.account("root@example.com", true)
	fc := forever.client()
	fc.signIn("root@example.com")
	assert.Contains(t, fc.get("/admin/audit").body, "Kept forever")
}

// A store failure in the console is the 500 page, the cause logged.
func TestAdminStoreFailure(t *testing.T) {
	f, c, _, _ := adminFixture(t)
	f.accts.down()
	r := c.get("/admin/accounts")
	assert.Equal(t, http.StatusInternalServerError, r.status)
}

// The console shows an account's sign-in ban and lifts it; setting a
// password lifts it too.
func TestAdminBans(t *testing.T) {
	f, c, _, bob := adminFixture(t)
	until := time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)
	f.accts.ban("bob@example.com", until)
	r := c.get("/admin/accounts")
	row := r.doc.Find(`tr[data-email="bob@example.com"]`)
	assert.Equal(t, "banned until 10:15 UTC", strings.TrimSpace(row.Find("[data-ban]").Text()))
	assert.Zero(t, r.doc.Find(`tr[data-email="root@example.com"] [data-ban]`).Length(), "only the banned account")
	page := c.get(row.Find(`a[data-action="manage"]`).AttrOr("href", ""))
	require.Equal(t, http.StatusOK, page.status)
	assert.Equal(t, "banned until 10:15 UTC", strings.TrimSpace(page.doc.Find("#account-status [data-ban]").Text()))
	require.Equal(t, 1, page.doc.Find(`button[data-action="lift-ban"]`).Length())

	r = c.submit("/admin/accounts", fmt.Sprintf("/admin/accounts/%d/lift-ban", bob.ID), nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, r.text("#notice"), "Lifted the sign-in ban on bob@example.com")
	assert.False(t, f.accts.banned("bob@example.com"))
	assert.Zero(t, r.doc.Find(`#account-status [data-ban]`).Length(), "the account's page, without the ban")
	evs := f.accts.eventsOf(store.KindAdmin)
	require.Len(t, evs, 1)
	assert.Equal(t, "lift-ban: bob@example.com", evs[0].Detail)

	f.accts.ban("bob@example.com", until)
	r = c.submit("/admin/accounts", fmt.Sprintf("/admin/accounts/%d/password", bob.ID), url.Values{"password": {"a new password"}})
	require.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, r.text("#notice"), "any sign-in ban is lifted")
	assert.False(t, f.accts.banned("bob@example.com"), "a new password lifts the ban")
}

// The console lists an account's devices, marks the admin's own, ends one
// (the others stay) and all; a session of another account is not ended
// through this one's page; bad ids are a 404 and change nothing.
func TestAdminSessions(t *testing.T) {
	f, admin, root, bob := adminFixture(t)
	phone, laptop := f.client(), f.client()
	phone.signIn("bob@example.com")
	laptop.signIn("bob@example.com")
	page := fmt.Sprintf("/admin/accounts/%d/sessions", bob.ID)

	r := admin.get(page)
	require.Equal(t, http.StatusOK, r.status)
	rows := r.doc.Find("#sessions tbody tr")
	assert.Equal(t, 2, rows.Length(), "bob's two devices")
	assert.Zero(t, r.doc.Find(".pill:contains('this device')").Length(), "not the admin's own")
	own := admin.get(fmt.Sprintf("/admin/accounts/%d/sessions", root.ID))
	assert.Equal(t, 1, own.doc.Find(".pill:contains('this device')").Length(), "the admin's own session is marked")

	bobs, _ := f.accts.ListSessions(t.Context(), bob.ID)
	roots, _ := f.accts.ListSessions(t.Context(), root.ID)
	require.Len(t, roots, 1)
	r = admin.submit(page, fmt.Sprintf("/admin/accounts/%d/sessions/%s/end", bob.ID, roots[0].ID), nil)
	assert.Equal(t, http.StatusNotFound, r.status, "root's session through bob's page")
	assert.Equal(t, http.StatusOK, admin.get("/admin/accounts").status, "and the admin is still signed in")

	ended := bobs[0].ID
	r = admin.submit(page, fmt.Sprintf("/admin/accounts/%d/sessions/%s/end", bob.ID, ended), nil)
	assert.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, r.text(".notice"), "Ended the session "+ended[:12])
	assert.Equal(t, 1, r.doc.Find("#sessions tbody tr").Length())
	signedIn := 0
	for _, c := range []*client{phone, laptop} {
		if c.get("/").status == http.StatusOK {
			signedIn++
		}
	}
	assert.Equal(t, 1, signedIn, "one device signed out, the other not")
	r = admin.submit(page, fmt.Sprintf("/admin/accounts/%d/sessions/%s/end", bob.ID, ended), nil)
	assert.Equal(t, http.StatusNotFound, r.status, "ended once")

	r = admin.submit(page, fmt.Sprintf("/admin/accounts/%d/end-sessions", bob.ID), nil)
	assert.Equal(t, http.StatusOK, r.status)
	left, _ := f.accts.ListSessions(t.Context(), bob.ID)
	assert.Empty(t, left)
	assert.Equal(t, 1, admin.get(page).doc.Find("#no-sessions").Length())

	assert.Equal(t, http.StatusNotFound, admin.get("/admin/accounts/999/sessions").status)
	assert.Equal(t, http.StatusNotFound, admin.get("/admin/accounts/x/sessions").status)
	bobAgain := f.client()
	bobAgain.signIn("bob@example.com")
	assert.Equal(t, http.StatusForbidden, bobAgain.get(page).status, "not for plain accounts")
}

// Links shown to admins are built from the configured public URL, or
// without one from the address the connection reached: never from the
// request's Host or X-Forwarded-* headers, which the sender writes.
func TestAdminLinksIgnoreForgedHost(t *testing.T) {
	for _, public := range []string{"", "https://sso.partner.example/"} {
		t.Run("public_url "+public, func(t *testing.T) {
			f := setup(t, func(d *Deps) { d.PublicURL = public })
			f.account("root@example.com", true)
			bob := f.account("bob@example.com", false)
			c := f.client()
			c.signIn("root@example.com")
			form := url.Values{"_csrf": {c.csrf("/admin/accounts")}}
			req, _ := http.NewRequest(http.MethodPost, f.srv.URL+fmt.Sprintf("/admin/accounts/%d/invite", bob.ID), strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			u, _ := url.Parse(f.srv.URL)
			for _, ck := range c.c.Jar.Cookies(u) { // the jar would pick them by the forged Host
				req.AddCookie(ck)
			}
			req.Host = "evil.example"
			req.Header.Set("X-Forwarded-Host", "evil.example")
			req.Header.Set("X-Forwarded-Proto", "https")
			r := c.do(req)
			require.Equal(t, http.StatusOK, r.status, r.class())
			link := r.text("#invite-link")
			want := f.srv.URL + "/set-password?token="
			if public != "" {
				want = "https://sso.partner.example/set-password?token="
			}
			assert.True(t, strings.HasPrefix(link, want), link)
			assert.NotContains(t, r.body, "evil.example")
		})
	}
}

// TestAdminBans: the console lists every ban in force (an address's, a
// SCIM client's) with why and until when, and lifts one at a time; a
// form naming no ban is refused and lifts nothing.
func TestAdminBansPage(t *testing.T) {
	f, c, root, _ := adminFixture(t)
	r := c.get("/admin/bans")
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "No ban is in force.", r.text("#no-bans"))

	until := f.clock.Now().Add(10 * time.Minute)
	f.accts.ban("bob@example.com", until)
	scimClient := store.SCIMTokenAddress("2001:db8::7")
	f.accts.ban(scimClient, until)
	r = c.get("/admin/bans")
	assert.Equal(t, http.StatusOK, r.status)
	rows := r.doc.Find("#bans tbody tr")
	require.Equal(t, 2, rows.Length(), r.body)
	page := r.text("#bans")
	assert.Contains(t, page, "Account address")
	assert.Contains(t, page, "bob@example.com")
	assert.Contains(t, page, "failed password sign-ins")
	assert.Contains(t, page, "SCIM client")
	assert.Contains(t, page, "2001:db8::7")
	assert.Contains(t, page, "Wrong SCIM bearer tokens")
	assert.Contains(t, page, until.UTC().Format("2006-01-02 15:04:05"))

	bad := c.submit("/admin/bans", "/admin/bans/lift", url.Values{"kind": {"account"}, "value": {"bob@example.com"}})
	assert.Equal(t, http.StatusBadRequest, bad.status)
	assert.Contains(t, bad.text("#admin-error"), "Nothing was lifted")
	bad = c.submit("/admin/bans", "/admin/bans/lift", url.Values{"kind": {"ip"}, "value": {"not-an-ip"}})
	assert.Equal(t, http.StatusBadRequest, bad.status)
	assert.True(t, f.accts.banned("bob@example.com"), "bad input lifts nothing")
	assert.True(t, f.accts.banned(scimClient))
	assert.Empty(t, f.accts.eventsOf(store.KindAdmin))

	r = c.submit("/admin/bans", "/admin/bans/lift", url.Values{"kind": {"email"}, "value": {scimClient}})
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "Lifted the ban on scim client 2001:db8::7; its counted failures are cleared.", r.text("#notice"))
	assert.False(t, f.accts.banned(scimClient))
	assert.True(t, f.accts.banned("bob@example.com"), "one ban at a time")
	assert.Equal(t, 1, r.doc.Find("#bans tbody tr").Length())
	evs := f.accts.eventsOf(store.KindAdmin)
	require.Len(t, evs, 1)
	assert.Equal(t, "lift ban (scim client): 2001:db8::7", evs[0].Detail)
	assert.Equal(t, root.ID, evs[0].AccountID)
}

// An address (or a name) that looks like a message's template is shown as
// written on every page that shows it: user data is never a template.
func TestAddressesAreNeverTemplates(t *testing.T) {
	f, c, _, _ := adminFixture(t)
	const addr = "{{.}}@school.example"
	tricky, err := f.accts.CreateAccount(t.Context(), store.NewAccount{Email: addr, FirstName: "{{.Name}}", LastName: "{{printf \"x\"}}",
		PasswordHash: "hash:" + testPassword})
	require.NoError(t, err)
	f.accts.Record(t.Context(), store.Event{Kind: store.KindLogin, AccountID: tricky.ID, Email: addr, Outcome: "ok", Detail: "{{.}}"})
	pages := map[string]string{
		"accounts":       "/admin/accounts",
		"account":        fmt.Sprintf("/admin/accounts/%d", tricky.ID),
		"sessions":       fmt.Sprintf("/admin/accounts/%d/sessions", tricky.ID),
		"audit":          "/admin/audit",
		"audit, by mail": "/admin/audit?email=" + url.QueryEscape(addr),
	}
	for name, path := range pages {
		r := c.get(path)
		require.Equal(t, http.StatusOK, r.status, name)
		assert.Contains(t, r.body, addr, "%s shows the address as written", name)
		assert.NotContains(t, r.body, "map[]", name)
	}
	assert.Equal(t, addr+" · ssobridge", c.get(pages["account"]).doc.Find("title").Text(), "the console's title is the address")

	own := f.client()
	own.signIn(addr)
	home := own.get("/")
	require.Equal(t, http.StatusOK, home.status)
	assert.Contains(t, home.text("#signed-in-as"), "{{.Name}}", "the person's own name as written")
	assert.NotContains(t, home.body, "map[]")
}
