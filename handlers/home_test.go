package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin/lti"
	"github.com/ssobridge/ssobridge/wayin/oidc"
	"github.com/ssobridge/ssobridge/wayin/samlsso"
)

func TestPortal(t *testing.T) {
	f := setup(t)
	ada := f.account("ada@example.com", false)
	c := f.client()

	r := c.get("/")
	assert.Equal(t, http.StatusSeeOther, r.status, "signed out: to the sign-in page")
	assert.Equal(t, "/login", r.header.Get("Location"))

	c.signIn("ada@example.com")
	r = c.get("/")
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "Hello, Ada Lovelace", r.text("h1"))
	assert.Contains(t, r.text("#last-launch"), "never")
	assert.NotEmpty(t, r.doc.Find(`form[action="/launch"] input[name="_csrf"]`).AttrOr("value", ""))
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"))

	at := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	f.accts.link(ada.ID, "9007199254740993", at)
	r = c.get("/")
	assert.Equal(t, at.Local().Format("January 2, 2006 at 15:04 MST"), r.text("#last-launch"))
	assert.Contains(t, r.body, "linked (platform user 9007199254740993)")

	f.accts.down()
	r = c.get("/")
	assert.Equal(t, http.StatusInternalServerError, r.status)
	assert.Equal(t, "internal", r.class())
}

func TestLaunchRedirectsToTheExchangeURL(t *testing.T) {
	f := setup(t)
	ada := f.account("ada@example.com", false)
	c := f.client()
	c.signIn("ada@example.com")
	r := c.submit("/", "/launch", url.Values{"return_to": {"/editor/projects?id=7"}})
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	assert.Equal(t, "https://platform.example/api/5/login-token/login/TOKEN-ada@example.com", r.header.Get("Location"))
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
	assert.Equal(t, "no-referrer", r.header.Get("Referrer-Policy"), "the token stays out of Referer")
	calls := f.launcher.made()
	require.Len(t, calls, 1)
	assert.Equal(t, ada.ID, calls[0].account.ID)
	assert.Equal(t, "/editor/projects?id=7", calls[0].returnTo)
	assert.Equal(t, r.header.Get("X-Request-Id"), calls[0].requestID, "the audit and the page share the request id")
	assert.True(t, calls[0].hasDeadline, "a launch is bounded")
}

// TestLaunchWithoutSession: an expired or missing session gets the 401
// page and launches nothing.
func TestLaunchWithoutSession(t *testing.T) {
	f := setup(t)
	c := f.client()
	r := c.submit("/login", "/launch", nil)
	assert.Equal(t, http.StatusUnauthorized, r.status)
	assert.Equal(t, "session-expired", r.class())
	assert.Equal(t, "/login", r.doc.Find(`#error-page a[href="/login"]`).AttrOr("href", ""), "offers to sign in")
	assert.Empty(t, f.launcher.made())
}

// errorPageCase is one row of the error -> page mapping.
type errorPageCase struct {
	name   string
	page   string // the views component, as docs/architecture.md names it
	class  string // its data-class
	status int
	// request makes the request with a signed-in client of f; launchErr,
	// when set, is what the launcher answers to a plain launch instead.
	request    func(f *fixture, c *client) *response
	launchErr  error
	retryAfter string
	mention    string // text the page must show
	ownClient  bool   // request uses a client of its own (signed out, not an admin)
}

func apiErr(endpoint string, status int) *apiclient.APIError {
	return &apiclient.APIError{Endpoint: endpoint, Method: "GET", Status: status}
}

func errorPageCases() []errorPageCase {
	return append(launchErrorPageCases(), arrivalErrorPageCases()...)
}

