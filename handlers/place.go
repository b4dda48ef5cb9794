package handlers

import (
	"errors"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/launch/waitline"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin"
)

// A launch whose turn did not come within platform.max_wait ends on the
// "too busy" page with Retry-After. The browser keeps the launch's place
// in the line (its arrival) in a sealed cookie, so that the person who
// comes back (the start page, the portal, the LMS again) takes that place
// rather than the back of the line (waitline.Line.Rejoin), on whichever
// instance they reach.

// placeCookie is the kept place's cookie ("__Host-" prefixed over https).
const placeCookie = "ssobridge_place"

// placeGrace is how long past its Retry-After a place is kept.
const placeGrace = 10 * time.Minute

// keptPlace is the place cookie's sealed payload.
type keptPlace struct {
	Account int64 `json:"a"`
	Since   int64 `json:"s"` // the launch's arrival, Unix ms
	Until   int64 `json:"u"` // kept until, Unix s
}

// keepPlace sets the place cookie for acct when err is a launch's turn
// that did not come within max_wait.
func (h *server) keepPlace(c echo.Context, acct store.Account, err error) {
	var tb *waitline.TooBusyError
	if !errors.As(err, &tb) || tb.Since.IsZero() {
		return
	}
	keep := tb.RetryAfter + placeGrace
	v, serr := h.places.SealJSON(placeCookie, keptPlace{Account: acct.ID, Since: tb.Since.UnixMilli(), Until: h.Now().Add(keep).Unix()})
	if serr != nil {
		return // plain fields: never fails
	}
	h.placeCookie().Set(c, v, keep)
}

// placeKept is the place acct's browser kept (zero: none, or not
// acct's, or past its time), and drops the cookie it came in: a place is
// taken once (a launch that again waits too long keeps it anew).
func (h *server) placeKept(c echo.Context, acct store.Account) time.Time {
	v, ok := h.placeCookie().Take(c)
	if !ok {
		return time.Time{}
	}
	var p keptPlace
	if h.places.OpenJSON(placeCookie, v, &p) != nil || p.Account != acct.ID || h.Now().Unix() > p.Until {
		return time.Time{}
	}
	return time.UnixMilli(p.Since)
}

// placeCookie is the place's cookie.
func (h *server) placeCookie() wayin.FlowCookie {
	return wayin.NewFlowCookie(placeCookie, "/", h.Sessions.Secure)
}
