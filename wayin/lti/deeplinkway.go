package lti

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/localpath"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// DeepLinkPath is where the deep-linking page posts the instructor's
// choice (from the bridge's own page inside the LMS's frame).
const DeepLinkPath = "/lti/deep-link"

// DeepLinkTTL is how long an instructor may take to choose.
const DeepLinkTTL = 30 * time.Minute

// deepLinkKind spends each deep-linking request once (Kit.UseOnce).
const deepLinkKind = "lti-deep-link"

// maxItemTitle bounds a placed link's title.
const maxItemTitle = 200

// ErrNotInstructor: a deep-linking request from someone whose roles do not
// let them place content (a learner): 403.
var ErrNotInstructor = wayin.NewRefusal(views.RefusedDenied, "lti: only an instructor may place the tool in a course (a deep-linking request from a learner)")

// deepLinkRequest is a deep-linking request as the page carries it,
// sealed: what the answer needs, and the frame it may be shown in.
type deepLinkRequest struct {
	ID           string    `json:"id"` // spent once
	Issuer       string    `json:"i"`
	ClientID     string    `json:"c"`
	DeploymentID string    `json:"d"`
	ReturnURL    string    `json:"r"`
	Data         string    `json:"a,omitempty"`
	Accepts      bool      `json:"k"`
	LMS          string    `json:"l"`
	Frame        []string  `json:"f,omitempty"`
	Expires      time.Time `json:"e"`
}

// deepLinkPage answers a verified deep-linking request: a learner's is
// refused; an instructor's opens the page to choose what to place.
func (w *Way) deepLinkPage(c echo.Context, id Identity) error {
	if !MayPlace(id.Roles) && !id.Admin {
		r := page(ErrNotInstructor, id.Platform.Name)
		r.Info.WayBack = backToCourse(id.ReturnURL)
		noSwitch(c)
		return w.k.Refuse(c, "LTI deep linking refused", refusedSource(id.Platform.Name), id.Email, r)
	}
	dl := id.DeepLinking
	req := deepLinkRequest{ID: randid.Token(16), Issuer: id.Platform.Issuer,
		ClientID: id.Platform.ClientID, DeploymentID: id.DeploymentID, ReturnURL: dl.ReturnURL, Data: dl.Data,
		Accepts: dl.Accepts(ResourceLinkType), LMS: id.Platform.Name, Frame: id.FrameAncestors(), Expires: w.k.Now().Add(DeepLinkTTL)}
	sealed, err := w.sealer.SealJSON("deep-link", req)
	if err != nil {
		return err
	}
	return w.renderDeepLink(c, http.StatusOK, req, deepLinkData{Context: sealed})
}

// renderDeepLink answers the choosing page, framable as a framed launch's.
func (w *Way) renderDeepLink(c echo.Context, status int, req deepLinkRequest, d deepLinkData) error {
	d.LMS, d.CanPlace = req.LMS, req.Accepts
	d.Items = w.items(req)
	wayin.NoStore(c)
	frameable(c, req.Frame)
	rePostSwitch(c, DeepLinkPath, map[string]string{"context": d.Context})
	return w.k.Render(c, status, locale.Msg("Place the video editor in your course"), func(p views.Page) templ.Component {
		return deepLinkPage(p, d)
	})
}

// items are the places the request's platform lists (deep_link_items).
func (w *Way) items(req deepLinkRequest) []DeepLinkItem {
	for _, p := range w.LMS.Platforms() {
		if p.Issuer == req.Issuer && p.ClientID == req.ClientID {
			return p.DeepLinkItems
		}
	}
	return nil
}

