package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// APIPrefix is the version prefix of every Partner API path.
const APIPrefix = "/api/5"

// Endpoint names used in errors, metrics and call counts.
const (
	EndpointListUsers  = "list_users"
	EndpointCreateUser = "create_user"
	EndpointIssueToken = "issue_token"
)

// Hooks observe every attempt; the web app feeds metrics from them.
type Hooks struct {
	// OnAttempt runs after each HTTP attempt; status is 0 when no answer came.
	OnAttempt func(endpoint string, status int, d time.Duration)
	// OnRetry runs before each wait for a retry.
	OnRetry func(endpoint string, reason string, wait time.Duration)
}

// Options configure a Client. BaseURL and Credentials are required.
type Options struct {
	BaseURL     string // e.g. https://video.example.com (without /api/5)
	Credentials Credentials
	Shapes      Shapes
	// HTTPClient makes every call; default: NewHTTPClient(). Set its
	// CheckRedirect to http.ErrUseLastResponse: the API never redirects.
	HTTPClient *http.Client
	// Timeout bounds one attempt; default 10 s.
	Timeout time.Duration
	// EnsureTimeout bounds a shared EnsureUser operation whose caller has
	// no deadline (a caller's deadline bounds it otherwise); default 60 s.
	EnsureTimeout time.Duration
	// MaxRetryAfter: a 429 asking to wait longer than this is not waited
	// for; default 30 s.
	MaxRetryAfter time.Duration
	// ServerRetryDelay is the wait before the one retry of a 5xx or
	// network error; default 250 ms.
	ServerRetryDelay time.Duration
	Now              func() time.Time                                 // default time.Now
	Sleep            func(ctx context.Context, d time.Duration) error // default: timer that stops on ctx
	Jitter           func() float64                                   // in [0,1); default math/rand/v2
	Hooks            Hooks
	// Pacer, when set, spaces every attempt (retries too) and is told of
	// each 429: the platform's limit is the credential's, shared by every
	// caller (package pacing).
	Pacer Pacer
}

// Pacer keeps the client's calls under the platform's rate limit.
type Pacer interface {
	// Wait returns when an attempt may be sent, or ctx's error.
	Wait(ctx context.Context) error
	// Pause holds every attempt for d: a 429's Retry-After, or the
	// client's backoff when it gave none.
	Pause(d time.Duration)
}

// RetryPacer is a Pacer that tells a retry apart: the client asks
// WaitRetry, not Wait, before every attempt after the first (a pacer may
// refuse to let a call start, never stop one between its attempts).
type RetryPacer interface {
	Pacer
	WaitRetry(ctx context.Context) error
}

// Client calls the Partner API. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	signer  *Signer
	opts    Options
	hc      *http.Client
	ensures singleflight.Group
	// exchange is the exchange URL template split at {token}, with
	// {base_url} filled in: a launch only escapes its token between them.
	exchangeHead, exchangeTail string
}

