// Package outbound is the one policy under which the bridge fetches from
// parties it was told about (an LMS's or IdP's configuration, a
// registration endpoint, key sets, tokens, rosters, SAML metadata): a URL
// that a registration or a launch names is an outsider's choice, so the
// bridge must not become the outsider's way into its own network.
//
// https only; no redirect to another origin (a same-origin one is
// followed, at most three, each checked again); the address a name
// resolves to is checked at the moment of connecting (loopback, private,
// link-local, unspecified and multicast addresses refused, so a name that
// resolves differently the second time gains nothing); every fetch is
// bounded in time, and Read bounds its body. A development switch
// (AllowLocal) admits plain http and local addresses, for parties on the
// same machine; AllowNetworks admits named private networks over https
// (an LMS inside a district's network).
package outbound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/ssobridge/ssobridge/internal/loopback"
)

// Refusals of the policy; a page may name them (Reason), never the
// remote party's words or the transport's.
var (
	ErrNotHTTPS     = errors.New("outbound: not an https URL")
	ErrRedirect     = errors.New("outbound: it redirected elsewhere")
	ErrLocalAddress = errors.New("outbound: its address is on a local or private network")
	ErrTooLarge     = errors.New("outbound: its answer is too large")
	// ErrUnreachable: the fetch failed (no answer, a timeout, a TLS
	// failure): the transport's error is wrapped, for the log only.
	ErrUnreachable = errors.New("outbound: it could not be reached")
)

// Policy is how the bridge reaches outside parties.
type Policy struct {
	// AllowLocal is the development switch: plain http, and loopback and
	// private addresses, are allowed.
	AllowLocal bool
	// AllowNetworks are private networks reachable over https all the
	// same.
	AllowNetworks []netip.Prefix
	// Timeout bounds one fetch (0: 10 s).
	Timeout time.Duration
}

// maxRedirects bounds the same-origin redirects followed.
const maxRedirects = 3

// Client is an http.Client under the policy, over base's TLS settings
// (nil: net/http's default transport's settings); base's own dialer is
// replaced by one that checks every address it connects to.
func (p Policy) Client(base *http.Transport) *http.Client {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	t := base.Clone()
	// An egress proxy (HTTPS_PROXY) is honoured: the address checked is
	// then the proxy's (list its network in AllowNetworks), and the proxy
	// resolves the party's name; URLs and redirects are checked all the
	// same.
	t.Proxy = http.ProxyFromEnvironment
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second, Control: p.control}
	t.DialContext = d.DialContext
	t.DialTLSContext = nil
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &http.Client{Timeout: timeout, Transport: guarded{p: p, next: t}, CheckRedirect: p.checkRedirect}
}

// Guard wraps hc (a test's client that trusts a test certificate, say)
// with the policy's URL and redirect checks; its transport's dialer is
// kept, so an address check needs Client.
func (p Policy) Guard(hc *http.Client) *http.Client {
	out := *hc
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out.Transport = guarded{p: p, next: next}
	out.CheckRedirect = p.checkRedirect
	return &out
}

// CheckURL reports whether raw may be fetched: an absolute https URL
// without credentials (http only with AllowLocal, and then only on a
// loopback host).
func (p Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil {
		return ErrNotHTTPS
	}
	return p.checkURL(u)
}

func (p Policy) checkURL(u *url.URL) error {
	// Plain http to loopback only with the development switch on.
	if u.User != nil || !loopback.SecureURL(u) || u.Scheme == "http" && !p.AllowLocal {
		return ErrNotHTTPS
	}
	return nil
}

// checkRedirect follows a redirect only within the first request's
// origin, each URL checked again, at most maxRedirects.
func (p Policy) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("%w: more than %d redirects", ErrRedirect, maxRedirects)
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return ErrRedirect
	}
	return p.checkURL(req.URL)
}

// control refuses a connection to an address the policy does not allow
// (called with the resolved address, for every connection).
func (p Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrLocalAddress, address)
	}
	if !p.addressAllowed(ap.Addr().Unmap()) {
		return ErrLocalAddress
	}
	return nil
}

// addressAllowed: a public unicast address; with AllowLocal any; a
// private one inside AllowNetworks.
func (p Policy) addressAllowed(a netip.Addr) bool {
	if p.AllowLocal {
		return true
	}
	for _, n := range p.AllowNetworks {
		if n.Contains(a) {
			return true
		}
	}
	return a.IsGlobalUnicast() && !a.IsPrivate() && !sharedOrReserved(a)
}

// sharedOrReserved: carrier-grade NAT (100.64/10), benchmarking
// (198.18/15) and the ranges above 240/4, none of them a party's.
func sharedOrReserved(a netip.Addr) bool {
	for _, n := range reserved {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

var reserved = [...]netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"), netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("2001:db8::/32"),
}

// guarded checks each request's URL before it goes.
type guarded struct {
	p    Policy
	next http.RoundTripper
}

func (g guarded) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := g.p.checkURL(req.URL); err != nil {
		return nil, err
	}
	resp, err := g.next.RoundTrip(req)
	if err != nil {
		if errors.Is(err, ErrLocalAddress) {
			return nil, ErrLocalAddress
		}
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return resp, nil
}

// Read reads at most limit bytes of resp's body; a longer body is
// ErrTooLarge.
func Read(resp *http.Response, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	if int64(len(b)) > limit {
		return nil, ErrTooLarge
	}
	return b, nil
}

// Reason is what a page may say of a failed fetch: the policy's refusal,
// or that it could not be read; never the remote party's words, the
// transport's error or a decoder's message.
func Reason(err error) string {
	switch {
	case errors.Is(err, ErrNotHTTPS):
		return "it is not https"
	case errors.Is(err, ErrRedirect):
		return "it redirected elsewhere"
	case errors.Is(err, ErrLocalAddress):
		return "it is on a local or private network address"
	case errors.Is(err, ErrTooLarge):
		return "its answer is too large"
	case errors.Is(err, context.DeadlineExceeded):
		return "it did not answer in time"
	}
	return "it could not be read"
}
