package locale

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/nicksnyder/go-i18n/v2/i18n"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite catalog/en.yaml from the messages the code uses")

// sourceMsg is a message the code uses: its id (the English, or the English
// "other" form) and, for plurals, the English "one" form.
type sourceMsg struct {
	ID, One string
	At      string // where it is used first
}

// sourceMessages reads every message the module's code uses: the
// literals passed to t, tm and tn (the views), to a Localizer's T and N,
// and to Msg. A translation call with a text that is not a literal is an
// error: its message could not be listed.
func sourceMessages(t *testing.T) (map[string]sourceMsg, []string) {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	msgs := map[string]sourceMsg{}
	var problems []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "tools" || n == "e2e" || n == "testdata" || n == "data") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		// Forwarders pass a text through: the views' helpers, Date (the
		// month names), the page title (given with Msg), Name (a name
		// that may be a catalog's default, given with Msg), and the refusal
		// pages' worded and wordedMarked (a way's wording, given with Msg), and
		// views.T (a way's own pages' t, its texts literal where it calls it).
		forwards := map[string]bool{"t": true, "tn": true, "tm": true, "Date": true, "page": true, "Name": true, "worded": true, "wordedMarked": true, "T": true}
		var inFunc string
		ast.Inspect(f, func(n ast.Node) bool {
			if fd, ok := n.(*ast.FuncDecl); ok {
				inFunc = fd.Name.Name
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var name string
			var args []ast.Expr
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				name, args = fn.Name, call.Args
				switch name {
				case "t", "tm", "tn": // the views' helpers: ctx first
					if len(args) == 0 {
						return true
					}
					args = args[1:]
				case "Msg":
				default:
					return true
				}
			case *ast.SelectorExpr:
				name, args = fn.Sel.Name, call.Args
				if name != "T" && name != "N" && name != "Msg" {
					return true
				}
				if x, ok := fn.X.(*ast.Ident); ok && name == "Msg" && x.Name != "locale" {
					return true
				}
			default:
				return true
			}
			at := fset.Position(call.Pos()).String()
			at = strings.TrimPrefix(at, root+string(filepath.Separator))
			lit := func(i int) (string, bool) {
				if i >= len(args) {
					return "", false
				}
				b, ok := args[i].(*ast.BasicLit)
				if !ok || b.Kind != token.STRING {
					return "", false
				}
				s, err := strconv.Unquote(b.Value)
				return s, err == nil
			}
			plural := name == "tn" || name == "N"
			one, ok1 := lit(0)
			other, ok2 := lit(1)
			switch {
			case plural && ok1 && ok2:
				msgs[other] = sourceMsg{ID: other, One: one, At: at}
			case !plural && ok1:
				if _, seen := msgs[one]; !seen {
					msgs[one] = sourceMsg{ID: one, At: at}
				}
			case forwards[inFunc]:
			default:
				problems = append(problems, at+": "+name+" with a text that is not a literal")
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	return msgs, problems
}

// readCatalog reads one catalog file as go-i18n does.
func readCatalog(t *testing.T, name string) map[string]*i18n.Message {
	t.Helper()
	buf, err := catalogFiles.ReadFile("catalog/" + name)
	require.NoError(t, err)
	mf, err := i18n.ParseMessageFileBytes(buf, name, map[string]i18n.UnmarshalFunc{"yaml": yaml.Unmarshal})
	require.NoError(t, err, name)
	out := map[string]*i18n.Message{}
	for _, m := range mf.Messages {
		out[m.ID] = m
	}
	return out
}

// TestEnglishCatalogListsWhatTheCodeSays: catalog/en.yaml is exactly the
// messages the code uses (go test ./locale -update rewrites it).
func TestEnglishCatalogListsWhatTheCodeSays(t *testing.T) {
	msgs, problems := sourceMessages(t)
	assert.Empty(t, problems)
	require.Greater(t, len(msgs), 100, "the extraction found the views' messages")
	if *update {
		require.NoError(t, os.WriteFile("catalog/en.yaml", englishCatalog(msgs), 0o644))
	}
	en := readCatalog(t, "en.yaml")
	for id, m := range msgs {
		got, ok := en[id]
		if !assert.True(t, ok, "%s: %q is not in catalog/en.yaml (go test ./locale -update)", m.At, id) {
			continue
		}
		assert.Equal(t, m.ID, got.Other, "en.yaml's text of %q is its id", id)
		assert.Equal(t, m.One, got.One, "en.yaml's one form of %q", id)
	}
	for id := range en {
		assert.Contains(t, msgs, id, "catalog/en.yaml has %q, which the code no longer uses (go test ./locale -update)", id)
	}
}

func englishCatalog(msgs map[string]sourceMsg) []byte {
	ids := make([]string, 0, len(msgs))
	for id := range msgs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	b.WriteString("# The English catalog: every message the code uses, its id being its English.\n")
	b.WriteString("# Written by `go test ./locale -update`; translate it into <tag>.yaml (docs/languages.md).\n")
	for _, id := range ids {
		m := msgs[id]
		if m.One != "" {
			fmt.Fprintf(&b, "%s:\n  one: %s\n  other: %s\n", yamlString(id), yamlString(m.One), yamlString(id))
		} else {
			fmt.Fprintf(&b, "%s: %s\n", yamlString(id), yamlString(id))
		}
	}
	return []byte(b.String())
}

func yamlString(s string) string { return strconv.Quote(s) }

var placeholder = regexp.MustCompile(`\{\{\s*\.(\w+)\s*\}\}`)

// shape is what a translation must keep of its English: the placeholders
// and the strong marks.
func shape(s string) string {
	var names []string
	for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	return fmt.Sprintf("placeholders %v, %d strong marks", names, strings.Count(s, "**"))
}

// catalogProblems compares a language's catalog with the English one:
// every message there and no other, its placeholders and strong marks
// kept (a form for one number may say the number in words), each text a
// template that parses, and, for plural messages, a form for every count
// the language's plural rules tell apart (localize answers each).
func catalogProblems(en, cat map[string]*i18n.Message, localize func(id string, n int) error) []string {
	var problems []string
	for id, m := range en {
		tr, ok := cat[id]
		if !ok {
			problems = append(problems, fmt.Sprintf("lacks %q", id))
			continue
		}
		if tr.Other == "" {
			problems = append(problems, fmt.Sprintf("%q has no text", id))
		}
		forms := map[string]string{"other": tr.Other, "one": tr.One, "many": tr.Many, "few": tr.Few, "two": tr.Two, "zero": tr.Zero}
		for form, text := range forms {
			if text == "" {
				continue
			}
			want, got := shape(m.Other), shape(text)
			if form != "other" {
				want, got = shape(strings.ReplaceAll(m.Other, "{{.Count}}", "")), shape(strings.ReplaceAll(text, "{{.Count}}", ""))
			}
			if want != got {
				problems = append(problems, fmt.Sprintf("%q (%s) has %s, the English %s: %q", id, form, got, want, text))
			}
			if _, err := template.New("").Parse(text); err != nil {
				problems = append(problems, fmt.Sprintf("%q (%s): %v", id, form, err))
			}
		}
		if m.One != "" {
			for _, n := range []int{0, 1, 2, 3, 5, 11, 21, 101, 1000000} {
				if err := localize(id, n); err != nil {
					problems = append(problems, fmt.Sprintf("%q for %d: %v", id, n, err))
				}
			}
		}
	}
	for id := range cat {
		if _, ok := en[id]; !ok {
			problems = append(problems, fmt.Sprintf("has %q, which is not an English message", id))
		}
	}
	sort.Strings(problems)
	return problems
}

// TestEveryCatalogTranslatesEveryMessage: each language's catalog passes
// catalogProblems.
func TestEveryCatalogTranslatesEveryMessage(t *testing.T) {
	en := readCatalog(t, "en.yaml")
	c, err := New(nil)
	require.NoError(t, err)
	for _, tag := range Available()[1:] {
		t.Run(tag.String(), func(t *testing.T) {
			cat := readCatalog(t, tag.String()+".yaml")
			l := c.localizers[tag].l
			assert.Empty(t, catalogProblems(en, cat, func(id string, n int) error {
				_, err := l.Localize(&i18n.LocalizeConfig{MessageID: id, PluralCount: n, TemplateData: map[string]any{"Count": n}})
				return err
			}), "catalog/%s.yaml", tag)
			t.Logf("%s: %d messages", tag, len(cat))
		})
	}
}

// TestCatalogProblemsAreFound: the check fails a catalog that lacks a
// message, drops a placeholder or a mark, breaks a template, lacks a
// plural form, or has a message the English has not.
func TestCatalogProblemsAreFound(t *testing.T) {
	en := map[string]*i18n.Message{
		"Hello, {{.Name}}":    {ID: "Hello, {{.Name}}", Other: "Hello, {{.Name}}"},
		"**Nothing** changed": {ID: "**Nothing** changed", Other: "**Nothing** changed"},
		"{{.Count}} minutes":  {ID: "{{.Count}} minutes", One: "{{.Count}} minute", Other: "{{.Count}} minutes"},
		"Sign in":             {ID: "Sign in", Other: "Sign in"},
	}
	good := map[string]*i18n.Message{
		"Hello, {{.Name}}":    {Other: "Hola, {{.Name}}"},
		"**Nothing** changed": {Other: "**Nada** cambió"},
		"{{.Count}} minutes":  {One: "un minuto", Other: "{{.Count}} minutos"},
		"Sign in":             {Other: "Entrar"},
	}
	ok := func(string, int) error { return nil }
	assert.Empty(t, catalogProblems(en, good, ok))
	for name, change := range map[string]func(map[string]*i18n.Message){
		"a message missing":     func(c map[string]*i18n.Message) { delete(c, "Sign in") },
		"a placeholder dropped": func(c map[string]*i18n.Message) { c["Hello, {{.Name}}"] = &i18n.Message{Other: "Hola"} },
		"a placeholder renamed": func(c map[string]*i18n.Message) { c["Hello, {{.Name}}"] = &i18n.Message{Other: "Hola, {{.Nombre}}"} },
		"a mark dropped":        func(c map[string]*i18n.Message) { c["**Nothing** changed"] = &i18n.Message{Other: "Nada cambió"} },
		"a broken template":     func(c map[string]*i18n.Message) { c["Hello, {{.Name}}"] = &i18n.Message{Other: "Hola, {{.Name}"} },
		"an empty text":         func(c map[string]*i18n.Message) { c["Sign in"] = &i18n.Message{} },
		"a message of its own":  func(c map[string]*i18n.Message) { c["Sign up"] = &i18n.Message{Other: "Registrarse"} },
	} {
		cat := map[string]*i18n.Message{}
		for k, v := range good {
			cat[k] = v
		}
		change(cat)
		assert.NotEmpty(t, catalogProblems(en, cat, ok), name)
	}
	lacksAForm := func(id string, n int) error {
		if n == 1000000 {
			return fmt.Errorf("no form many")
		}
		return nil
	}
	assert.NotEmpty(t, catalogProblems(en, good, lacksAForm), "a plural form missing")
}

func TestChoose(t *testing.T) {
	all, err := New(nil)
	require.NoError(t, err)
	deFirst, err := New([]string{"de", "en"})
	require.NoError(t, err)
	for _, tc := range []struct {
		name           string
		c              *Catalog
		cookie, accept string
		want           string
	}{
		{"no header: the first offered", all, "", "", "en"},
		{"exact", all, "", "fr", "fr"},
		{"q-values honoured", all, "", "de;q=0.2, es;q=0.9, en;q=0.1", "es"},
		{"the first acceptable in order", all, "", "ja, fr;q=0.8, de;q=0.5", "fr"},
		{"a region falls back to its language", all, "", "es-MX,es;q=0.9", "es"},
		{"a region alone falls back to its language", all, "", "fr-CA", "fr"},
		{"Portuguese of Portugal gets Brazil's", all, "", "pt-PT", "pt-BR"},
		{"pt", all, "", "pt", "pt-BR"},
		{"de-AT", all, "", "de-AT", "de"},
		{"none offered: English", all, "", "ja, zh-CN;q=0.8", "en"},
		{"a wildcard: the first", all, "", "*", "en"},
		{"garbage: the first", all, "", ";;;q=x,,", "en"},
		{"the cookie wins", all, "de", "fr", "de"},
		{"a cookie not offered is ignored", deFirst, "fr", "es", "de"},
		{"limited: the first offered is the default", deFirst, "", "fr", "de"},
		{"limited: English still chosen when asked", deFirst, "", "en-GB", "en"},
		{"q=0 refuses a language", all, "", "fr;q=0, de", "de"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.c.Choose(tc.cookie, tc.accept).Lang())
		})
	}
}

