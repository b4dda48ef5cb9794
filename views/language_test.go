package views_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/internal/viewgallery"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/wayin"
)

func renderIn(t *testing.T, l *locale.Localizer, p viewgallery.Page) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, p.View.Render(locale.With(context.Background(), l), &b), p.Name)
	return b.String()
}

// TestPseudoLanguageLeavesNoEnglish renders every page a person sees in
// the pseudo-language: a word outside the catalog's marked messages is
// text that skipped the catalog. The admin's reading of an error page is
// left out: its part for the admin is the console's, in English.
func TestPseudoLanguageLeavesNoEnglish(t *testing.T) {
	c, err := locale.New([]string{"en-XA"})
	require.NoError(t, err)
	pseudo, ok := c.Lookup("en-XA")
	require.True(t, ok)
	checked := 0
	for _, p := range viewgallery.Pages(pseudo, wayin.Wordings(app.Modules()), wayin.Samples(app.Modules(), pseudo)) {
		if p.Admin {
			continue
		}
		doc := renderIn(t, pseudo, p)
		assert.Contains(t, doc, `<html lang="en-XA">`, p.Name)
		left, err := viewgallery.EnglishLeft(doc)
		require.NoError(t, err)
		assert.Empty(t, left, "%s: text that did not come from the catalog", p.Name)
		checked++
	}
	t.Logf("%d pages in the pseudo-language", checked)
	assert.Greater(t, checked, 70)
}

// TestEnglishLeftFindsTextOutsideTheCatalog: the pseudo-language check
// sees a sentence written into a page, in its text and in a label.
func TestEnglishLeftFindsTextOutsideTheCatalog(t *testing.T) {
	for _, doc := range []string{
		`<html lang="en-XA"><body><p>⟦Ĥéļļö⟧ Welcome back</p></body></html>`,
		`<html lang="en-XA"><body><nav aria-label="Account"></nav></body></html>`,
		`<html lang="en-XA"><body><noscript><p>Reloads every 5 seconds</p></noscript></body></html>`,
	} {
		left, err := viewgallery.EnglishLeft(doc)
		require.NoError(t, err)
		assert.NotEmpty(t, left, doc)
	}
	left, err := viewgallery.EnglishLeft(`<html lang="en-XA"><body><p>⟦Ĥéļļö, ⟧Bob Builder</p><code>platform.base_url</code><a lang="de">Deutsch</a></body></html>`)
	require.NoError(t, err)
	assert.Empty(t, left, "data, code and other languages' names are not English left behind")
}

// TestEveryLanguageLeavesNoEnglishSentence renders every page a person
// sees in each language: no English message of the catalog (one its
// translation does not say the same way) is left on it, and <html lang>
// names the language.
func TestEveryLanguageLeavesNoEnglishSentence(t *testing.T) {
	c, err := locale.New(nil)
	require.NoError(t, err)
	for _, o := range c.Offered()[1:] {
		t.Run(o.Tag, func(t *testing.T) {
			l, ok := c.Lookup(o.Tag)
			require.True(t, ok)
			english, err := viewgallery.NewEnglish(o.Tag)
			require.NoError(t, err)
			for _, p := range viewgallery.Pages(l, wayin.Wordings(app.Modules()), wayin.Samples(app.Modules(), l)) {
				if p.Admin {
					continue
				}
				doc := renderIn(t, l, p)
				assert.Contains(t, doc, `<html lang="`+o.Tag+`">`, p.Name)
				left, err := english.Left(doc)
				require.NoError(t, err)
				assert.Empty(t, left, "%s in %s: English messages left", p.Name, o.Tag)
			}
		})
	}
}
