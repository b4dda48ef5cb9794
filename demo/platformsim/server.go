package platformsim

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssobridge/ssobridge/internal/randid"
	"golang.org/x/time/rate"
)

// Defaults of the emulator's settings.
const (
	DefaultSkew         = 5 * time.Minute
	DefaultTokenTTL     = 300 * time.Second
	DefaultSchemeHMAC   = "SVC"
	DefaultSchemeSimple = "SVCSIMPLE"
	// FirstUserID is above 2^53 so that a client decoding ids as floats
	// breaks in tests instead of in production.
	FirstUserID = int64(1)<<53 + 1
	// SessionCookie is the emulator's browser session cookie.
	SessionCookie = "platform_session"
	apiPrefix     = "/api/5"
	maxBodyBytes  = 1 << 20
)

// Credential is an API credential of the Instance.
type Credential struct {
	Key    string
	Secret string
	Admin  bool // the credential's user is an admin of the Instance
}

// Config configures a Server. Zero values take the defaults.
type Config struct {
	Credentials  []Credential
	SchemeHMAC   string        // default "SVC"
	SchemeSimple string        // default "SVCSIMPLE"
	Skew         time.Duration // accepted Date distance; default 5 min
	TokenTTL     time.Duration // login token lifetime; default 300 s
	RateLimit    float64       // requests per second per credential; 0 = off
	RateBurst    int           // default: RateLimit rounded up, at least 1
	Now          func() time.Time
	Logger       *slog.Logger // default: discard
	// Control exposes the JSON control endpoint under /_sim/ (off by default).
	Control bool
	// RacyCreate makes POST /public/users check for the email, pause for
	// RacyPause, then insert without a unique check: a platform whose
	// duplicate check races, so concurrent creates of one email can make
	// duplicates (for testing the bridge's own serialisation).
	RacyCreate bool
	RacyPause  time.Duration // default 50 ms
	// Shapes say how the open parts of the API are shaped (LoadShapes);
	// the zero value is the default shape.
	Shapes Shapes
	// UsersFile, when set, keeps the users across restarts: read at New,
	// a line appended for every user created or deleted. Without it the
	// users live in memory only, and a new emulator starts its ids afresh.
	UsersFile string
}

// Server is the emulated platform. It is an http.Handler.
type Server struct {
	cfg   Config
	creds map[string]Credential // by key
	mux   *http.ServeMux

	clockOffset atomic.Int64 // moves the platform's clock, in ns

	mu        sync.Mutex
	users     []*user
	byEmail   map[string]*user // lower-cased email
	byID      map[string]*user
	nextID    int64
	tokenKey  [32]byte          // authenticates login tokens (see sealToken)
	consumed  map[nonce]int64   // consumed tokens' nonces -> expiry (Unix ns)
	sessions  map[string]string // session id -> userId
	exchanged int

	adminsMu sync.RWMutex
	admins   map[string]bool // credential key -> admin of the Instance

	limitersMu sync.Mutex
	limiters   map[string]*rate.Limiter

	faults faultTable
	calls  callCounter
}