func TestNewRefusesLanguagesWithoutACatalog(t *testing.T) {
	for _, bad := range [][]string{{"ja"}, {"en", "en"}, {"not a tag!"}, {"es", "xx"}} {
		_, err := New(bad)
		assert.Error(t, err, "%v", bad)
	}
	c, err := New([]string{"pt-BR", "en-XA"})
	require.NoError(t, err)
	assert.Equal(t, []Option{{Tag: "pt-BR", Name: "Português (Brasil)"}, {Tag: "en-XA", Name: names[Pseudo]}}, c.Offered())
}

func TestPluralsAndNumbersFollowTheLanguage(t *testing.T) {
	c, err := New(nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		tag  string
		n    int
		want string
	}{
		{"en", 1, "About 1 minute more."}, {"en", 2, "About 2 minutes more."}, {"en", 1500, "About 1,500 minutes more."},
		{"fr", 0, "Encore environ 0 minute."}, {"fr", 1, "Encore environ 1 minute."}, {"fr", 2, "Encore environ 2 minutes."},
		{"fr", 1500, "Encore environ 1\u00a0500 minutes."},
		{"de", 1, "Noch etwa 1 Minute."}, {"de", 1500, "Noch etwa 1.500 Minuten."},
		{"es", 1, "Aproximadamente 1 minuto más."}, {"es", 3, "Aproximadamente 3 minutos más."},
		{"pt-BR", 0, "Mais cerca de 0 minuto."}, {"pt-BR", 1, "Mais cerca de 1 minuto."}, {"pt-BR", 2, "Mais cerca de 2 minutos."},
	} {
		l, ok := c.Lookup(tc.tag)
		require.True(t, ok)
		assert.Equal(t, tc.want, l.N("About {{.Count}} minute more.", "About {{.Count}} minutes more.", tc.n), "%s %d", tc.tag, tc.n)
	}
	de, _ := c.Lookup("de")
	assert.Equal(t, "27. November 2026, 14:05 UTC", de.Date(time.Date(2026, 11, 27, 14, 5, 0, 0, time.UTC)))
	fr, _ := c.Lookup("fr")
	assert.Equal(t, "27 novembre 2026 à 14:05 UTC", fr.Date(time.Date(2026, 11, 27, 14, 5, 0, 0, time.UTC)))
	assert.Equal(t, "November 27, 2026 at 14:05 UTC", c.English().Date(time.Date(2026, 11, 27, 14, 5, 0, 0, time.UTC)))
}

