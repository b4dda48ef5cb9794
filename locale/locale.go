// Package locale chooses the language a page speaks and translates its
// texts from the message catalogs (go-i18n bundles, one YAML file per
// language under catalog/). A message's id is its English text, as the
// templates write it: the English catalog lists the ids the code uses, and
// the other catalogs translate them.
package locale

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nicksnyder/go-i18n/v2/i18n"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/number"
)

//go:embed catalog/*.yaml
var catalogFiles embed.FS

// English is the language of the templates and the fallback of every
// message a catalog lacks.
var English = language.English

// Available are the languages the catalogs translate, in the order the
// switch offers them by default.
func Available() []language.Tag {
	return []language.Tag{language.English, language.Spanish, language.French, language.German, language.BrazilianPortuguese}
}

// CookieName is the cookie that keeps the language a person chose with the
// switch.
const CookieName = "ssobridge_lang"

// cookieAge is how long a chosen language is kept.
const cookieAge = 365 * 24 * time.Hour

// Cookie keeps a chosen language (tag) in the browser, for a year.
func Cookie(tag string, secure bool) *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: tag, Path: "/", MaxAge: int(cookieAge / time.Second),
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}
}

// ErrUnknownLanguage: a configured or chosen language has no catalog.
var ErrUnknownLanguage = errors.New("no catalog for this language")

// Catalog holds the translations and the languages offered.
type Catalog struct {
	offered    []language.Tag
	options    []Option // offered, as the switch names them
	matcher    language.Matcher
	localizers map[language.Tag]*Localizer
}

// Option is a language as the switch offers it.
type Option struct {
	Tag  string // BCP 47: "pt-BR"
	Name string // in its own language: "Português (Brasil)"
}

// names are the languages in their own words (the switch's links).
var names = map[language.Tag]string{
	language.English: "English", language.Spanish: "Español", language.French: "Français",
	language.German: "Deutsch", language.BrazilianPortuguese: "Português (Brasil)", Pseudo: "Ƥšéûðö",
}

// New loads the catalogs and offers the languages named (BCP 47 tags, in
// the order the switch shows them; the first is for browsers that accept
// none of them). No names: every available language, English first.
// The pseudo-language (en-XA) may be offered too: every text marked and
// accented, so a page shows at once what skipped the catalog.
func New(offered []string) (*Catalog, error) {
	bundle := i18n.NewBundle(English)
	bundle.RegisterUnmarshalFunc("yaml", yaml.Unmarshal)
	files, err := fs.Glob(catalogFiles, "catalog/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("locale: %w", err)
	}
	have := map[language.Tag]bool{}
	for _, f := range files {
		buf, err := catalogFiles.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("locale: %w", err)
		}
		mf, err := bundle.ParseMessageFileBytes(buf, path.Base(f))
		if err != nil {
			return nil, fmt.Errorf("locale: catalog %s: %w", f, err)
		}
		have[mf.Tag] = true
	}
	tags, err := offeredTags(offered)
	if err != nil {
		return nil, err
	}
	if slices.Contains(tags, Pseudo) {
		// Made only when offered: a whole catalog more to keep.
		if err := addPseudo(bundle); err != nil {
			return nil, err
		}
		have[Pseudo] = true
	}
	c := &Catalog{localizers: map[language.Tag]*Localizer{}, offered: tags}
	for _, t := range tags {
		if !have[t] {
			return nil, fmt.Errorf("%q: %w", t, ErrUnknownLanguage)
		}
	}
	c.matcher = language.NewMatcher(c.offered)
	for _, t := range c.offered {
		c.options = append(c.options, Option{Tag: t.String(), Name: names[t]})
	}
	for _, tag := range append([]language.Tag{English}, c.offered...) {
		c.localizers[tag] = &Localizer{tag: tag, l: i18n.NewLocalizer(bundle, tag.String()), p: message.NewPrinter(tag), pseudo: tag == Pseudo}
	}
	return c, nil
}

// Check tells whether New would offer the languages named, without
// loading the catalogs (the configuration's check).
func Check(offered []string) error {
	_, err := offeredTags(offered)
	return err
}

