package wayin

import (
	"errors"
	"net/url"
	"slices"
	"time"

	"github.com/labstack/echo/v4"
)

// Jar keeps a browser's pending sign-ins of one way in (a SAML request,
// an LTI login) in a sealed cookie between the start and the answer,
// which arrives as a cross-site POST. It keeps a few, so two tabs do not
// undo each other; each is used once.
type Jar[F any] struct {
	sealer  Sealer
	cookie  FlowCookie
	ttl     time.Duration
	expires func(F) time.Time
	now     func() time.Time
}

// JarMax is how many pending sign-ins a browser keeps; past it, the
// oldest of those another site started goes first (then the oldest).
const JarMax = 4

// NewJar is the jar of the cookie name (__Host- on https), sealed for
// purpose; a flow lives ttl at most and ends at expires(flow).
// Partitioned keeps it in the frame of the site that frames the bridge
// (CHIPS), where third-party cookies are dropped.
func NewJar[F any](k Flows, purpose, name string, ttl time.Duration, expires func(F) time.Time, partitioned bool) *Jar[F] {
	// The flow is finished by a cross-site POST, which carries a cookie
	// only with SameSite=None.
	return &Jar[F]{sealer: k.Sealer(purpose), cookie: NewFlowCookie(name, "/", k.Secure()).CrossSite(partitioned), ttl: ttl, expires: expires, now: k.Now}
}

// pending is a flow with where it started: Own marks one the person
// started on the bridge's own page (kept first when the jar is full).
type pending[F any] struct {
	Flow F    `json:"f"`
	Own  bool `json:"own,omitempty"`
}

func (j *Jar[F]) read(c echo.Context) []pending[F] {
	v, ok := j.cookie.Value(c)
	if !ok {
		return nil
	}
	var flows []pending[F]
	if j.sealer.OpenJSON(j.cookie.Name(), v, &flows) != nil {
		return nil
	}
	return flows
}

// Add keeps f among the browser's pending flows.
func (j *Jar[F]) Add(c echo.Context, f F) error {
	return j.write(c, append(j.read(c), pending[F]{Flow: f, Own: ownRequest(c.Request())}))
}

// Take returns every pending flow of this browser (the answer is checked
// against them) and removes those answers matches: used once, whatever
// the check says.
func (j *Jar[F]) Take(c echo.Context, answers func(F) bool) ([]F, error) {
	flows := j.read(c)
	all := make([]F, len(flows))
	rest := make([]pending[F], 0, len(flows))
	for i, f := range flows {
		all[i] = f.Flow
		if !answers(f.Flow) {
			rest = append(rest, f)
		}
	}
	return all, j.write(c, rest)
}

// ErrForm: a posted answer whose form could not be read.
var ErrForm = errors.New("the form could not be read")

// TakePosted reads the answer a platform posted (its body only, never the
// query string) and takes the flow it names: the one whose key is the
// form's field. It returns every pending flow of this browser (the
// answer is checked against them) and the form.
func (j *Jar[F]) TakePosted(c echo.Context, field string, key func(F) string) ([]F, url.Values, error) {
	if err := c.Request().ParseForm(); err != nil {
		return nil, nil, ErrForm
	}
	form := c.Request().PostForm
	v := form.Get(field)
	flows, err := j.Take(c, func(f F) bool { return key(f) == v })
	return flows, form, err
}

func (j *Jar[F]) write(c echo.Context, flows []pending[F]) error {
	var keep []pending[F]
	now := j.now()
	for _, fl := range flows {
		if now.Before(j.expires(fl.Flow)) {
			keep = append(keep, fl)
		}
	}
	for len(keep) > JarMax {
		i := slices.IndexFunc(keep, func(p pending[F]) bool { return !p.Own })
		if i < 0 {
			i = 0 // all the person's own: the oldest
		}
		keep = slices.Delete(keep, i, i+1)
	}
	if len(keep) == 0 {
		j.cookie.Clear(c)
		return nil
	}
	enc, err := j.sealer.SealJSON(j.cookie.Name(), keep)
	if err != nil {
		return err
	}
	j.cookie.Set(c, enc, j.ttl)
	return nil
}
