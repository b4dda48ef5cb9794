package wayin

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// FlowCookie is a cookie that carries one step of a flow to a later
// request of the same browser (an IdP sign-in's state, an arrival's hop,
// a kept place in line, an LMS login's browser key, a jar of pending
// sign-ins): one value, HttpOnly, never read by a page. On https it is
// Secure and named __Host- (so path /, no domain: no other host sets or
// reads it).
type FlowCookie struct {
	name, path string
	secure     bool
	// crossSite: the flow's next step is another site's POST or happens
	// inside another site's frame (SameSite=None, partitioned as CHIPS
	// when asked); plain http keeps Lax, as browsers refuse None without
	// Secure (development, on loopback).
	crossSite, partitioned bool
}

// NewFlowCookie is the cookie name on path (on https: __Host-name on /),
// SameSite=Lax: sent on the browser's own navigations, never on another
// site's requests.
func NewFlowCookie(name, path string, secure bool) FlowCookie {
	if secure {
		name, path = "__Host-"+name, "/"
	}
	return FlowCookie{name: name, path: path, secure: secure}
}

// CrossSite is f sent on another site's POST too (SameSite=None on
// https), partitioned (CHIPS) when partitioned: kept inside the frame of
// the site that frames the bridge, where third-party cookies are dropped.
func (f FlowCookie) CrossSite(partitioned bool) FlowCookie {
	f.crossSite, f.partitioned = true, partitioned
	return f
}

// Name is the cookie's name as the browser holds it.
func (f FlowCookie) Name() string { return f.name }

// Cookie is f holding value for maxAge (negative: deleted).
func (f FlowCookie) Cookie(value string, maxAge time.Duration) *http.Cookie {
	ss := http.SameSiteLaxMode
	if f.crossSite && f.secure {
		ss = http.SameSiteNoneMode
	}
	age := int(maxAge / time.Second)
	if maxAge < 0 {
		age = -1
	}
	return &http.Cookie{Name: f.name, Value: value, Path: f.path, MaxAge: age, HttpOnly: true, Secure: f.secure,
		SameSite: ss, Partitioned: f.partitioned && f.crossSite && f.secure}
}

// Set keeps value in the browser for ttl.
func (f FlowCookie) Set(c echo.Context, value string, ttl time.Duration) {
	c.SetCookie(f.Cookie(value, ttl))
}

// Clear deletes the cookie.
func (f FlowCookie) Clear(c echo.Context) { c.SetCookie(f.Cookie("", -1)) }

// Value is the value the request carries ("", false: none).
func (f FlowCookie) Value(c echo.Context) (string, bool) {
	ck, err := c.Cookie(f.name)
	if err != nil {
		return "", false
	}
	return ck.Value, true
}

// Take is the value the request carries, deleting the cookie: a step used
// once, whatever comes of it.
func (f FlowCookie) Take(c echo.Context) (string, bool) {
	v, ok := f.Value(c)
	if ok {
		f.Clear(c)
	}
	return v, ok
}