// deepLink is POST /lti/deep-link: the instructor's choice, answered by
// a signed LtiDeepLinkingResponse that the page posts back to the LMS. A
// path that is refused shows the page again; the request is spent only
// by the answer.
func (w *Way) deepLink(c echo.Context) error {
	var req deepLinkRequest
	if err := w.sealer.OpenJSON("deep-link", c.Request().PostFormValue("context"), &req); err != nil {
		return w.refused(c, fmt.Errorf("%w: the deep-linking page's request does not open", ErrBadState), "")
	}
	if !w.k.Now().Before(req.Expires) {
		return w.refused(c, ErrFlowExpired, req.LMS)
	}
	w.postedLanguage(c)
	if switching(c) {
		// The page again, in the language chosen: nothing is placed.
		return w.renderDeepLink(c, http.StatusOK, req, deepLinkData{Context: c.Request().PostFormValue("context")})
	}
	l := locale.From(c.Request().Context())
	form := c.Request().PostForm
	answer := DeepLinkAnswer{Issuer: req.Issuer, ClientID: req.ClientID, DeploymentID: req.DeploymentID, Data: req.Data}
	placed := ""
	if form.Get("cancel") == "" && req.Accepts {
		title, path := strings.TrimSpace(form.Get("title")), ""
		choice := form.Get("choice")
		again := deepLinkData{Context: form.Get("context"), Chosen: choice, Path: form.Get("path"), Title: form.Get("title")}
		switch items := w.items(req); {
		case choice == "editor" || choice == "":
			title = cmp.Or(title, l.T("Video editor"))
		case strings.HasPrefix(choice, "item-"):
			i, err := strconv.Atoi(strings.TrimPrefix(choice, "item-"))
			if err != nil || i < 0 || i >= len(items) {
				again.Error = l.T("Choose one of the places listed.")
				return w.renderDeepLink(c, http.StatusBadRequest, req, again)
			}
			path, title = items[i].Path, cmp.Or(title, items[i].Title)
		case choice == "path":
			path = strings.TrimSpace(form.Get("path"))
			if msg := checkItemPath(l, path); msg != "" {
				again.Error = msg
				return w.renderDeepLink(c, http.StatusBadRequest, req, again)
			}
			title = cmp.Or(title, l.T("Video editor"))
		default:
			again.Error = l.T("Choose one of the places listed.")
			return w.renderDeepLink(c, http.StatusBadRequest, req, again)
		}
		if utf8.RuneCountInString(title) > maxItemTitle {
			again.Error = l.N("A title is at most {{.Count}} character.", "A title is at most {{.Count}} characters.", maxItemTitle)
			return w.renderDeepLink(c, http.StatusBadRequest, req, again)
		}
		answer.Items = []ContentItem{{Title: title, URL: ItemURL(w.k.BaseURL(c), path)}}
		placed = title
	}
	switch err := w.k.UseOnce(c.Request().Context(), deepLinkKind, req.ID, req.Expires); {
	case errors.Is(err, store.ErrUsed):
		return w.refused(c, fmt.Errorf("%w: this deep-linking request was answered already", ErrReplayed), req.LMS)
	case err != nil:
		return err
	}
	jwt, err := w.Key.SignDeepLinkResponse(answer, w.k.Now())
	if err != nil {
		return err
	}
	wayin.NoStore(c)
	frameable(c, req.Frame)
	ownScript(c)
	hd := c.Response().Header()
	hd["Content-Security-Policy"] = []string{formAction.ReplaceAllString(hd.Get("Content-Security-Policy"), "form-action $1 "+Origin(req.ReturnURL)+";")}
	return w.k.Render(c, http.StatusOK, locale.Msg("Back to the course"), func(p views.Page) templ.Component {
		p.Script = "/static/autopost.js"
		return deepLinkReturnPage(p, deepLinkReturn{LMS: req.LMS, Action: req.ReturnURL, JWT: jwt, Placed: placed})
	})
}

var formAction = regexp.MustCompile(`form-action ([^;]*);`)

// checkItemPath holds a typed path to the rule of /open's return_to: a
// path of the editor's site that stays there however it is read; "" when
// it passes, else why not, in the person's language.
func checkItemPath(l *locale.Localizer, path string) string {
	switch {
	case path == "":
		return l.T("Type the path of a place in the editor, such as /editor/projects/42.")
	case len(path) > localpath.MaxReturnTo:
		return l.N("A path is at most {{.Count}} character.", "A path is at most {{.Count}} characters.", localpath.MaxReturnTo)
	case localpath.CheckReturnTo(path) != nil:
		return l.T("This is not a path of the editor: it must start with a single /, such as /editor/projects/42, without a host, a backslash or dot segments.")
	}
	return ""
}

// ownScript lets the page run the bridge's own scripts (script-src
// 'self'): the pages whose script talks to the LMS or posts its answer.
func ownScript(c echo.Context) {
	hd := c.Response().Header()
	hd["Content-Security-Policy"] = []string{strings.Replace(hd.Get("Content-Security-Policy"), "default-src 'none';", "default-src 'none'; script-src 'self';", 1)}
}

// frameable lets the origins frame the page (frame-ancestors), as a
// framed launch's page: none given, it stays unframable.
func frameable(c echo.Context, origins []string) {
	if len(origins) == 0 {
		return
	}
	hd := c.Response().Header()
	hd["Content-Security-Policy"] = []string{strings.Replace(hd.Get("Content-Security-Policy"), "frame-ancestors 'none'", "frame-ancestors "+strings.Join(origins, " "), 1)}
	delete(hd, "X-Frame-Options") // frame-ancestors says who may frame it
}
