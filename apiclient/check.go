package apiclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Verdict classifies a connection check.
type Verdict string

// Verdicts of Check.
const (
	VerdictOK          Verdict = "ok"
	VerdictClockSkew   Verdict = "clock_skew"
	VerdictCredentials Verdict = "credentials"
	VerdictForbidden   Verdict = "forbidden"
	VerdictNotFound    Verdict = "not_found"
	VerdictRateLimited Verdict = "rate_limited"
	VerdictServerError Verdict = "server_error"
	VerdictTimeout     Verdict = "timeout"
	VerdictDNS         Verdict = "dns"
	VerdictTLS         Verdict = "tls"
	VerdictUnreachable Verdict = "unreachable"
	VerdictUnexpected  Verdict = "unexpected"
)

// CheckResult is one diagnosis of the platform connection.
type CheckResult struct {
	Verdict     Verdict
	Summary     string   // one line: what happened
	Advice      []string // what to do, in order
	Status      int      // HTTP status, 0 when no answer
	Latency     time.Duration
	ClockOffset time.Duration // platform clock minus ours, from the answer's Date (0 when unknown)
	HaveOffset  bool
	URL         string // the URL called (holds no secret)
	Err         error  // the underlying error, nil when OK
}

// DescribeClock says how the platform's clock stands to ours, e.g.
// "10m0s ahead of this server's"; empty when the answer had no Date.
func (r CheckResult) DescribeClock() string {
	switch d := r.ClockOffset; {
	case !r.HaveOffset:
		return ""
	case d.Abs() < 2*time.Second:
		return "in step with this server's"
	case d > 0:
		return d.Round(time.Second).String() + " ahead of this server's"
	default:
		return d.Abs().Round(time.Second).String() + " behind this server's"
	}
}

// OK reports whether the connection works.
func (r CheckResult) OK() bool { return r.Verdict == VerdictOK }

// Check makes one signed GET /public/users of one item, without retries,
// and classifies the answer with advice. It never returns the secret.
func (c *Client) Check(ctx context.Context) CheckResult {
	s := c.opts.Shapes
	q := url.Values{}
	q.Set(s.PageParam, fmt.Sprint(s.FirstPage))
	q.Set(s.SizeParam, "1")
	var hdr http.Header
	var page UserPage
	start := time.Now()
	sentAt := c.opts.Now()
	_, err := c.do(ctx, call{endpoint: EndpointListUsers, method: http.MethodGet, path: s.UsersPath, query: q, rule: retryNone, header: &hdr}, &page)
	r := CheckResult{Latency: time.Since(start), Err: err, URL: c.base.String() + APIPrefix + s.UsersPath + "?" + q.Encode()}
	if d, ok := parseDate(hdr.Get("Date")); ok {
		r.ClockOffset, r.HaveOffset = d.Sub(sentAt.Truncate(time.Second)), true
	}
	var ae *APIError
	if errors.As(err, &ae) {
		r.Status = ae.Status
	} else if err == nil {
		r.Status = http.StatusOK
	}
	c.classify(&r, err)
	return r
}