// launchErrorPageCases are the pages a launch can end on.
func launchErrorPageCases() []errorPageCase {
	wrap := func(err error) error { return fmt.Errorf("ensure user: %w", err) }
	return []errorPageCase{
		{name: "platform 403", page: "PlatformForbidden", class: "platform-forbidden", status: 502,
			launchErr: wrap(apiErr("list_users", 403)), mention: "not an admin of the Instance"},
		{name: "platform 401, clocks apart", page: "PlatformClockSkew", class: "platform-clock-skew", status: 502,
			launchErr: &apiclient.ClockSkewError{Offset: -10 * time.Minute, Err: apiErr("issue_token", 401)}, mention: "10m0s"},
		{name: "platform 401", page: "PlatformUnauthorized", class: "platform-unauthorized", status: 502,
			launchErr: wrap(apiErr("list_users", 401)), mention: "API secret"},
		{name: "platform 429", page: "PlatformUnavailable", class: "platform-unavailable", status: 503,
			launchErr:  wrap(&apiclient.APIError{Endpoint: "list_users", Status: 429, RetryAfter: 6500 * time.Millisecond}),
			retryAfter: "7", mention: "about 7 seconds"},
		{name: "platform 5xx", page: "PlatformUnavailable", class: "platform-unavailable", status: 503,
			launchErr: wrap(apiErr("create_user", 502)), mention: "Nothing was lost", retryAfter: "60"},
		{name: "platform 409 unresolved", page: "PlatformUnavailable", class: "platform-unavailable", status: 503,
			launchErr: wrap(apiErr("create_user", 409)), mention: "try again", retryAfter: "60"},
		{name: "platform unreachable", page: "PlatformUnavailable", class: "platform-unavailable", status: 503,
			launchErr: wrap(&apiclient.TransportError{Endpoint: "list_users", Err: errors.New("connection refused")}), mention: "Nothing was lost", retryAfter: "60"},
		{name: "platform timeout", page: "PlatformUnavailable", class: "platform-unavailable", status: 504,
			launchErr: wrap(&apiclient.TransportError{Endpoint: "list_users", Timeout: true, Err: context.DeadlineExceeded}), mention: "Nothing was lost", retryAfter: "60"},
		{name: "platform 404", page: "PlatformMisconfigured", class: "platform-misconfigured", status: 502,
			launchErr: wrap(apiErr("list_users", 404)), mention: "without"},
		{name: "platform 400", page: "PlatformMisconfigured", class: "platform-misconfigured", status: 502,
			launchErr: wrap(apiErr("create_user", 400)), mention: "ssobridge check"},
		{name: "bad return_to", page: "BadRequest", class: "bad-request", status: 400,
			launchErr: fmt.Errorf("%w: it must start with /", launch.ErrInvalidReturnTo), mention: "must start with /"},
		{name: "method not allowed", page: "BadRequest", class: "bad-request", status: 405,
			request: func(f *fixture, c *client) *response { return c.get("/launch") }},
		{name: "body too large", page: "BadRequest", class: "bad-request", status: 413,
			request: func(f *fixture, c *client) *response {
				return c.submit("/", "/launch", url.Values{"return_to": {strings.Repeat("a", 2<<20)}})
			}},
		{name: "no route", page: "NotFound", class: "not-found", status: 404,
			request: func(f *fixture, c *client) *response { return c.get("/no/such/page") }},
		{name: "CSRF: no token", page: "CSRFFailed", class: "csrf", status: 400,
			request: func(f *fixture, c *client) *response { return c.post("/launch", url.Values{}) }},
		{name: "CSRF: wrong token", page: "CSRFFailed", class: "csrf", status: 403,
			request: func(f *fixture, c *client) *response { return c.post("/launch", url.Values{"_csrf": {"wrong"}}) }},
	}
}

// ltiLaunchAnswering posts a launch that the LTI tool answers with err.
func ltiLaunchAnswering(err error) func(f *fixture, c *client) *response {
	return func(f *fixture, c *client) *response {
		f.withLTI(&fakeLTI{launchErr: err})
		return c.post("/lti/launch", url.Values{"id_token": {"x"}, "state": {"s"}})
	}
}