// New returns a Client for opts.
func New(opts Options) (*Client, error) {
	base, err := url.Parse(strings.TrimRight(opts.BaseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("apiclient: base URL %q must be an absolute http(s) URL", opts.BaseURL)
	}
	base.Path = strings.TrimSuffix(base.Path, APIPrefix) // a pasted /api/5 is dropped
	signer, err := NewSigner(opts.Credentials)
	if err != nil {
		return nil, err
	}
	opts.Shapes.fill()
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.EnsureTimeout <= 0 {
		opts.EnsureTimeout = 60 * time.Second
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = 30 * time.Second
	}
	if opts.ServerRetryDelay <= 0 {
		opts.ServerRetryDelay = 250 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepCtx
	}
	if opts.Jitter == nil {
		opts.Jitter = rand.Float64
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = NewHTTPClient()
	}
	c := &Client{base: base, signer: signer, opts: opts, hc: hc}
	head, tail, _ := strings.Cut(opts.Shapes.ExchangeURL, "{token}")
	fill := strings.NewReplacer("{base_url}", base.String())
	c.exchangeHead, c.exchangeTail = fill.Replace(head), fill.Replace(tail)
	return c, nil
}

// NewHTTPClient returns the client for the platform: net/http's Transport,
// tuned for one host called by many concurrent launches (kept-alive
// connections, bounded dial and TLS handshake, HTTP/2 when the platform
// offers it over TLS, the environment's proxy). It follows no redirects:
// the API never redirects, so one means a wrong base URL. It sets no
// overall timeout: the Client bounds each attempt with its context
// (Options.Timeout).
func NewHTTPClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          256,
			MaxIdleConnsPerHost:   128,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: 0, // the attempt's context bounds the whole exchange
			ExpectContinueTimeout: time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// CloseIdleConnections closes the kept-alive connections to the platform.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// Signer returns the client's signer (diagnostics show its method and key id).
func (c *Client) Signer() *Signer { return c.signer }

// BaseURL returns the platform's base URL (without /api/5).
func (c *Client) BaseURL() string { return c.base.String() }

// Shapes returns the API shapes in use.
func (c *Client) Shapes() Shapes { return c.opts.Shapes }

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type callCounterKey struct{}

// WithCallCounter returns a context under which every HTTP attempt the
// client makes adds one to n. The launch use-case counts platform calls
// this way.
func WithCallCounter(ctx context.Context, n *atomic.Int32) context.Context {
	return context.WithValue(ctx, callCounterKey{}, n)
}

// Learned is what the lookups of one launch found out, kept across its
// runs: a launch run in its request that hands over to the line (a call
// would wait for the platform's pace) goes on there from what it learned,
// so the hand-over costs no platform call. Safe for concurrent use.
type Learned struct {
	mu     sync.Mutex
	absent map[string]time.Time // an address's key -> when a lookup found no user for it
}

// learnedFor is how long a lookup that found no user is taken as known:
// the create that follows it finds a user made meanwhile by its 409.
const learnedFor = 30 * time.Second

func (l *Learned) noteAbsent(key string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.absent == nil {
		l.absent = map[string]time.Time{}
	}
	l.absent[key] = at
}

func (l *Learned) knownAbsent(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.absent[key]
	return ok && now.Sub(at) < learnedFor
}

type learnedKey struct{}

// WithLearned returns a context under which EnsureUser notes what its
// lookups find in l, and takes what l knows instead of looking again.
func WithLearned(ctx context.Context, l *Learned) context.Context {
	return context.WithValue(ctx, learnedKey{}, l)
}

type patienceKey struct{}

// ErrOutOfPatience: a call made WithPatience was still under way at its
// caller's deadline and was cut off; the caller goes on elsewhere (a
// launch run in its request goes on in the line, where the call is made
// again).
var ErrOutOfPatience = errors.New("apiclient: the call outlasted its caller's patience")

// WithPatience bounds every platform call made with ctx by deadline (its
// attempts, not the waits for the platform's pace, nor anything else the
// caller does with ctx): a call still under way then is cut off with
// ErrOutOfPatience, never retried. A login token minted meanwhile
// expires unused; a user created meanwhile is found by the next look-up.
func WithPatience(ctx context.Context, deadline time.Time) context.Context {
	return context.WithValue(ctx, patienceKey{}, deadline)
}

// Patience is the deadline WithPatience gave ctx's calls, if any (for a
// test double of the platform that behaves as the client does).
func Patience(ctx context.Context) (time.Time, bool) {
	deadline, ok := ctx.Value(patienceKey{}).(time.Time)
	return deadline, ok
}

type turnKey struct{}

// WaitTurn waits for a turn of the platform's pace (the Pacer's, at ctx's
// priority) and returns a context whose next call takes that turn
// instead of waiting again. Background work takes its turn this way
// before it holds a provisioning lease, so that the lease is held while
// its calls are under way, not while it waits behind users' launches (one
// of which may be waiting for that very lease).
func (c *Client) WaitTurn(ctx context.Context) (context.Context, error) {
	if c.opts.Pacer == nil {
		return ctx, nil
	}
	if err := c.opts.Pacer.Wait(ctx); err != nil {
		return ctx, &TransportError{Endpoint: "pace", Timeout: errors.Is(err, context.DeadlineExceeded), Err: fmt.Errorf("waiting for the platform's rate limit: %w", err)}
	}
	turn := new(atomic.Bool)
	turn.Store(true)
	return context.WithValue(ctx, turnKey{}, turn), nil
}

// takeTurn reports whether ctx carries a turn not yet taken (WaitTurn),
// and takes it.
func takeTurn(ctx context.Context) bool {
	turn, _ := ctx.Value(turnKey{}).(*atomic.Bool)
	return turn != nil && turn.CompareAndSwap(true, false)
}

// retryRule says which failures of a call may be retried.
type retryRule int

const (
	retrySafe      retryRule = iota // GET and token issuance: 429 and one 5xx/network retry
	retryOn429Only                  // user creation: a 429 is a refusal, safe to resend; nothing else is
	retryNone                       // diagnosis: report the first answer as it is
)

// Max429Retries is the number of retries after a 429 before giving up.
const Max429Retries = 5

// call is one API operation.
type call struct {
	endpoint string
	method   string
	path     string     // below the API prefix, already escaped where needed
	query    url.Values // may be nil
	body     any        // marshalled once; nil for none
	rule     retryRule
	header   *http.Header // when set, receives the last answer's headers
}

// do runs c with retries and decodes a 2xx body into out (when non-nil).
// It returns the final status.
func (c *Client) do(ctx context.Context, k call, out any) (int, error) {
	var body []byte
	if k.body != nil {
		var err error
		if body, err = json.Marshal(k.body); err != nil {
			return 0, fmt.Errorf("apiclient: encode %s body: %w", k.endpoint, err)
		}
	}
	// k.path is escaped already; parsing keeps that escaping on the wire.
	u, err := url.Parse(c.base.String() + APIPrefix + k.path)
	if err != nil {
		return 0, fmt.Errorf("apiclient: %s URL: %w", k.endpoint, err)
	}
	if k.query != nil {
		u.RawQuery = k.query.Encode()
	}

	rateRetries, otherRetries := 0, 0
	for {
		if p := c.opts.Pacer; p != nil && (rateRetries+otherRetries > 0 || !takeTurn(ctx)) {
			wait := p.Wait
			if rp, ok := p.(RetryPacer); ok && rateRetries+otherRetries > 0 {
				wait = rp.WaitRetry
			}
			if err := wait(ctx); err != nil {
				return 0, &TransportError{Endpoint: k.endpoint, Timeout: errors.Is(err, context.DeadlineExceeded), Err: fmt.Errorf("waiting for the platform's rate limit: %w", err)}
			}
		}
		actx, cancelPatience := ctx, context.CancelFunc(func() {})
		if deadline, ok := ctx.Value(patienceKey{}).(time.Time); ok {
			actx, cancelPatience = context.WithDeadlineCause(ctx, deadline, ErrOutOfPatience)
		}
		status, err := c.attempt(actx, k, u, body, out)
		outOfPatience := err != nil && errors.Is(context.Cause(actx), ErrOutOfPatience)
		cancelPatience()
		if err == nil {
			return status, nil
		}
		if outOfPatience {
			// Its caller goes on elsewhere: no retry here.
			return status, &TransportError{Endpoint: k.endpoint, Method: k.method, Err: ErrOutOfPatience}
		}
		// The platform's Retry-After holds every caller, even when this
		// call gives up.
		var apiErr *APIError
		told := errors.As(err, &apiErr) && apiErr.Status == http.StatusTooManyRequests && apiErr.RetryAfter > 0
		if p := c.opts.Pacer; p != nil && told {
			p.Pause(apiErr.RetryAfter)
		}
		wait, reason, ok := c.retryDecision(k, err, rateRetries, otherRetries)
		if !ok {
			return status, err
		}
		if reason == "429" {
			rateRetries++
		} else {
			otherRetries++
		}
		if h := c.opts.Hooks.OnRetry; h != nil {
			h(k.endpoint, reason, wait)
		}
		if p := c.opts.Pacer; p != nil && reason == "429" {
			if !told {
				p.Pause(wait) // the client's own backoff, for every caller
			}
			continue // this retry waits in the pacer with the others
		}
		if serr := c.opts.Sleep(ctx, wait); serr != nil {
			return status, fmt.Errorf("%w (gave up waiting to retry: %w)", err, serr)
		}
	}
}

// retryDecision says whether to retry err and after how long.
func (c *Client) retryDecision(k call, err error, rateRetries, otherRetries int) (time.Duration, string, bool) {
	var apiErr *APIError
	if k.rule == retryNone {
		return 0, "", false
	}
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusTooManyRequests {
		if rateRetries >= Max429Retries {
			return 0, "", false
		}
		wait := apiErr.RetryAfter
		if wait <= 0 {
			base := time.Second << rateRetries
			// ±25% jitter so synchronized clients spread out.
			wait = time.Duration(float64(base) * (0.75 + 0.5*c.opts.Jitter()))
		}
		if wait > c.opts.MaxRetryAfter {
			return 0, "", false
		}
		return wait, "429", true
	}
	if k.rule != retrySafe || otherRetries >= 1 {
		return 0, "", false
	}
	if errors.Is(err, ErrServer) {
		return c.opts.ServerRetryDelay, "5xx", true
	}
	var te *TransportError
	if errors.As(err, &te) {
		return c.opts.ServerRetryDelay, "network", true
	}
	return 0, "", false
}

// maxErrorBody bounds what is read of an error answer; maxBody of a
// success answer.
const (
	maxErrorBody = 64 << 10
	maxBody      = 4 << 20
)

func (c *Client) attempt(ctx context.Context, k call, u *url.URL, body []byte, out any) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, &TransportError{Endpoint: k.endpoint, Method: k.method, Timeout: errors.Is(err, context.DeadlineExceeded), Err: err}
	}
	// The attempt's bound covers the answer's body too: it is read here.
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var rdr io.Reader
	if body != nil {
		rdr = bytes.NewReader(body)
	}
	// "/" and then u: exactly the URL that is signed, not parsed again.
	req, err := http.NewRequestWithContext(ctx, k.method, "/", rdr)
	if err != nil {
		return 0, fmt.Errorf("apiclient: build %s request: %w", k.endpoint, err)
	}
	req.URL, req.Host = u, u.Host
	req.Header["Accept"] = []string{"application/json"} // canonical keys: direct writes
	if body != nil {
		req.Header["Content-Type"] = []string{"application/json"}
	}
	now := c.opts.Now()
	c.signer.Sign(req, body, now)
	if n, ok := ctx.Value(callCounterKey{}).(*atomic.Int32); ok {
		n.Add(1)
	}
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		c.observe(k.endpoint, 0, start)
		return 0, &TransportError{Endpoint: k.endpoint, Method: k.method, Timeout: isTimeout(err), Err: stripURL(err)}
	}
	defer func() {
		drain(resp.Body, maxBody) // read to its end, so the connection is kept
		resp.Body.Close()
	}()
	c.observe(k.endpoint, resp.StatusCode, start)
	if k.header != nil {
		*k.header = resp.Header
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if out == nil {
			return resp.StatusCode, nil
		}
		data, err := readLimited(resp.Body, maxBody, resp.ContentLength)
		if err != nil {
			return resp.StatusCode, &TransportError{Endpoint: k.endpoint, Method: k.method, Timeout: isTimeout(err), Err: stripURL(err)}
		}
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%w: %s %s: %w", ErrBadResponse, k.method, k.endpoint, err)
		}
		return resp.StatusCode, nil
	}
	return resp.StatusCode, c.errorFrom(k, resp, now)
}

