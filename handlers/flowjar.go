package handlers

import (
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"
)

// flowJarMax is how many pending flows a browser keeps of one kind: two
// tabs (or an LMS page with two tool links) do not undo each other.
const flowJarMax = 4

// flowJar keeps a browser's pending sign-ins of one kind (SAML requests,
// LTI logins) in a cookie sealed with the session keys, from the request
// that starts one to the cross-site POST that finishes it.
type flowJar[F any] struct {
	sealer *cookieSealer // under a key of its own purpose
	name   string
	secure bool
	// partitioned: over https the cookie is partitioned by the top-level
	// site (CHIPS), so a flow that runs inside another site's frame (an
	// LMS showing the tool in an iframe) keeps its cookie where browsers
	// drop third-party cookies.
	partitioned bool
	ttl         time.Duration
	expires     func(F) time.Time
	now         func() time.Time
}

func newFlowJar[F any](cfg SessionConfig, purpose sealPurpose, name string, ttl time.Duration, now func() time.Time, expires func(F) time.Time) *flowJar[F] {
	// No age limit of the sealer's: each flow carries its expiry, which
	// write and the protocol apply with their own pages.
	c := newCookieSealer(purpose, cfg.keys(), cfg.previousKeys(), 0, now)
	if cfg.Secure {
		name = "__Host-" + name
	}
	return &flowJar[F]{sealer: c, name: name, secure: cfg.Secure, ttl: ttl, expires: expires, now: now}
}

// pendingFlow is a pending flow as the browser keeps it. Own: started by a
// request from the bridge's own pages or typed by the person, not by
// another site: another site's requests can push out only flows like
// theirs.
type pendingFlow[F any] struct {
	Flow F    `json:"f"`
	Own  bool `json:"own,omitempty"`
}

// ownRequest: the browser says the request came from the bridge's own
// pages or from the person (Fetch metadata); a browser that says nothing
// is taken at its word.
func ownRequest(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// read is the browser's pending flows.
func (j *flowJar[F]) read(c echo.Context) []pendingFlow[F] {
	ck, err := c.Cookie(j.name)
	if err != nil {
		return nil
	}
	var flows []pendingFlow[F]
	if j.sealer.openJSON(j.name, ck.Value, &flows) != nil {
		return nil
	}
	return flows
}

// take is the browser's pending flows for the answer that arrived; the
// ones answered (picked by answers) leave the browser at once: a flow is
// used once, whatever the answer's check finds.
func (j *flowJar[F]) take(c echo.Context, answers func(F) bool) ([]F, error) {
	flows := j.read(c)
	pending := make([]F, len(flows))
	rest := make([]pendingFlow[F], 0, len(flows))
	for i, f := range flows {
		pending[i] = f.Flow
		if !answers(f.Flow) {
			rest = append(rest, f)
		}
	}
	return pending, j.write(c, rest)
}

// write keeps the flows still in time in the browser, flowJarMax at most:
// past that the oldest started by another site go first, so requests from
// another site do not push out the person's own sign-in. None clears the
// cookie.
func (j *flowJar[F]) write(c echo.Context, flows []pendingFlow[F]) error {
	var keep []pendingFlow[F]
	now := j.now()
	for _, fl := range flows {
		if now.Before(j.expires(fl.Flow)) {
			keep = append(keep, fl)
		}
	}
	for len(keep) > flowJarMax {
		i := slices.IndexFunc(keep, func(p pendingFlow[F]) bool { return !p.Own })
		if i < 0 {
			i = 0 // all the person's own: the oldest
		}
		keep = slices.Delete(keep, i, i+1)
	}
	if len(keep) == 0 {
		c.SetCookie(j.cookie("", -1))
		return nil
	}
	enc, err := j.sealer.sealJSON(j.name, keep)
	if err != nil {
		return err
	}
	c.SetCookie(j.cookie(enc, int(j.ttl/time.Second)))
	return nil
}

// cookie: the flow is finished by a cross-site POST, which carries a
// cookie only with SameSite=None (and so Secure). Over plain http
// (development, on loopback) browsers refuse SameSite=None without
// Secure: Lax, which a same-site POST still carries.
func (j *flowJar[F]) cookie(value string, maxAge int) *http.Cookie {
	ss := http.SameSiteLaxMode
	if j.secure {
		ss = http.SameSiteNoneMode
	}
	return &http.Cookie{Name: j.name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, Secure: j.secure, SameSite: ss,
		Partitioned: j.partitioned && j.secure}
}