// arrivalErrorPageCases are the pages of the ways in and of the store.
func arrivalErrorPageCases() []errorPageCase {
	return []errorPageCase{
		{name: "IdP refused", page: "Refused idp-denied", class: "idp-denied", status: 403, mention: "did not let you in",
			request: func(f *fixture, c *client) *response {
				f.idp.finishErr = fmt.Errorf("%w: access_denied", oidc.ErrDenied)
				return idpAnswer(c, "&error=access_denied")
			}},
		{name: "IdP answer not of this browser", page: "Refused idp-state", class: "idp-state", status: 400, mention: "could not be completed",
			request: func(f *fixture, c *client) *response { return c.get("/auth/oidc/callback?state=forged&code=x") }},
		{name: "IdP flow expired", page: "Refused idp-expired", class: "idp-expired", status: 400, mention: "10 minutes",
			request: func(f *fixture, c *client) *response {
				f.idp.finishErr = oidc.ErrExpired
				return idpAnswer(c, "&code=x")
			}},
		{name: "IdP unreachable", page: "Refused idp-unavailable", class: "idp-unavailable", status: 502, mention: "could not reach",
			request: func(f *fixture, c *client) *response {
				f.idp.startErr = fmt.Errorf("%w: discovery: connection refused", oidc.ErrUnavailable)
				return c.get("/auth/oidc")
			}},
		{name: "SAML answer outside its time", page: "Refused idp-clock", class: "idp-clock", status: 400, mention: "clocks",
			request: func(f *fixture, c *client) *response {
				f.saml.finishErr = fmt.Errorf("%w: NotOnOrAfter has passed", samlsso.ErrExpired)
				return samlAnswer(c)
			}},
		{name: "SAML answer refused", page: "Refused idp-invalid", class: "idp-invalid", status: 400, mention: "did not pass ssobridge's checks",
			request: func(f *fixture, c *client) *response {
				f.saml.finishErr = fmt.Errorf("%w: cannot validate signature on Response", samlsso.ErrInvalid)
				return samlAnswer(c)
			}},
		{name: "SAML metadata never read", page: "Refused idp-unavailable", class: "idp-unavailable", status: 503, retryAfter: "30", mention: "could not reach",
			request: func(f *fixture, c *client) *response {
				f.saml.startErr = fmt.Errorf("%w: reading https://idp.example/metadata: connection refused", samlsso.ErrUnavailable)
				return c.get("/auth/saml")
			}},
		{name: "IdP email unverified", page: "Refused idp-unverified", class: "idp-unverified", status: 403, mention: "not been verified",
			request: func(f *fixture, c *client) *response {
				f.idp.id = oidc.Identity{Email: "new@example.com", EmailVerified: false}
				return idpAnswer(c, "&code=x")
			}},
		{name: "LTI login from an unregistered LMS", page: "Refused lti-refused", class: "lti-refused", status: 400, mention: "did not pass ssobridge's checks",
			request: func(f *fixture, c *client) *response {
				f.withLTI(&fakeLTI{loginErr: fmt.Errorf("%w: issuer %q", lti.ErrUnknownPlatform, "https://lms.other.example")})
				return c.post("/lti/login", url.Values{"iss": {"https://lms.other.example"}})
			}},
		{name: "LTI launch used before", page: "Refused lti-stale", class: "lti-stale", status: 400, mention: "works once",
			request: ltiLaunchAnswering(lti.ErrReplayed)},
		{name: "LTI launch outside its time", page: "Refused lti-clock", class: "lti-clock", status: 400, mention: "NTP",
			request: ltiLaunchAnswering(fmt.Errorf("%w: token is expired", lti.ErrClock))},
		{name: "LTI launch without an email", page: "Refused lti-no-email", class: "lti-no-email", status: 400, mention: "Share launcher's email with tool",
			request: ltiLaunchAnswering(lti.ErrNoEmail)},
		{name: "LTI launch of no account, create_accounts off", page: "Refused lti-denied", class: "lti-denied", status: 403, mention: "does not create accounts",
			request: func(f *fixture, c *client) *response {
				f.withLTI(&fakeLTI{id: lti.Identity{Subject: "s-9", Email: "nobody@school.example",
					Platform: lti.Platform{Name: "Springfield LMS", Issuer: "https://lms.example", CreateAccounts: false}}})
				return c.post("/lti/launch", url.Values{"id_token": {"x"}, "state": {"s"}})
			}},
		{name: "LTI key set unreadable", page: "Refused lti-unavailable", class: "lti-unavailable", status: 503, retryAfter: "30", mention: "could not read the signing keys",
			request: ltiLaunchAnswering(fmt.Errorf("%w: https://lms.example/jwks answered 503", lti.ErrKeysUnavailable))},
		{name: "LTI launch signed by a key not read yet", page: "Refused lti-key-changed", class: "lti-key-changed", status: 503, retryAfter: "60", mention: "try again in a minute",
			request: ltiLaunchAnswering(fmt.Errorf("%w: key \"k2\" is not in the key set read 3s ago", lti.ErrKeyChanged))},
		{name: "portal token refused", page: "Refused portal-refused", class: "portal-refused", status: 401,
			request: func(f *fixture, c *client) *response { return c.get("/sso/jwt?jwt=not.a.token") }},
		{name: "launch without a session", page: "SessionExpired", class: "session-expired", status: 401, ownClient: true,
			request: func(f *fixture, c *client) *response {
				anon := f.client()
				return anon.submit("/login", "/launch", nil)
			}},
		{name: "non-admin on /admin", page: "Forbidden", class: "forbidden", status: 403, ownClient: true,
			request: func(f *fixture, c *client) *response {
				bob := f.client()
				bob.signIn("bob@example.com")
				return bob.get("/admin/accounts")
			}},
		{name: "disabled account", page: "AccountDisabled", class: "account-disabled", status: 403,
			launchErr: launch.ErrAccountDisabled, mention: "disabled"},
		{name: "account disabled by the identity provider", page: "AccountDisabled", class: "account-disabled", status: 403,
			launchErr: fmt.Errorf("%w: %w", launch.ErrAccountDisabled, store.ErrDisabledByIdP), mention: "identity provider"},
		{name: "sessions ended while the launch waited", page: "SessionExpired", class: "session-expired", status: 401,
			launchErr: launch.ErrSessionEnded},
		{name: "sign-in storm", page: "Busy", class: "busy", status: 503, retryAfter: "5", mention: "try again in a few seconds",
			request: func(f *fixture, c *client) *response {
				f.pw.busy = true
				anon := f.client()
				return anon.submit("/login", "/login", url.Values{"email": {"ada@example.com"}, "password": {testPassword}})
			}, ownClient: true},
		{name: "database locked by another process", page: "Busy", class: "busy", status: 503, retryAfter: "5", mention: "Nothing was lost",
			launchErr: fmt.Errorf("launch: save link: %w", store.ErrStoreBusy)},
		{name: "database unavailable", page: "StoreUnavailable", class: "store-unavailable", status: 503, retryAfter: "5", mention: "back within a minute",
			launchErr: fmt.Errorf("launch: read link: %w: no answer within 2s (store.timeout): %w", store.ErrUnavailable, context.DeadlineExceeded)},
		{name: "anything else", page: "InternalError", class: "internal", status: 500,
			launchErr: errors.New("launch: save link: disk on fire"), mention: "Something went wrong"},
	}
}

