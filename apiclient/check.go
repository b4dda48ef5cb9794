package apiclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
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
	VerdictShape       Verdict = "shape" // the answer is not shaped as platform.shapes says
	VerdictUnexpected  Verdict = "unexpected"
)

// CheckResult is one diagnosis of the platform connection.
type CheckResult struct {
	Verdict     Verdict
	Summary     string // one line: what happened
	Status      int    // HTTP status, 0 when no answer
	Latency     time.Duration
	ShapeKey    string        // with VerdictShape: the platform.shapes key to fix
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

// Check makes one signed call that lists the first page of users (of one), without
// retries, reads it through the shapes, and classifies the answer. It
// never returns the secret. What to do about a verdict is the caller's to
// say: it knows the configuration's words.
func (c *Client) Check(ctx context.Context) CheckResult {
	s := c.opts.Shapes
	q := url.Values{}
	q.Set(s.PageParam, fmt.Sprint(s.FirstPage))
	q.Set(s.SizeParam, "1") // one user shows the shapes, at the least cost
	var hdr http.Header
	var raw json.RawMessage
	start := time.Now()
	sentAt := c.opts.Now()
	_, err := c.do(ctx, call{endpoint: EndpointListUsers, method: http.MethodGet, path: s.UsersPath, query: q, rule: retryNone, header: &hdr}, &raw)
	if err == nil {
		_, err = s.readPage(raw)
	}
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
	var cs *ClockSkewError
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recErr tls.RecordHeaderError
	var shape *ShapeMismatch
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
	case errors.Is(err, ErrUnauthorized):
		r.Verdict = VerdictCredentials
		r.Summary = "Credentials refused (401): the platform did not accept the signature or secret."
	case errors.Is(err, ErrForbidden):
		r.Verdict = VerdictForbidden
		r.Summary = "Forbidden (403): the credentials are valid, but the API user is not an admin of the Instance."
	case errors.Is(err, ErrNotFound):
		r.Verdict = VerdictNotFound
		r.Summary = "Not found (404): the platform has no API at " + r.URL + "."
	case errors.Is(err, ErrRateLimited):
		r.Verdict = VerdictRateLimited
		r.Summary = "Rate limited (429): the platform asks the bridge to slow down."
		if ae := (*APIError)(nil); errors.As(err, &ae) && ae.RetryAfter > 0 {
			r.Summary += fmt.Sprintf(" It asked to wait %s.", ae.RetryAfter)
		}
	case errors.Is(err, ErrServer):
		r.Verdict = VerdictServerError
		r.Summary = fmt.Sprintf("Platform error (%d): the platform failed on its side.", r.Status)
	case errors.Is(err, ErrTimeout):
		r.Verdict = VerdictTimeout
		r.Summary = fmt.Sprintf("Timeout: no answer within %s.", c.opts.Timeout)
	case errors.As(err, &dnsErr):
		r.Verdict = VerdictDNS
		r.Summary = "DNS: the platform's host name does not resolve (" + dnsErr.Name + ")."
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &recErr):
		r.Verdict = VerdictTLS
		r.Summary = "TLS: the secure connection to the platform failed: " + err.Error()
	case errors.Is(err, ErrUnreachable):
		r.Verdict = VerdictUnreachable
		r.Summary = "Unreachable: could not connect to the platform: " + err.Error()
	case errors.As(err, &shape):
		r.Verdict, r.ShapeKey = VerdictShape, "platform.shapes."+shape.Key
		r.Summary = fmt.Sprintf("Shape: the platform answered, but not as platform.shapes says: %s: %s.", r.ShapeKey, shape.Problem)
	default:
		r.Verdict = VerdictUnexpected
		r.Summary = "Unexpected answer: " + err.Error()
	}
}
