// Package wayintest stands in for the bridge a way in is mounted on, so
// that a way is tested in its own package: a Kit that records what the
// way hands over (admissions, arrivals, refusals, console actions) and
// answers as the bridge would in outline, with real sealing, and a server
// the way's routes are mounted on, whose error handler renders a
// refusal's page as the bridge's does.
package wayintest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/internal/seal"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// Arrival is an account signed in by a way, with where it goes on.
type Arrival struct {
	Account store.Account
	Landing wayin.Landing
}

// Refusal is a refusal a way recorded through the Kit.
type Refusal struct {
	Msg, Source, Email string
	Refusal            *wayin.Refusal
}

// Kit is a wayin.Kit for tests. Its zero value is not ready: use NewKit.
type Kit struct {
	// HTTPS: the bridge is on https (cookies Secure, __Host- names).
	HTTPS bool
	// Clock is the bridge's clock (time.Now when nil).
	Clock func() time.Time
	// Decide is the admission (nil: every arrival is admitted as account
	// 7 with the arrival's email and names).
	Decide func(a signin.Arrival) (store.Account, error)
	// Admin: the signed-in person is a partner admin (console pages).
	Admin bool

	mu       sync.Mutex
	admitted []signin.Arrival
	arrived  []Arrival
	refused  []Refusal
	audited  []string
	signedIn *store.Account
	used     map[string]time.Time
	keys     seal.Keys
}

// NewKit is a Kit for a way on plain http.
func NewKit() *Kit {
	keys := seal.Keys{Hash: make([]byte, 32), Block: make([]byte, 32)}
	_, _ = rand.Read(keys.Hash) // crypto/rand.Read never fails (Go 1.24+)
	_, _ = rand.Read(keys.Block)
	return &Kit{used: map[string]time.Time{}, keys: keys}
}

var _ wayin.Kit = (*Kit)(nil)

// Admitted lists the arrivals handed to Admit.
func (k *Kit) Admitted() []signin.Arrival {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]signin.Arrival(nil), k.admitted...)
}

// Arrived lists the accounts signed in through Arrive (and Resume).
func (k *Kit) Arrived() []Arrival {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]Arrival(nil), k.arrived...)
}

// Refused lists the refusals recorded.
func (k *Kit) Refused() []Refusal {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]Refusal(nil), k.refused...)
}

// Audited lists the console actions recorded.
func (k *Kit) Audited() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.audited...)
}

// SignInAs makes acct the account signed in in every browser.
func (k *Kit) SignInAs(acct store.Account) { k.mu.Lock(); defer k.mu.Unlock(); k.signedIn = &acct }

func (k *Kit) decide(a signin.Arrival) (store.Account, error) {
	if k.Decide != nil {
		return k.Decide(a)
	}
	return store.Account{ID: 7, Email: a.Email, FirstName: a.Names.Given, LastName: a.Names.Family}, nil
}

// Enter records a, decides it and, admitted, arrives as l says: a 303
// to the editor's launch or to the landing's page, as the bridge answers
// once signed in; with l.Hold, the arrival sealed for Resume (10
// minutes).
func (k *Kit) Enter(c echo.Context, a signin.Arrival, l wayin.Landing) (string, error) {
	k.mu.Lock()
	k.admitted = append(k.admitted, a)
	k.mu.Unlock()
	acct, err := k.decide(a)
	if err != nil {
		return "", err
	}
	if l.Hold {
		return k.Sealer("hold").SealJSON("hold", held{acct, l, k.Now().Add(10 * time.Minute)})
	}
	return "", k.arrive(c, acct, l)
}

// Admissible decides a, recording nothing.
func (k *Kit) Admissible(_ echo.Context, a signin.Arrival) error {
	_, err := k.decide(a)
	return err
}

// arrive records the arrival and answers as the bridge does once signed
// in: a 303 to the editor's launch or to the landing's page.
func (k *Kit) arrive(c echo.Context, acct store.Account, l wayin.Landing) error {
	k.mu.Lock()
	k.arrived = append(k.arrived, Arrival{acct, l})
	k.signedIn = &acct
	k.mu.Unlock()
	to := l.Next
	if l.Launch {
		to = "/launch?return_to=" + url.QueryEscape(l.ReturnTo)
	}
	if to == "" {
		to = "/"
	}
	return c.Redirect(http.StatusSeeOther, to)
}

// held is what Enter holds.
type held struct {
	Account store.Account
	Landing wayin.Landing
	Until   time.Time
}

