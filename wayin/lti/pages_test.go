package lti

import (
	"bytes"
	"context"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/views"
)

func render(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, c.Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	return doc
}

// LTI's own pages: the framed launch's button opens the editor in a tab
// of its own; the tool settings list the registered LMSs.
func TestPages(t *testing.T) {
	doc := render(t, framedPage(views.Page{Title: "Video editor"}, framedData{LMS: "Springfield Canvas", Token: "sealed"}))
	form := doc.Find("#lti-framed form")
	assert.Equal(t, "/lti/continue", form.AttrOr("action", ""))
	assert.Equal(t, "_blank", form.AttrOr("target", ""), "the editor opens in a tab of its own")
	assert.Equal(t, "sealed", form.Find(`input[name="continuation"]`).AttrOr("value", ""))
	assert.Contains(t, doc.Text(), "Launched from Springfield Canvas")

	doc = render(t, configPage(views.Page{Title: "LTI 1.3 tool settings"}, configData{LoginURL: "https://sso.example/lti/login", RedirectURI: "https://sso.example/lti/launch",
		TargetLinkURI: "https://sso.example/lti/launch", JWKSURL: "https://sso.example/lti/jwks", Platforms: []string{"A", "B", "C"}}))
	assert.Equal(t, "https://sso.example/lti/jwks", doc.Find("#lti-jwks-url").First().Text())
	assert.Contains(t, doc.Text(), "Registered: A, B and C.")
}

// The no-email refusal lists each LMS's setting, names the LMS and shows
// the reason to whoever set the LMS up.
func TestNoEmailRefusal(t *testing.T) {
	r := page(ErrNoEmail, "Springfield Moodle")
	r.Info.Status = r.Status
	doc := render(t, views.Refused(views.Page{Title: "Error"}, r.Info))
	assert.Equal(t, "lti-no-email", doc.Find("#error-page").AttrOr("data-class", ""))
	assert.Equal(t, 5, doc.Find("#refusal-items li").Length(), "Canvas, Moodle, Schoology, Blackboard, Brightspace")
	assert.Equal(t, "Moodle", doc.Find("#refusal-items li strong").Eq(1).Text())
	assert.Contains(t, doc.Text(), "Springfield Moodle sent none")
	assert.Equal(t, ErrNoEmail.Error(), doc.Find("#error-detail").Text(), "the reason, for whoever set the LMS up")
}

// Every sample renders, in English and in each catalog's language.
func TestSamplesRender(t *testing.T) {
	c, err := locale.New(nil)
	require.NoError(t, err)
	for _, o := range c.Offered() {
		l, ok := c.Lookup(o.Tag)
		require.True(t, ok)
		for _, s := range (Module{}).Samples(l) {
			var buf bytes.Buffer
			require.NoError(t, s.View.Render(locale.With(context.Background(), l), &buf), s.Name)
			assert.Contains(t, buf.String(), "<main", s.Name)
		}
	}
}
