package portal

import (
	"context"

	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/views"
)

// The texts of the portal's own page, through the views' catalogs.
func t(ctx context.Context, id locale.ID, data ...any) string { return views.T(ctx, id, data...) }

// DemoPortal is the sample partner portal of the embedded demo.
type DemoPortal struct {
	Name, Email string // the portal's signed-in user
	Token       string // a handoff token, signed when the button is pressed (never rendered)
	DeepLink    string // a /open link to an editor path
}

// Samples are the portal's own page with fixed data, for the page
// gallery's accessibility and language tests.
func (Module) Samples(l *locale.Localizer) []views.Sample {
	return []views.Sample{{Name: "sample partner portal", View: demoPage(views.Page{Title: l.T("Sample partner portal"), CSRF: "token"},
		DemoPortal{Name: "Grace Hopper", Email: "g@example.com", Token: "t", DeepLink: "/open?return_to=%2Feditor"})}}
}
