package e2e

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/internal/viewgallery"
	"github.com/ssobridge/ssobridge/wayin/portal"
)

// languagePages are the pages a person reaches in the running bridge,
// each as its browser gets there (the texts the handlers write included:
// notices, refusals, titles, what arrives). The account is signed out at
// the start.
func languagePages(t *testing.T, ta *testApp, b *browser, email string) map[string]page {
	t.Helper()
	pages := map[string]page{}
	pages["sign-in"] = b.get("/login")
	pages["sign-in, signed out"] = b.get("/login?signed_out=1")
	pages["sign-in, signed out everywhere"] = b.get("/login?signed_out=everywhere")
	pages["sign-in, session ended"] = b.get("/login?expired=1")
	pages["sign-in, refused"] = b.login(email, "not the password")
	pages["sign-in, empty"] = b.post("/login", url.Values{"_csrf": {b.csrf("/login")}})
	pages["not found"] = b.get("/no/such/page")
	pages["form from elsewhere"] = b.post("/login", url.Values{"email": {email}, "password": {testPassword}})
	pages["session ended (launch)"] = b.post("/launch", url.Values{"_csrf": {b.csrf("/login")}})
	pages["LTI tool settings"] = b.get("/lti/config")
	acct, err := ta.store.AccountByEmail(t.Context(), email)
	require.NoError(t, err)
	tok, err := accounts.IssuePasswordLink(t.Context(), ta.store, acct.ID, time.Now())
	require.NoError(t, err)
	link := accounts.SetPasswordPath(tok)
	pages["set-password"] = b.get(link)
	pages["set-password, refused"] = b.post("/set-password", url.Values{"_csrf": {b.csrf(link)}, "token": {tok}, "password": {"short"}, "confirm": {"short"}})
	pages["set-password, differ"] = b.post("/set-password", url.Values{"_csrf": {b.csrf(link)}, "token": {tok},
		"password": {"a long enough password"}, "confirm": {"another long password"}})
	pages["set-password, gone"] = b.get(accounts.SetPasswordPath("no-such-token"))
	require.Equal(t, http.StatusSeeOther, b.login(email, testPassword).status)
	pages["home"] = b.get("/")
	pages["forbidden"] = b.get("/admin/accounts")
	other := portalToken(t, portal.Claims{Email: "grace@example.com", GivenName: "Grace", FamilyName: "Hopper"})
	pages["switch accounts"] = b.get(portal.HandoffPath + "?jwt=" + url.QueryEscape(other))
	pages["portal link refused"] = b.get(portal.HandoffPath + "?jwt=not-a-token")
	// What an admin reads outside the console, in the person's language
	// too (such an admin can be a teacher an LMS made admin): an error
	// page's status and reference, a setup problem's explanation, the LTI
	// tool settings with the registered LMSs.
	admin := &browser{t: b.t, base: b.base, c: &http.Client{Jar: newJar(), Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, lang: b.lang}
	require.Equal(t, http.StatusSeeOther, admin.login(languageAdmin, testPassword).status)
	pages["not found, an admin"] = admin.get("/no/such/page")
	pages["LTI tool settings, an admin"] = admin.get("/lti/config")
	for name, status := range map[string]int{"platform refused, an admin": 403, "platform credentials refused, an admin": 401, "platform misconfigured, an admin": 404} {
		ta.sim.InjectFault("list_users", platformsim.Fault{Status: status, Times: 1})
		pages[name] = admin.post("/launch", url.Values{"_csrf": {admin.csrf("/")}})
		require.Equal(t, http.StatusBadGateway, pages[name].status, "%s: the setup problem's page", name)
		require.Contains(t, pages[name].body, `<p class="status">`, "%s: as an admin reads it", name)
	}
	return pages
}

// pupilWords are the product's inner words a pupil's page must not use.
var pupilWords = regexp.MustCompile(`(?i)(\bbridge\b|\bbr(ü|u)cke\b|\bponte\b|\bpont\b|\bpuente\b|partner admin|partner-admin|administrador del socio|administrateur partenaire|administrador parceiro)`)

// languageAdmin is the partner admin of the language tests.
const languageAdmin = "root@example.com"

func newJar() *cookiejar.Jar {
	jar, _ := cookiejar.New(nil)
	return jar
}

// TestLanguagesFromOutside: the running bridge speaks each language a
// browser asks for (Accept-Language) or the switch chooses (kept in a
// cookie), with <html lang> set; in the pseudo-language no page it
// serves a person holds a word that skipped the catalog, and in each
// language none holds an English sentence of the catalog.
func TestLanguagesFromOutside(t *testing.T) {
	ta := startTestApp(t, testOptions{sampleLMS: true, yaml: portalYAML + "server:\n  languages: [en, es, fr, de, pt-BR, en-XA]\n"})
	const email = "ada@example.com"
	ta.addAccount(t, email, false)
	ta.addAccount(t, languageAdmin, true)
	data := []string{email, languageAdmin, "grace@example.com", "Ada", "Lovelace", "Grace", "Hopper", "Sample LMS (demo)"}

	t.Run("pseudo-language", func(t *testing.T) {
		b := ta.browser(t)
		b.lang = "en-XA"
		for name, p := range languagePages(t, ta, b, email) {
			assert.Contains(t, p.body, `<html lang="en-XA">`, name)
			assert.Equal(t, "en-XA", p.header.Get("Content-Language"), name)
			left, err := viewgallery.EnglishLeft(p.body, data...)
			require.NoError(t, err)
			assert.Empty(t, left, "%s (%d): text that did not come from the catalog", name, p.status)
		}
	})
	for _, tc := range []struct{ accept, want string }{
		{"es-MX,es;q=0.9,en;q=0.5", "es"}, {"fr-CA", "fr"}, {"de-AT;q=0.9, ja", "de"}, {"pt-PT", "pt-BR"}, {"pt-BR", "pt-BR"},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			b := ta.browser(t)
			b.lang = tc.accept
			english, err := viewgallery.NewEnglish(tc.want)
			require.NoError(t, err)
			for name, p := range languagePages(t, ta, b, email) {
				assert.Contains(t, p.body, `<html lang="`+tc.want+`">`, name)
				if !strings.HasSuffix(name, ", an admin") {
					// A pupil reads the product's name, never "bridge" (nor its
					// literal translation), and whom to ask, never "partner admin".
					texts, err := viewgallery.Texts(p.body)
					require.NoError(t, err)
					assert.NotRegexp(t, pupilWords, strings.Join(texts, " | "), "%s: words a pupil does not understand", name)
				}
				left, err := english.Left(p.body, data...)
				require.NoError(t, err)
				assert.Empty(t, left, "%s: English left", name)
			}
		})
	}

	t.Run("the switch", func(t *testing.T) {
		b := ta.browser(t)
		b.lang = "es"
		p := b.get("/login")
		assert.Contains(t, p.body, `<html lang="es">`)
		assert.Contains(t, p.body, `href="/login?lang=de"`, "the switch links to this page in German")
		p = b.get("/login?lang=de")
		assert.Contains(t, p.body, `<html lang="de">`)
		assert.Contains(t, p.body, `aria-current="true" id="lang-de"`)
		assert.Contains(t, p.header.Get("Set-Cookie"), "ssobridge_lang=de")
		assert.Contains(t, b.get("/no/such/page").body, `<html lang="de">`, "kept for the next pages, over Accept-Language")
		p = b.get("/login?lang=xx")
		assert.Contains(t, p.body, `<html lang="de">`, "a language not offered is ignored")
		assert.Contains(t, b.get("/login?lang=fr&next=%2Feditor").body, `name="next" value="/editor"`, "the page's own parameters stay")
		assert.Contains(t, b.get("/login").body, `<html lang="fr">`)
		assert.Contains(t, p.header.Get("Vary"), "Accept-Language")
	})
	t.Run("the switch never repeats the request's query", func(t *testing.T) {
		b := ta.browser(t)
		const secret = "eyJhbGciOiJIUzI1NiJ9.a-handoff-token-no-page-may-repeat"
		for _, u := range []string{"/sso/jwt?jwt=" + secret, "/set-password?token=" + secret, "/login?next=%2Fopen&x=" + secret,
			"/no/such/page?jwt=" + secret} {
			p := b.get(u)
			doc, err := goquery.NewDocumentFromReader(strings.NewReader(p.body))
			require.NoError(t, err)
			links := doc.Find("#language-switch a")
			require.NotZero(t, links.Length(), u)
			links.Each(func(_ int, a *goquery.Selection) {
				href := a.AttrOr("href", "")
				assert.NotContains(t, href, secret, u)
				got, err := url.Parse(href)
				require.NoError(t, err)
				for k := range got.Query() {
					assert.Contains(t, []string{"lang", "next"}, k, "%s: only the language (and the sign-in's next) in %s", u, href)
				}
			})
			assert.NotContains(t, p.body, secret, "%s: the refused token is not in the page", u)
		}
		p := b.get("/login?next=%2Feditor%2Fp%3Fid%3D1")
		assert.Contains(t, p.body, `href="/login?next=%2Feditor%2Fp%3Fid%3D1&amp;lang=de"`, "the sign-in's checked next is the page's own state")
	})
	t.Run("the console stays English", func(t *testing.T) {
		b := ta.browser(t)
		b.lang = "fr"
		require.Equal(t, http.StatusSeeOther, b.login("root@example.com", testPassword).status)
		p := b.get("/admin/accounts")
		require.Equal(t, http.StatusOK, p.status)
		assert.Contains(t, p.body, `<html lang="en">`)
		assert.NotContains(t, p.body, `id="language-switch"`)
		assert.True(t, strings.Contains(b.get("/").body, `<html lang="fr">`), "the person's pages in French")
	})
}

