package lti

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// LTI client-side postMessage storage: when a login carries
// lti_storage_target, the login page asks the platform's frame to keep
// the browser's key (lti.put_data) as well as setting the flow cookie; a
// launch that comes without the cookie (a browser that drops even
// partitioned cookies inside the LMS's page) gets a page that reads the
// key back (lti.get_data) and posts the launch again with it. The
// platform answers only the tool's origin, and the tool only the
// platform's: both check the other's origin.

// storedKeyField carries the browser's key read from the platform's
// storage on the launch posted again.
const storedKeyField = "lti_storage_value"

// storageScript runs both pages (static/lti-storage.js).
const storageScript = "/static/lti-storage.js"

// platformStorage is where the platform keeps the browser's key.
type platformStorage struct {
	Target string `json:"t"` // lti_storage_target: "_parent" or a frame's name
	Key    string `json:"k"`
	Origin string `json:"o"` // the platform's origin, the messages' target
}

// storedIn is the storage a launch's state names (nil: none, or a state
// that does not open).
func (w *Way) storedIn(state string) *platformStorage {
	var h heldFlow
	if w.sealer.OpenJSON("state", state, &h) != nil {
		return nil
	}
	return h.Storage
}

// storageLogin answers a login with platform storage: a page, shown in the
// platform's frame, that keeps the browser's key there and then goes on
// to the platform's authorization endpoint (at once without JavaScript,
// through its link).
func (w *Way) storageLogin(c echo.Context, s *platformStorage, key, next, iss string) error {
	w.storagePage(c, s, iss)
	return w.k.Render(c, http.StatusOK, locale.Msg("Opening the video editor"), func(p views.Page) templ.Component {
		p.Script = storageScript
		return storageLoginPage(p, storageData{Target: s.Target, Origin: s.Origin, Key: s.Key, Value: key, Next: next})
	})
}

// storageLaunch answers a launch without the flow cookie whose login kept
// the browser's key in the platform: a page that reads it and posts the
// launch (its id_token and state) again with it.
func (w *Way) storageLaunch(c echo.Context, s *platformStorage, form url.Values) error {
	w.storagePage(c, s, "")
	fields := map[string]string{"id_token": form.Get("id_token"), "state": form.Get("state")}
	return w.k.Render(c, http.StatusOK, locale.Msg("Opening the video editor"), func(p views.Page) templ.Component {
		p.Script = storageScript
		return storageLaunchPage(p, storageData{Target: s.Target, Origin: s.Origin, Key: s.Key, Next: LaunchPath, Fields: fields})
	})
}

// storagePage lets the page run its script and be shown in the platform's
// frame (its origins and the storage's).
func (w *Way) storagePage(c echo.Context, s *platformStorage, iss string) {
	wayin.NoStore(c)
	noSwitch(c)
	origins := []string{s.Origin}
	for _, p := range w.LMS.Platforms() {
		if iss != "" && p.Issuer != iss || iss == "" && Origin(p.AuthURL) != s.Origin {
			continue
		}
		for _, o := range p.frameOrigins() {
			if !slices.Contains(origins, o) {
				origins = append(origins, o)
			}
		}
	}
	frameable(c, origins)
	ownScript(c)
}

// frameOrigins are the origins whose pages may frame the platform's
// launches: its frame_origins, else its authorization endpoint's and its
// issuer's.
func (p Platform) frameOrigins() []string {
	if len(p.FrameOrigins) > 0 {
		return p.FrameOrigins
	}
	var out []string
	for _, raw := range []string{p.AuthURL, p.Issuer} {
		if o := Origin(raw); o != "" && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}
