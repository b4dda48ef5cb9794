package e2e

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/commands"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// The "Add a way in" recipe of docs/architecture.md, whole: a way in
// defined in this file alone — a school kiosk where a pupil gives their
// address and the kiosk's code — with its configuration section, its
// source, its routes, its check line, a console page and a refusal. It is
// registered by adding it to the list of modules, and nothing else: the
// bridge reads its section from YAML (and refuses a wrong one by key),
// mounts it, shows its button, admits its arrivals by its source's rules,
// and `ssobridge check` lists it.

// kioskSettings are the kiosk: section.
type kioskSettings struct {
	Code           string       `yaml:"code"` // the kiosk's code; empty: off
	EmailDomains   config.Words `yaml:"email_domains"`
	CreateAccounts bool         `yaml:"create_accounts"`
}

func kioskSection() config.Section[kioskSettings] {
	return config.Section[kioskSettings]{Key: "kiosk", Defaults: kioskSettings{CreateAccounts: true},
		Check: func(_ *config.Config, s *kioskSettings, bad func(key, problem string)) {
			config.CheckEmailDomains("kiosk.email_domains", s.EmailDomains, bad)
			if s.Code != "" && len(s.Code) < 8 {
				bad("kiosk.code", "shorter than 8 characters; give the kiosk a longer code")
			}
		}}
}

// kioskModule is the kiosk as the bridge registers it.
type kioskModule struct{}

func (kioskModule) Section() config.Sectioner { return kioskSection() }

func (kioskModule) Sources(cfg config.Config) []signin.Source {
	s := config.Settings(cfg, kioskSection())
	if s.Code == "" {
		return nil
	}
	return []signin.Source{{ID: "kiosk", Name: "school kiosk", Key: "kiosk", EmailDomains: s.EmailDomains.List(), CreateAccounts: s.CreateAccounts}}
}

func (m kioskModule) Open(_ context.Context, h wayin.Host) (wayin.Way, error) {
	sources := m.Sources(h.Config)
	if len(sources) == 0 {
		return nil, nil
	}
	return &kioskWay{code: config.Settings(h.Config, kioskSection()).Code, source: sources[0]}, nil
}

func (kioskModule) Check(_ context.Context, h wayin.Host, w io.Writer) bool {
	if config.Settings(h.Config, kioskSection()).Code == "" {
		return true // off: nothing to say, nothing wrong
	}
	fmt.Fprintf(w, "kiosk:     pupils sign in at %s/auth/kiosk with their address and the kiosk's code\nverdict:   KIOSK OK\n", h.Config.PublicURL(h.Config.Server.Addr))
	return true
}

// errWrongCode is the kiosk's refusal, of the refusal set: its page and
// its words in every language are the ones the ways share.
var errWrongCode = wayin.NewRefusal(views.RefusedDenied, "kiosk: the code is not the kiosk's")

// kioskWay is the kiosk as a way in.
type kioskWay struct {
	code    string
	source  signin.Source
	k       wayin.Kit
	signIns atomic.Int64
}

func (w *kioskWay) Name() string                        { return "kiosk" }
func (w *kioskWay) Exempt() []wayin.Exemption           { return nil }
func (w *kioskWay) Ready(context.Context) error         { return nil }
func (w *kioskWay) Essential() bool                     { return false }
func (w *kioskWay) Watch(context.Context, *slog.Logger) {}
func (w *kioskWay) Button(next string) (string, string) {
	return "the school kiosk", wayin.WithNext("/auth/kiosk", next)
}

// ConsolePage is its page in the console's navigation.
func (w *kioskWay) ConsolePage() (string, string) { return "/admin/kiosk", "Kiosk" }

func (w *kioskWay) Mount(r wayin.Router, k wayin.Kit) {
	w.k = k
	r.GET("/auth/kiosk", w.form)
	r.POST("/auth/kiosk", w.signIn)
	r.GET("/admin/kiosk", k.Console(w.console))
}

// htmlBody is a page body of literal HTML; its first verb is the page's
// anti-forgery token.
func htmlBody(format string, args ...any) func(views.Page) templ.Component {
	return func(p views.Page) templ.Component {
		return templ.ComponentFunc(func(_ context.Context, out io.Writer) error {
			_, err := fmt.Fprintf(out, format, append([]any{html.EscapeString(p.CSRF)}, args...)...)
			return err
		})
	}
}

func (w *kioskWay) form(c echo.Context) error {
	return w.k.Render(c, http.StatusOK, locale.Msg("Sign in at the kiosk"), htmlBody(`<main id="main"><h1>Sign in at the kiosk</h1><form method="post" action="/auth/kiosk" id="kiosk">`+
		`<input type="hidden" name="_csrf" value="%s"><label for="email">Email</label><input id="email" name="email">`+
		`<label for="code">Code</label><input id="code" name="code"><button>Sign in</button></form></main>`))
}

func (w *kioskWay) signIn(c echo.Context) error {
	email := strings.TrimSpace(c.FormValue("email"))
	if c.FormValue("code") != w.code {
		return w.k.Refuse(c, "kiosk sign-in refused", "school kiosk", email, wayin.Refused(errWrongCode, "kiosk_refused"))
	}
	_, err := w.k.Enter(c, signin.Arrival{Source: w.source, Subject: email, Email: email, Names: accounts.Names{Given: "Kiosk", Family: "Pupil"}},
		wayin.Landing{How: "school kiosk", Via: "the school kiosk", Next: "/"})
	if err == nil {
		w.signIns.Add(1)
	}
	return err
}