// Resume arrives as Enter held; a value that does not open or is past
// its time is wayin.ErrHoldGone.
func (k *Kit) Resume(c echo.Context, v string) error {
	var h held
	if err := k.Sealer("hold").OpenJSON("hold", v, &h); err != nil || k.Now().After(h.Until) {
		return fmt.Errorf("%w: it does not open or expired", wayin.ErrHoldGone)
	}
	return k.arrive(c, h.Account, h.Landing)
}

// Refuse records the refusal and returns r, as the bridge does.
func (k *Kit) Refuse(_ echo.Context, msg, source, email string, r *wayin.Refusal) error {
	k.mu.Lock()
	k.refused = append(k.refused, Refusal{msg, source, email, r})
	k.mu.Unlock()
	return r
}

// Render writes the page's body (the bridge wraps it in its layout).
func (k *Kit) Render(c echo.Context, status int, title locale.ID, body func(views.Page) templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return body(views.Page{Title: string(title)}).Render(c.Request().Context(), c.Response())
}

// BaseURL is the request's own origin.
func (k *Kit) BaseURL(c echo.Context) string {
	scheme := "http"
	if k.HTTPS {
		scheme = "https"
	}
	return scheme + "://" + c.Request().Host
}

// Sealer seals as the bridge does (package seal), under the Kit's own
// random session keys: a value opens only for its purpose and name.
func (k *Kit) Sealer(purpose string) wayin.Sealer {
	return seal.New(seal.Purpose(purpose), k.keys, seal.Keys{}, 0, k.now)
}

// Secure is HTTPS.
func (k *Kit) Secure() bool { return k.HTTPS }

// UseOnce records id of kind until a time: store.ErrUsed the second time
// while it holds.
func (k *Kit) UseOnce(_ context.Context, kind, id string, until time.Time) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := kind + "\x00" + id
	if t, ok := k.used[key]; ok && k.now().Before(t) {
		return store.ErrUsed
	}
	k.used[key] = until
	return nil
}

// Now is the Kit's clock.
func (k *Kit) Now() time.Time { return k.now() }

func (k *Kit) now() time.Time {
	if k.Clock != nil {
		return k.Clock()
	}
	return time.Now()
}

// SignedIn is the account signed in (SignInAs, or the last arrival).
func (k *Kit) SignedIn(echo.Context) (store.Account, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.signedIn == nil {
		return store.Account{}, false
	}
	return *k.signedIn, true
}

// Console lets Admin through, and answers 403 otherwise.
func (k *Kit) Console(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !k.Admin {
			return echo.NewHTTPError(http.StatusForbidden, "partner admins only")
		}
		return next(c)
	}
}

// Audit records an admin's action.
func (k *Kit) Audit(_ echo.Context, detail string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.audited = append(k.audited, detail)
}

// Server is a test server a way is mounted on; its URL is known before
// the way is built (an LMS or IdP of the test needs the tool's address).
type Server struct {
	*httptest.Server
	e *echo.Echo
}

// NewServer starts an empty server, closed with the test. A refusal
// renders its page with its status and an X-Refusal header naming its
// class, as the bridge's log line does.
func NewServer(t testing.TB) *Server {
	t.Helper()
	e := echo.New()
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		var r *wayin.Refusal
		var he *echo.HTTPError
		switch {
		case errors.As(err, &r) && r.Status != 0:
			c.Response().Header().Set("X-Refusal", r.Class)
			c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
			c.Response().WriteHeader(r.Status)
			_ = views.Refused(views.Page{}, r.Info).Render(c.Request().Context(), c.Response())
		case errors.As(err, &he):
			_ = c.String(he.Code, fmt.Sprint(he.Message))
		default:
			_ = c.String(http.StatusInternalServerError, err.Error())
		}
	}
	srv := &Server{Server: httptest.NewServer(e), e: e}
	t.Cleanup(srv.Close)
	return srv
}

// Mount adds w's routes with k, before the first request.
func (s *Server) Mount(w wayin.Way, k *Kit) { w.Mount(s.e, k) }

// Serve mounts w on a new server with k (NewServer, then Mount).
func Serve(t testing.TB, w wayin.Way, k *Kit) *httptest.Server {
	t.Helper()
	s := NewServer(t)
	s.Mount(w, k)
	return s.Server
}

// Browser is a client that keeps cookies and does not follow redirects,
// as a test reads each answer.
func Browser(t testing.TB) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