// TestErrorPages: every error a user can meet answers its page with its
// status, for an admin and for an end user alike; no page shows an
// internal error's text. An admin also reads the status, the cause and
// the technical detail.
func TestErrorPages(t *testing.T) {
	for _, tt := range errorPageCases() {
		for _, role := range []string{"admin", "user"} {
			t.Run(tt.name+" as "+role, func(t *testing.T) {
				f := setup(t)
				f.account("ada@example.com", true)
				f.account("bob@example.com", false)
				c := f.client()
				c.signIn(map[string]string{"admin": "ada@example.com", "user": "bob@example.com"}[role])
				var r *response
				if tt.request != nil {
					r = tt.request(f, c)
				} else {
					f.launcher.do = func(store.Account, string) (launch.Result, error) { return launch.Result{}, tt.launchErr }
					r = c.submit("/", "/launch", nil)
				}
				assert.Equal(t, tt.status, r.status)
				assert.Equal(t, tt.class, r.class())
				assert.Equal(t, r.header.Get("X-Request-Id"), r.text("#request-id"), "the page names the request")
				assert.Equal(t, tt.retryAfter, r.header.Get("Retry-After"))
				assert.NotContains(t, r.body, "disk on fire")
				if role == "user" || tt.ownClient {
					assert.Empty(t, r.doc.Find("#error-page .status").Nodes, "no raw status for end users")
					return
				}
				assert.Equal(t, "Error "+strconv.Itoa(tt.status), r.text("#error-page .status"))
				assert.Contains(t, r.text("#error-page"), tt.mention)
				if tt.status > 500 {
					assert.NotEmpty(t, r.text("#error-detail"), "platform failures show their technical detail")
				}
			})
		}
	}
}

// TestErrorPagesCoverTheDocumentedTable: every (page, status) row of the
// status table in docs/architecture.md is a case of TestErrorPages, and
// every case is documented.
func TestErrorPagesCoverTheDocumentedTable(t *testing.T) {
	doc, err := os.ReadFile("../docs/architecture.md")
	require.NoError(t, err)
	text := string(doc)
	start := strings.Index(text, "## Status codes of the error pages")
	require.GreaterOrEqual(t, start, 0, "the table's heading")
	row := regexp.MustCompile("(?m)^\\| [^|]+ \\| `([^`]+)`[^|]* \\| ([0-9 /]+) \\|$")
	documented := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(text[start:], -1) {
		for _, status := range strings.Split(m[2], "/") {
			documented[m[1]+" "+strings.TrimSpace(status)] = true
		}
	}
	require.NotEmpty(t, documented)
	tested := map[string]bool{}
	for _, tt := range errorPageCases() {
		tested[tt.page+" "+strconv.Itoa(tt.status)] = true
	}
	for pair := range documented {
		assert.True(t, tested[pair], "documented but not tested: %s", pair)
	}
	for pair := range tested {
		assert.True(t, documented[pair], "tested but not documented: %s", pair)
	}
}

// A panic in a handler is a 500 page, logged with its request id.
func TestPanicIsAnInternalErrorPage(t *testing.T) {
	f := setup(t)
	f.account("ada@example.com", false)
	c := f.client()
	c.signIn("ada@example.com")
	f.launcher.do = func(store.Account, string) (launch.Result, error) { panic("launcher exploded") }
	r := c.submit("/", "/launch", nil)
	assert.Equal(t, http.StatusInternalServerError, r.status)
	assert.Equal(t, "internal", r.class())
	assert.NotContains(t, r.body, "exploded")
	assert.Contains(t, f.logs.String(), "launcher exploded")
	assert.Contains(t, f.logs.String(), "request_id="+r.header.Get("X-Request-Id"))
}