// readLimited reads r to its end or limit bytes, into one buffer sized by
// the answer's Content-Length (sizeHint; -1 when unknown).
func readLimited(r io.Reader, limit, sizeHint int64) ([]byte, error) {
	size := int64(512)
	if sizeHint > 0 {
		size = min(sizeHint+1, limit) // +1: the read that sees EOF
	}
	b := make([]byte, 0, size)
	for int64(len(b)) < limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):min(int64(cap(b)), limit)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// drain reads what is left of r, up to limit bytes.
func drain(r io.Reader, limit int64) {
	var buf [512]byte
	for limit > 0 {
		n, err := r.Read(buf[:min(int64(len(buf)), limit)])
		limit -= int64(n)
		if err != nil {
			return
		}
	}
}

func (c *Client) observe(endpoint string, status int, start time.Time) {
	if h := c.opts.Hooks.OnAttempt; h != nil {
		h(endpoint, status, time.Since(start))
	}
}

func (c *Client) errorFrom(k call, resp *http.Response, sentAt time.Time) error {
	raw, _ := readLimited(resp.Body, maxErrorBody, resp.ContentLength)
	e := &APIError{Endpoint: k.endpoint, Method: k.method, Status: resp.StatusCode, Body: raw}
	var eb struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &eb) == nil {
		e.Message = eb.Message
	}
	e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.opts.Now())
	if d, ok := parseDate(resp.Header.Get("Date")); ok {
		e.ServerDate = d
	}
	if e.Status == http.StatusUnauthorized && !e.ServerDate.IsZero() {
		// Date has one-second resolution; compare with the signing time.
		off := e.ServerDate.Sub(sentAt.Truncate(time.Second))
		if off > MaxClockSkew || off < -MaxClockSkew {
			return &ClockSkewError{Offset: off, Err: e}
		}
	}
	return e
}

func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if t, ok := parseDate(v); ok {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// parseDate reads an HTTP date in the usual GMT form or the platform's UTC form.
func parseDate(v string) (time.Time, bool) {
	if v == "" {
		return time.Time{}, false
	}
	if t, err := http.ParseTime(v); err == nil {
		return t, true
	}
	if t, err := time.Parse(DateLayout+" UTC", v); err == nil {
		return t, true
	}
	return time.Time{}, false
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// stripURL drops the *url.Error wrapper, whose text repeats the full URL
// (with the user's email in the query) in every log line.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