func TestEnglishWithoutALocalizer(t *testing.T) {
	var l *Localizer
	assert.Equal(t, "Hello, Ada", l.T("Hello, {{.Name}}", "Name", "Ada"))
	assert.Equal(t, "en", l.Lang())
	assert.Equal(t, "2 minutes", l.N("{{.Count}} minute", "{{.Count}} minutes", 2))
}

func TestPseudoLanguageMarksEveryMessage(t *testing.T) {
	c, err := New([]string{"en-XA"})
	require.NoError(t, err)
	l, ok := c.Lookup("en-XA")
	require.True(t, ok)
	got := l.T("Hello, {{.Name}}", "Name", "Ada")
	assert.Equal(t, "⟦Ĥéļļö, Ada⟧", got, "placeholders kept, letters accented")
	assert.Equal(t, "not a message", l.T("not a message"), "a text outside the catalog stays English: the pseudo-language shows it")
}

func TestNameIsTranslatedOnlyWhenTheCatalogHasIt(t *testing.T) {
	c, err := New(nil)
	require.NoError(t, err)
	es, _ := c.Lookup("es")
	assert.Equal(t, "su organización", es.Name("your organisation"), "a default name the catalog translates")
	assert.Equal(t, "Springfield Canvas", es.Name("Springfield Canvas"), "a name of its own stays")
	assert.Equal(t, "{{.Secret}} LMS", es.Name("{{.Secret}} LMS"), "never read as a template")
}

// A text without placeholders is translated once per language and then
// served from the localizer's cache: the same text, language by
// language, however often it is asked for.
func TestPlainTextsAreTranslatedOnce(t *testing.T) {
	c, err := New(nil)
	require.NoError(t, err)
	de, _ := c.Lookup("de")
	es, _ := c.Lookup("es")
	first := de.T("Sign in")
	assert.NotEqual(t, "Sign in", first)
	assert.Equal(t, first, de.T("Sign in"))
	assert.NotEqual(t, first, es.T("Sign in"), "each language its own")
	assert.Equal(t, "Ada", de.Name("Ada"), "a name is no message")
	allocs := testing.AllocsPerRun(100, func() { _ = de.T("Sign in") })
	assert.Zero(t, allocs, "served from the cache")
}

func BenchmarkPlainText(b *testing.B) {
	c, err := New(nil)
	require.NoError(b, err)
	de, _ := c.Lookup("de")
	for b.Loop() {
		_ = de.T("Sign in")
	}
}
