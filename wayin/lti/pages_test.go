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

// The console's LTI page: a registration URL just made, each course with
// its roster (one waiting for the admin past the cap, with the count to
// confirm), each registered LMS with the actions its state allows, and
// the configured ones; and what an empty console says.
func TestConsolePage(t *testing.T) {
	admin := views.Page{Title: "LTI", CSRF: "tok", User: &views.User{Name: "Root", Email: "root@example.com", Admin: true}}
	d := consoleData{URL: "https://sso.example/lti/register?code=c", URLExpires: "2026-11-28 15:00 UTC", EmailDomains: "school.example", CreateAccounts: true,
		Notice: "Made a registration URL.",
		Courses: []consoleCourse{
			{Title: "Year 7 Media", LMS: "Springfield Moodle", Issuer: "https://lms.example", ClientID: "c1", ContextID: "7", LastLaunch: "2026-11-28 09:00 UTC",
				LaunchedBy: "t@school.example", LastRoster: "31 members, 31 admitted", LastRosterAt: "2026-11-28 09:00 UTC"},
			{Title: "Whole school", LMS: "Springfield Moodle", Issuer: "https://lms.example", ClientID: "c1", ContextID: "all", LastRoster: "1,400 members",
				LastRosterAt: "2026-11-28 09:05 UTC", Waiting: 1400, Cap: 500},
			{Title: "Not read yet", LMS: "Springfield Moodle", Issuer: "https://lms.example", ClientID: "c1", ContextID: "new"},
		},
		Registered: []consolePlatform{{Name: "Canvas", Issuer: "https://canvas.example", ClientID: "c2", RegisteredAt: "2026-11-27", RegisteredBy: "root@example.com"},
			{Name: "Old Canvas", Issuer: "https://old.example", ClientID: "c3", Disabled: true}},
		Configured: []consolePlatform{{Name: "Springfield Moodle", Issuer: "https://lms.example", ClientID: "c1"}},
	}
	doc := render(t, consolePage(admin, d))
	assert.Equal(t, "https://sso.example/lti/register?code=c", doc.Find("#registration-url").Text())
	assert.Contains(t, doc.Find(".roster-waiting").Text(), "1,400 people, more than the cap of 500")
	assert.Contains(t, doc.Text(), "Year 7 Media")
	assert.Contains(t, doc.Text(), "Springfield Moodle")
	assert.Equal(t, 1, doc.Find(`form[action="/admin/lti/platforms/disable"]`).Length(), "the launching LMS can be disabled")
	assert.Equal(t, 1, doc.Find(`form[action="/admin/lti/platforms/enable"]`).Length(), "the disabled one enabled")
	assert.Equal(t, 2, doc.Find(`form[action="/admin/lti/platforms/remove"]`).Length())
	assert.Equal(t, 1, doc.Find("#configured-lms li").Length())
	doc.Find(`form[method="post"]`).Each(func(i int, s *goquery.Selection) {
		assert.Equal(t, "tok", s.Find(`input[name="_csrf"]`).AttrOr("value", ""), "form %d carries the token", i)
	})

	empty := render(t, consolePage(admin, consoleData{Error: "No such course."}))
	assert.Contains(t, empty.Text(), "No LMS has registered itself yet.")
	assert.Equal(t, "None.", empty.Find("#no-configured").Text())
	assert.Equal(t, "No such course.", empty.Find("#admin-error").Text())
}
