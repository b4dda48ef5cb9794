package portal

import (
	"bytes"
	"context"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/views"
)

// The sample portal says it is a sample; its button posts to the bridge,
// which signs the token then (none is rendered into the page, where it
// would expire); its deep link is a /open link.
func TestDemoPage(t *testing.T) {
	p := views.Page{Title: "Sign in"}
	p.CSRF = "csrf-1"
	var buf bytes.Buffer
	require.NoError(t, demoPage(p, DemoPortal{Name: "Grace Hopper", Email: "g@example.com", Token: "jwt-1", DeepLink: "/open?return_to=%2Feditor"}).Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	assert.Contains(t, doc.Find("#demo-portal .pill").Text(), "Sample partner portal")
	form := doc.Find(`form[action="/demo/portal/open"]`)
	assert.Equal(t, "post", form.AttrOr("method", ""))
	assert.Equal(t, "csrf-1", form.Find(`input[name="_csrf"]`).AttrOr("value", ""))
	html, _ := doc.Html()
	assert.NotContains(t, html, "jwt-1", "no token in the page")
	assert.Equal(t, "/open?return_to=%2Feditor", doc.Find("#deep-link").AttrOr("href", ""))
	assert.Contains(t, doc.Find("#portal-user").Text(), "Grace Hopper")
}
