package lti

import (
	"context"
	"maps"
	"slices"
	"strconv"

	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/views"
)

// The texts of LTI's own pages, through the views' catalogs.
func t(ctx context.Context, id locale.ID, data ...any) string { return views.T(ctx, id, data...) }

// sortedKeys are a map's keys in order (a form's fields, stable).
func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// framedData is the page a launch framed in an LMS page gets: one button
// opens the editor in a new tab.
type framedData struct {
	LMS   string // the platform's name
	Token string // the sealed one-time continuation, posted by the button
}

// deepLinkData is the deep-linking page's state.
type deepLinkData struct {
	LMS      string
	Context  string // the sealed request, posted back
	Items    []DeepLinkItem
	CanPlace bool   // the LMS accepts the tool's links (ltiResourceLink)
	Chosen   string // the choice posted: "editor", "item-<i>", "path"
	Path     string // a path typed
	Title    string // a title typed
	Error    string // a refused path (in the person's language)
}

func (d deepLinkData) errors() []views.FieldError {
	if d.Error == "" {
		return nil
	}
	return []views.FieldError{{Field: "deep-link-path", Message: d.Error}}
}

// choiceValue is the radio value of the ith listed place.
func choiceValue(i int) string { return "item-" + strconv.Itoa(i) }

// deepLinkReturn posts a deep-linking answer back to the LMS.
type deepLinkReturn struct {
	LMS    string
	Action string // the request's deep_link_return_url
	JWT    string // the signed LtiDeepLinkingResponse
	Placed string // the title placed; "": cancelled
}

// configData is what an LMS's "add a tool" form asks for.
type configData struct {
	LoginURL, RedirectURI, TargetLinkURI, JWKSURL, DeepLinkExample string
	Platforms                                                      []string // the registered platforms' names
}

// registeredData is the end of a Dynamic Registration.
type registeredData struct{ LMS string }

// storageData is a page that keeps (put) or reads (get) the browser's key
// in the LMS's frame.
type storageData struct {
	Target, Origin, Key string
	Value               string            // put: the browser's key
	Next                string            // put: the LMS's authorization URL; get: where the form posts
	Fields              map[string]string // get: the launch's fields
}

// consoleData is the console's LTI page.
type consoleData struct {
	Courses                []consoleCourse
	Configured, Registered []consolePlatform
	URL, URLExpires        string // a registration URL just made
	EmailDomains           string // the form's
	CreateAccounts         bool
	Notice, Error          string
}

// consolePlatform is an LMS as the console lists it.
type consolePlatform struct {
	Name, Issuer, ClientID, Deployment, RegisteredAt, RegisteredBy string
	Disabled                                                       bool
}

// consoleCourse is a course an instructor launched from, with its last
// roster read.
type consoleCourse struct {
	Title, LMS, Issuer, ClientID, ContextID string
	LastLaunch, LaunchedBy                  string
	LastRoster, LastRosterAt                string // "" if never read
	// Waiting is how many people the last read found past the cap (0:
	// none), Cap the platform's cap.
	Waiting, Cap int
}

// Samples are LTI's own pages with fixed data, for the page gallery's
// accessibility and language tests; l writes the texts a handler gives
// a page in its language.
func (Module) Samples(l *locale.Localizer) []views.Sample {
	return []views.Sample{
		{Name: "LTI framed page", View: framedPage(views.Page{Title: l.T("Video editor")}, framedData{LMS: "Springfield Canvas", Token: "sealed"})},
		{Name: "LTI tool settings", View: configPage(views.Page{Title: l.T("LTI 1.3 tool settings")}, configData{LoginURL: "https://bridge.example/lti/login",
			RedirectURI: "https://bridge.example/lti/launch", TargetLinkURI: "https://bridge.example/lti/launch", JWKSURL: "https://bridge.example/lti/jwks",
			DeepLinkExample: "https://bridge.example/open?return_to=/editor/projects"})},
		{Name: "LTI deep linking", View: deepLinkPage(views.Page{Title: l.T("Place the video editor in your course"), CSRF: "token"},
			deepLinkData{LMS: "Springfield Canvas", Context: "sealed", CanPlace: true, Items: []DeepLinkItem{{Title: "Make a trailer", Path: "/editor/templates/trailer"}}})},
		{Name: "LTI deep linking, a refused path", View: deepLinkPage(views.Page{Title: l.T("Place the video editor in your course"), CSRF: "token"},
			deepLinkData{LMS: "Springfield Canvas", Context: "sealed", CanPlace: true, Chosen: "path", Path: "//elsewhere",
				Error: l.T("This is not a path of the editor: it must start with a single /, such as /editor/projects/42, without a host, a backslash or dot segments.")})},
		{Name: "LTI deep linking, nothing to offer", View: deepLinkPage(views.Page{Title: l.T("Place the video editor in your course"), CSRF: "token"},
			deepLinkData{LMS: "Springfield Canvas", Context: "sealed"})},
		{Name: "LTI deep linking, back to the LMS", View: deepLinkReturnPage(views.Page{Title: l.T("Back to the course")},
			deepLinkReturn{LMS: "Springfield Canvas", Action: "https://canvas.example/deep-link-return", JWT: "signed", Placed: "Make a trailer"})},
		{Name: "LTI deep linking, cancelled", View: deepLinkReturnPage(views.Page{Title: l.T("Back to the course")},
			deepLinkReturn{LMS: "Springfield Canvas", Action: "https://canvas.example/deep-link-return", JWT: "signed"})},
		{Name: "LTI registered", View: registeredPage(views.Page{Title: l.T("The video editor is registered")}, registeredData{LMS: "Springfield Canvas"})},
		{Name: "LTI platform storage, login", View: storageLoginPage(views.Page{Title: l.T("Opening the video editor")},
			storageData{Target: "_parent", Origin: "https://canvas.example", Key: "k", Value: "v", Next: "https://canvas.example/auth"})},
		{Name: "LTI platform storage, launch", View: storageLaunchPage(views.Page{Title: l.T("Opening the video editor")},
			storageData{Target: "_parent", Origin: "https://canvas.example", Key: "k", Next: "/lti/launch", Fields: map[string]string{"id_token": "t", "state": "s"}})},
	}
}