func (c *Client) classify(r *CheckResult, err error) {
	sg := c.signer
	var cs *ClockSkewError
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recErr tls.RecordHeaderError
	switch {
	case err == nil:
		r.Verdict = VerdictOK
		r.Summary = fmt.Sprintf("OK: the platform accepted the signed call and the API user is an admin of the Instance (%s).", r.Latency.Round(time.Millisecond))
	case errors.As(err, &cs):
		r.Verdict = VerdictClockSkew
		r.ClockOffset, r.HaveOffset = cs.Offset, true
		dir := "ahead of"
		if cs.Offset < 0 {
			dir = "behind"
		}
		r.Summary = fmt.Sprintf("Clock skew: the platform refused the request (401) and its clock is %s %s this server's.", cs.Offset.Abs().Round(time.Second), dir)
		r.Advice = []string{"Synchronise this server's clock (enable NTP, e.g. `timedatectl set-ntp true`).",
			"Signed requests carry a Date header that must be within a few minutes of the platform's clock."}
	case errors.Is(err, ErrUnauthorized):
		r.Verdict = VerdictCredentials
		r.Summary = "Credentials refused (401): the platform did not accept the signature or secret."
		r.Advice = []string{
			"Use the API secret, not the API key, as platform.api_secret (SSOBRIDGE_PLATFORM_API_SECRET); no quotes, no spaces.",
			fmt.Sprintf("Check the scheme spelling: the bridge sends %q with method %q; set platform.scheme_hmac / platform.scheme_simple to the platform's spelling.", sg.Scheme(), sg.Method()),
			"The Authorization header has exactly one space after the scheme, and no \"Bearer\".",
			"For HMAC, platform.base_url must be the URL the platform sees: the full URL (scheme, host, port, path and query) is signed.",
			"For HMAC, the API key (platform.api_key) must belong to the same credential as the secret.",
		}
	case errors.Is(err, ErrForbidden):
		r.Verdict = VerdictForbidden
		r.Summary = "Forbidden (403): the credentials are valid, but the API user is not an admin of the Instance."
		r.Advice = []string{"On the platform, make the user that owns this API key an admin of the Instance (admin rights are per Instance).",
			"Or use an API key issued to a user who already is an Instance admin."}
	case errors.Is(err, ErrNotFound):
		r.Verdict = VerdictNotFound
		r.Summary = "Not found (404): the platform has no API at " + r.URL + "."
		r.Advice = []string{"Set platform.base_url to the platform's address without /api/5 (the bridge adds the version prefix).",
			"Check the host name and any path prefix the platform is served under."}
	case errors.Is(err, ErrRateLimited):
		r.Verdict = VerdictRateLimited
		r.Summary = "Rate limited (429): the platform asks the bridge to slow down."
		if ae := (*APIError)(nil); errors.As(err, &ae) && ae.RetryAfter > 0 {
			r.Summary += fmt.Sprintf(" It asked to wait %s.", ae.RetryAfter)
		}
		r.Advice = []string{"Wait and check again; launches back off and retry on their own.",
			"If it persists, ask the platform to raise the credential's rate limit."}
	case errors.Is(err, ErrServer):
		r.Verdict = VerdictServerError
		r.Summary = fmt.Sprintf("Platform error (%d): the platform failed on its side.", r.Status)
		r.Advice = []string{"This is usually transient: check again in a minute.", "If it persists, contact the platform's support with the time of the check."}
	case errors.Is(err, ErrTimeout):
		r.Verdict = VerdictTimeout
		r.Summary = fmt.Sprintf("Timeout: no answer within %s.", c.opts.Timeout)
		r.Advice = []string{"Check that this server can reach the platform (firewall, proxy, routing).", "Raise platform.timeout only if the platform is known to be slow."}
	case errors.As(err, &dnsErr):
		r.Verdict = VerdictDNS
		r.Summary = "DNS: the platform's host name does not resolve (" + dnsErr.Name + ")."
		r.Advice = []string{"Check the host in platform.base_url and this server's DNS settings."}
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &recErr):
		r.Verdict = VerdictTLS
		r.Summary = "TLS: the secure connection to the platform failed: " + err.Error()
		r.Advice = []string{"Check that platform.base_url uses the right scheme (https) and host name, and that the platform's certificate is trusted here."}
	case errors.Is(err, ErrUnreachable):
		r.Verdict = VerdictUnreachable
		r.Summary = "Unreachable: could not connect to the platform: " + err.Error()
		r.Advice = []string{"Check platform.base_url (host and port) and that the platform is up and reachable from this server."}
	default:
		r.Verdict = VerdictUnexpected
		r.Summary = "Unexpected answer: " + err.Error()
		r.Advice = []string{"Check platform.base_url and the API shapes the platform serves."}
	}
}