// offeredTags reads the languages to offer: each one the bridge has
// (Available, or the pseudo-language), none twice; none named: every
// available one.
func offeredTags(offered []string) ([]language.Tag, error) {
	if len(offered) == 0 {
		return Available(), nil
	}
	var tags []language.Tag
	for _, s := range offered {
		tag, err := language.Parse(s)
		if err != nil || (tag != Pseudo && !slices.Contains(Available(), tag)) {
			return nil, fmt.Errorf("%q: %w (have %s)", s, ErrUnknownLanguage, tagList(Available()))
		}
		if slices.Contains(tags, tag) {
			return nil, fmt.Errorf("%q is listed twice", s)
		}
		tags = append(tags, tag)
	}
	return tags, nil
}

func tagList(tags []language.Tag) string {
	s := make([]string, len(tags))
	for i, t := range tags {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

// Offered lists the languages the switch offers, in their own words (the
// catalog's own list, made once: read it, do not change it).
func (c *Catalog) Offered() []Option { return c.options }

// Lookup is the localizer of one offered language (a cookie's or a
// switch's choice); false if it is not offered.
func (c *Catalog) Lookup(tag string) (*Localizer, bool) {
	t, err := language.Parse(tag)
	if err != nil {
		return nil, false
	}
	for _, o := range c.offered {
		if o == t {
			return c.localizers[o], true
		}
	}
	return nil, false
}

// Choose picks the language of a request: the switch's choice when it
// names an offered language, else the best match of the Accept-Language
// header (q-values honoured; a region falls back to its language, es-MX
// to es, pt-PT to pt-BR), else the first offered.
func (c *Catalog) Choose(chosen, acceptLanguage string) *Localizer {
	if l, ok := c.Lookup(chosen); ok && chosen != "" {
		return l
	}
	prefs, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err == nil && len(prefs) > 0 {
		if _, i, conf := c.matcher.Match(prefs...); conf != language.No {
			return c.localizers[c.offered[i]]
		}
	}
	return c.localizers[c.offered[0]]
}

// English is the localizer of the console, which stays in English.
func (c *Catalog) English() *Localizer { return c.localizers[English] }

// Localizer translates into one language.
type Localizer struct {
	tag    language.Tag
	l      *i18n.Localizer
	p      *message.Printer
	pseudo bool
	plain  sync.Map // ID → its translation, for texts without placeholders
}

// Lang is the language's BCP 47 tag, for <html lang>.
func (l *Localizer) Lang() string {
	if l == nil {
		return English.String()
	}
	return l.tag.String()
}

// T translates a message whose id is its English text; data are its
// placeholders as name, value pairs ("Name", "Ada" for {{.Name}}).
// Without a localizer, or for a message a catalog lacks, the English.
func (l *Localizer) T(id ID, data ...any) string {
	if len(data) > 0 || l == nil {
		return l.localize(&i18n.Message{ID: string(id), Other: string(id)}, nil, data)
	}
	// A text without placeholders is the same every time: translated
	// once per language (a page has dozens; each translation runs a
	// template). The ids are the source's constants, so the cache is as
	// large as the catalog at most.
	if s, ok := l.plain.Load(id); ok {
		return s.(string)
	}
	s := l.localize(&i18n.Message{ID: string(id), Other: string(id)}, nil, nil)
	l.plain.Store(id, s)
	return s
}

// ID is a message's id: its English text as the source writes it. Only a
// constant converts to it without a word, so a value that came from
// outside (an address, a name) can never be run as a message's template;
// a runtime string becomes one only through Name, which never runs it.
type ID string

// Name is a name as a page shows it: the catalog's translation when the
// name is one of its messages (a default such as "your organisation"),
// else the name itself, never read as a template.
func (l *Localizer) Name(s string) string {
	if strings.Contains(s, "{{") {
		return s
	}
	// Not through T's cache: a name is no constant of the source.
	return l.localize(&i18n.Message{ID: s, Other: s}, nil, nil)
}

// N translates a message with plural forms: one and other are its English
// forms (other is its id), n picks the form by the language's plural rules
// and is the template's {{.Count}}, written as the language writes numbers.
func (l *Localizer) N(one, other ID, n int, data ...any) string {
	return l.localize(&i18n.Message{ID: string(other), One: string(one), Other: string(other)}, n, append([]any{"Count", l.Number(n)}, data...))
}

func (l *Localizer) localize(m *i18n.Message, count any, data []any) string {
	td := map[string]any{}
	for i := 0; i+1 < len(data); i += 2 {
		if k, ok := data[i].(string); ok {
			td[k] = data[i+1]
		}
	}
	cfg := &i18n.LocalizeConfig{DefaultMessage: m, TemplateData: td, PluralCount: count}
	loc := englishOnly()
	if l != nil {
		loc = l.l
	}
	s, err := loc.Localize(cfg)
	if err != nil && s == "" {
		// A template error in a catalog's text: the English rather than
		// nothing (the catalog test fails on such a text).
		s, _ = englishOnly().Localize(cfg)
	}
	return s
}

// englishOnly speaks the messages' own English (no catalog): a request
// without a localizer, and a catalog text that does not run. Made once;
// it is never changed.
var englishOnly = sync.OnceValue(func() *i18n.Localizer { return i18n.NewLocalizer(i18n.NewBundle(English)) })

// Number writes n as the language does (1,234 or 1.234).
func (l *Localizer) Number(n int) string {
	if l == nil {
		return message.NewPrinter(English).Sprint(number.Decimal(n))
	}
	return l.p.Sprint(number.Decimal(n))
}

// Date writes a day and time in the language: its month names and its
// order ("27 November 2026, 14:05").
func (l *Localizer) Date(t time.Time) string {
	month := l.T(ID(t.Month().String()))
	return l.T("{{.Month}} {{.Day}}, {{.Year}} at {{.Time}}", "Month", month, "Day", t.Day(), "Year", t.Year(), "Time", t.Format("15:04 MST"))
}

// Msg marks a text as a message for the catalogs where it is written down
// (in a handler) rather than translated (by the view that shows it).
func Msg(english ID) ID { return english }

// months lists the month names for the catalogs (Date translates them).
var _ = [...]ID{Msg("January"), Msg("February"), Msg("March"), Msg("April"), Msg("May"), Msg("June"),
	Msg("July"), Msg("August"), Msg("September"), Msg("October"), Msg("November"), Msg("December")}

type ctxKey struct{}

// With returns a context carrying a request's localizer.
func With(ctx context.Context, l *Localizer) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// From is the request's localizer (nil, which speaks English, if none).
func From(ctx context.Context) *Localizer {
	l, _ := ctx.Value(ctxKey{}).(*Localizer)
	return l
}

// Menu is the language switch of a page: the languages offered and the
// page to come back to after a choice.
type Menu struct {
	Options []Option
	Back    string // the page the switch reloads in the chosen language (a local path)
	// Form, when set, makes the switch post the page's own state again
	// (a page that answers a POST, inside an LMS's frame): a form per
	// language to Form.Action with Form.Fields and the language as
	// "lang".
	Form *MenuForm
	// Lookup is the localizer of an offered language (nil: none), for a
	// handler that re-renders its page in the language a form chose.
	Lookup func(tag string) (*Localizer, bool)
}

// MenuForm is a language switch that posts a page's own state again.
type MenuForm struct {
	Action string
	Fields map[string]string
}

type menuKey struct{}

// WithMenu returns a context carrying a page's language switch.
func WithMenu(ctx context.Context, m Menu) context.Context {
	return context.WithValue(ctx, menuKey{}, m)
}

// MenuFrom is the page's language switch (none: no switch is shown).
func MenuFrom(ctx context.Context) Menu {
	m, _ := ctx.Value(menuKey{}).(Menu)
	return m
}

// CatalogMessages are the messages of one language's catalog file, as
// written there (for the pseudo-language, and for the tests that look for
// English left on a page in another language).
func CatalogMessages(tag string) ([]*i18n.Message, error) {
	name := tag + ".yaml"
	buf, err := catalogFiles.ReadFile("catalog/" + name)
	if err != nil {
		return nil, fmt.Errorf("locale: %w", err)
	}
	mf, err := i18n.ParseMessageFileBytes(buf, name, map[string]i18n.UnmarshalFunc{"yaml": yaml.Unmarshal})
	if err != nil {
		return nil, fmt.Errorf("locale: catalog %s: %w", name, err)
	}
	return mf.Messages, nil
}