// server.contact_name is whom the pages tell a person to ask, in every
// language, and server.contact_url is linked from error pages; without
// them the person reads "your IT help desk" in their language.
func TestPagesNameTheContact(t *testing.T) {
	ta := startTestApp(t, testOptions{yaml: "server:\n  contact_name: the school's IT desk\n  contact_url: mailto:it@school.example\n"})
	b := ta.browser(t)
	gone := b.get(accounts.SetPasswordPath("no-such-token"))
	assert.Contains(t, gone.body, "Ask the school&#39;s IT desk for a new one.")
	b.lang = "de"
	notFound := b.get("/no/such/page")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(notFound.body))
	require.NoError(t, err)
	assert.Equal(t, "mailto:it@school.example", doc.Find("#contact").AttrOr("href", ""))
	assert.Equal(t, "the school's IT desk kontaktieren", doc.Find("#contact").Text())
	assert.Contains(t, doc.Find(".meta").Text(), "wenn Sie sich an the school's IT desk wenden")

	plain := startTestApp(t, testOptions{})
	p := plain.browser(t)
	p.lang = "fr"
	gone = p.get(accounts.SetPasswordPath("no-such-token"))
	assert.Contains(t, gone.body, "Demandez-en un nouveau à votre support informatique.")
	assert.NotContains(t, p.get("/no/such/page").body, `id="contact"`, "no contact URL: no link")
}