func (w *kioskWay) console(c echo.Context) error {
	return w.k.Render(c, http.StatusOK, locale.Msg("Kiosk"), htmlBody(`<main id="main"><h1 id="kiosk-console">Kiosk</h1><p>%[2]d sign-ins</p></main>`, w.signIns.Load()))
}

func TestAWayInDefinedInATestIsAModule(t *testing.T) {
	modules := append(app.Modules(), kioskModule{})
	kiosk := "kiosk:\n  code: chalk-and-cheese\n  email_domains: [school.example]\n"

	t.Run("its section is read from YAML, and refused by key", func(t *testing.T) {
		cfg, err := config.Parse([]byte(kiosk), []string{"SSOBRIDGE_KIOSK_CREATE_ACCOUNTS=false"}, wayin.Sections(modules)...)
		require.NoError(t, err)
		assert.Equal(t, kioskSettings{Code: "chalk-and-cheese", EmailDomains: "school.example"}, config.Settings(cfg, kioskSection()))
		_, err = config.Parse([]byte("kiosk:\n  code: short\n  colour: red\n"), nil, wayin.Sections(modules)...)
		require.ErrorIs(t, err, config.ErrInvalid)
		assert.Contains(t, err.Error(), "config: kiosk.code: shorter than 8 characters")
		assert.Contains(t, err.Error(), "config: kiosk.colour: line 3: no such setting")
		_, err = config.Parse([]byte(kiosk), nil, wayin.Sections(app.Modules())...)
		assert.ErrorContains(t, err, "config: kiosk: line 1: no such setting", "not registered: not a setting")
	})

	ta := startTestApp(t, testOptions{modules: modules, yaml: kiosk})
	t.Run("mounted, with its button, admitting by its source's rules", func(t *testing.T) {
		b := ta.browser(t)
		assert.Contains(t, b.get("/login").body, `href="/auth/kiosk"`, "its button on the sign-in page")
		tok := b.csrf("/auth/kiosk")
		r := b.post("/auth/kiosk", url.Values{"_csrf": {tok}, "email": {"pia@school.example"}, "code": {"chalk-and-cheese"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Contains(t, b.get("/").body, "Signed in as <strong>pia@school.example</strong>", "admitted: an account made for its domain")
		acct, err := ta.store.AccountByEmail(t.Context(), "pia@school.example")
		require.NoError(t, err)
		ids, err := ta.store.IdentitiesOf(t.Context(), acct.ID)
		require.NoError(t, err)
		require.Len(t, ids, 1)
		assert.Equal(t, "kiosk", ids[0].Source, "linked under its source")

		other := ta.browser(t)
		r = other.post("/auth/kiosk", url.Values{"_csrf": {other.csrf("/auth/kiosk")}, "email": {"kim@elsewhere.example"}, "code": {"chalk-and-cheese"}})
		assert.Equal(t, http.StatusForbidden, r.status, "another domain: the source is not trusted for it")
		_, err = ta.store.AccountByEmail(t.Context(), "kim@elsewhere.example")
		assert.Error(t, err, "no account made")
		r = other.post("/auth/kiosk", url.Values{"_csrf": {other.csrf("/auth/kiosk")}, "email": {"pia@school.example"}, "code": {"wrong code!"}})
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Contains(t, r.body, `id="error-page"`, "its refusal on the bridge's error page")
		assert.Contains(t, r.body, `data-class="idp-denied"`, "in the words the ways share")
		assert.Contains(t, ta.logs.String(), "kiosk sign-in refused")
		assert.NotContains(t, other.get("/").body, `id="signed-in-as"`, "refused: not signed in")
	})

	t.Run("its console page, an admin's", func(t *testing.T) {
		ta.addAccount(t, "root@partner.example", true)
		admin := ta.browser(t)
		admin.login("root@partner.example", testPassword)
		p := admin.get("/admin/kiosk")
		require.Equal(t, http.StatusOK, p.status)
		assert.Contains(t, p.body, `id="kiosk-console"`)
		assert.Contains(t, p.body, "1 sign-ins")
		assert.Contains(t, admin.get("/admin/accounts").body, `<a href="/admin/kiosk">Kiosk</a>`, "linked in the console's navigation")
		pupil := ta.browser(t)
		pupil.login(ta.addAccount(t, "bob@partner.example", false).Email, testPassword)
		assert.Equal(t, http.StatusForbidden, pupil.get("/admin/kiosk").status)
	})

	t.Run("listed by check", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "config.yaml")
		require.NoError(t, os.WriteFile(path, []byte("store:\n  dsn: "+filepath.Join(dir, "db")+"\n"+kiosk), 0o600))
		var out, errOut bytes.Buffer
		code := commands.Run(t.Context(), []string{"check", "--config", path}, cli.Env{Stdout: &out, Stderr: &errOut, Modules: modules})
		assert.Equal(t, 0, code, out.String()+errOut.String())
		assert.Contains(t, out.String(), "kiosk:     pupils sign in at http://127.0.0.1:8080/auth/kiosk")
		assert.Contains(t, out.String(), "verdict:   KIOSK OK")
		assert.Contains(t, out.String(), "school kiosk: accounts of school.example; creates accounts: true; grants no admin")
	})
}