type user struct {
	ID        int64  `json:"userId"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Email     string `json:"email"`
	Role      string `json:"role"`
}

// New returns an emulator for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.SchemeHMAC == "" {
		cfg.SchemeHMAC = DefaultSchemeHMAC
	}
	if cfg.SchemeSimple == "" {
		cfg.SchemeSimple = DefaultSchemeSimple
	}
	if cfg.Skew <= 0 {
		cfg.Skew = DefaultSkew
	}
	if cfg.RacyPause <= 0 {
		cfg.RacyPause = 50 * time.Millisecond
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = DefaultTokenTTL
	}
	if cfg.RateLimit < 0 {
		return nil, fmt.Errorf("platformsim: rate limit must be >= 0")
	}
	if cfg.RateBurst <= 0 {
		cfg.RateBurst = max(1, int(cfg.RateLimit+0.999))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Shapes.fill()
	if err := cfg.Shapes.check(); err != nil {
		return nil, fmt.Errorf("platformsim: shapes: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if len(cfg.Credentials) == 0 {
		return nil, fmt.Errorf("platformsim: at least one credential is needed")
	}
	s := &Server{cfg: cfg, creds: map[string]Credential{}, byEmail: map[string]*user{}, byID: map[string]*user{},
		nextID: FirstUserID, consumed: map[nonce]int64{}, sessions: map[string]string{}, limiters: map[string]*rate.Limiter{}}
	if _, err := rand.Read(s.tokenKey[:]); err != nil {
		return nil, fmt.Errorf("platformsim: token key: %w", err)
	}
	for _, c := range cfg.Credentials {
		if c.Key == "" || c.Secret == "" {
			return nil, fmt.Errorf("platformsim: credential key and secret must not be empty")
		}
		if _, dup := s.creds[c.Key]; dup {
			return nil, fmt.Errorf("platformsim: duplicate credential key %q", c.Key)
		}
		s.creds[c.Key] = c
	}
	if cfg.UsersFile != "" {
		if err := s.loadUsers(cfg.UsersFile); err != nil {
			return nil, err
		}
	}
	s.admins = map[string]bool{}
	for _, c := range cfg.Credentials {
		s.admins[c.Key] = c.Admin
	}
	s.routes()
	return s, nil
}

// NewCredential returns a random credential.
func NewCredential(admin bool) Credential {
	return Credential{Key: "key-" + randomString(9), Secret: randomString(24), Admin: admin}
}

func randomString(n int) string {
	return randid.Token(n)
}

// now is the platform's clock (the configured clock plus any offset).
func (s *Server) now() time.Time {
	return s.cfg.Now().Add(time.Duration(s.clockOffset.Load()))
}

// SetClockOffset moves the platform's clock by d (for clock-skew tests).
func (s *Server) SetClockOffset(d time.Duration) { s.clockOffset.Store(int64(d)) }

// Endpoint names used by faults and call counts.
const (
	EndpointListUsers  = "list_users"
	EndpointCreateUser = "create_user"
	EndpointIssueToken = "issue_token"
	EndpointExchange   = "exchange"
)

func (s *Server) routes() {
	m := http.NewServeMux()
	sh := s.cfg.Shapes
	exchange, _ := sh.exchangePath() // checked in New
	m.Handle("GET "+apiPrefix+sh.UsersPath, s.api(EndpointListUsers, s.listUsers))
	m.Handle("POST "+apiPrefix+sh.UsersPath, s.api(EndpointCreateUser, s.createUser))
	m.Handle(sh.TokenMethod+" "+apiPrefix+sh.TokenPath, s.api(EndpointIssueToken, s.issueToken))
	m.HandleFunc("GET "+exchange, s.exchange)
	m.HandleFunc("GET /{$}", s.editor)
	m.HandleFunc("GET /editor", s.editor)
	m.HandleFunc("GET /editor/", s.editor)
	m.HandleFunc("POST /logout", s.logout)
	if s.cfg.Control {
		s.controlRoutes(m)
	}
	s.mux = m
}

// ServeHTTP answers 404 and 405 with the platform's JSON error body.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if pattern == "" {
		rec := &statusProbe{header: http.Header{}}
		h.ServeHTTP(rec, r)
		status := rec.status
		if status != http.StatusMethodNotAllowed {
			status = http.StatusNotFound
		}
		if allow := rec.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		writeError(w, status, http.StatusText(status)+": "+r.Method+" "+logPath(r.URL.Path))
		return
	}
	// Through the mux again: only ServeMux.ServeHTTP sets path values.
	s.mux.ServeHTTP(w, r)
}

// statusProbe captures what ServeMux's own 404/405 handler would answer.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header         { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *statusProbe) WriteHeader(status int)      { p.status = status }

// logPath hides login tokens from logs and error messages.
func logPath(p string) string {
	if strings.HasPrefix(p, apiPrefix+"/login-token/login/") {
		return apiPrefix + "/login-token/login/{token}"
	}
	return p
}

// api wraps a Partner API endpoint: call counting, authentication, faults,
// the admin check, the rate limit, logging.
func (s *Server) api(endpoint string, h func(w http.ResponseWriter, r *http.Request, body []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			s.cfg.Logger.Debug("platform api", "endpoint", endpoint, "method", r.Method, "path", logPath(r.URL.Path), "status", sw.status, "duration", time.Since(start))
		}()
		s.calls.add(endpoint)
		w.Header().Set("Date", formatHTTPDate(s.now()))
		body, err := io.ReadAll(http.MaxBytesReader(sw, r.Body, maxBodyBytes))
		if err != nil {
			writeError(sw, http.StatusBadRequest, "request body too large or unreadable")
			return
		}
		cred, reason := s.authenticate(r, body)
		if reason != "" {
			writeError(sw, http.StatusUnauthorized, reason)
			return
		}
		f := s.faults.take(endpoint)
		if f.Latency > 0 {
			t := time.NewTimer(f.Latency)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		if f.Reset {
			resetConnection(sw)
			return
		}
		if !s.isAdmin(cred.Key) {
			writeError(sw, http.StatusForbidden, "the API user is not an admin of this Instance")
			return
		}
		if wait, ok := s.allow(cred.Key); !ok {
			s.calls.mu.Lock()
			s.calls.limited++
			s.calls.mu.Unlock()
			sw.Header().Set("Retry-After", fmt.Sprint(int((wait+time.Second-1)/time.Second)))
			writeError(sw, http.StatusTooManyRequests, "rate limit reached")
			return
		}
		if f.Status != 0 && !f.Ghost {
			if f.RetryAfter > 0 {
				sw.Header().Set("Retry-After", fmt.Sprint(f.RetryAfter))
			}
			writeError(sw, f.Status, "injected fault")
			return
		}
		if f.Ghost {
			// Do the work, then answer as if it failed.
			h(&discardWriter{header: http.Header{}}, r, body)
			writeError(sw, f.Status, "injected fault after the work was done")
			return
		}
		h(sw, r, body)
	})
}

func (s *Server) allow(key string) (time.Duration, bool) {
	if s.cfg.RateLimit <= 0 {
		return 0, true
	}
	s.limitersMu.Lock()
	l, ok := s.limiters[key]
	if !ok {
		l = rate.NewLimiter(rate.Limit(s.cfg.RateLimit), s.cfg.RateBurst)
		s.limiters[key] = l
	}
	s.limitersMu.Unlock()
	now := s.cfg.Now()
	r := l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
	w.ResponseWriter.WriteHeader(s)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type discardWriter struct{ header http.Header }

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

func resetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		writeError(w, http.StatusBadGateway, "connection reset")
		return
	}
	conn.Close()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"message": msg, "status": status})
}

func formatHTTPDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// SetAdmin makes the user behind credential key an admin of the Instance,
// or not (as a platform admin would).
func (s *Server) SetAdmin(key string, admin bool) {
	s.adminsMu.Lock()
	defer s.adminsMu.Unlock()
	s.admins[key] = admin
}

func (s *Server) isAdmin(key string) bool {
	s.adminsMu.RLock()
	defer s.adminsMu.RUnlock()
	return s.admins[key]
}

// Credentials returns the configured credentials, the first being the one
// the embedded demo gives the bridge.
func (s *Server) Credentials() []Credential {
	return append([]Credential(nil), s.cfg.Credentials...)
}
