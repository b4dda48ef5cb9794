package handlers

import (
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts"
)

// SessionConfig configures the browser session cookie.
type SessionConfig struct {
	HashKey     []byte        // authenticates the cookie (HMAC)
	BlockKey    []byte        // encrypts it (AES)
	MaxAge      time.Duration // absolute lifetime
	IdleTimeout time.Duration // lifetime without requests
	Secure      bool          // https: Secure cookies
}

// SessionCookie is the bridge's session cookie name; on https it carries
// the __Host- prefix (this host only, Secure, path /), so no sibling
// subdomain can plant one.
const SessionCookie = "ssobridge_session"

// Session value keys.
const (
	keyAccount  = "aid"  // account id
	keyEpoch    = "ep"   // account's session epoch at sign-in
	keyIssued   = "iat"  // unix seconds of sign-in
	keyLastSeen = "seen" // unix seconds of the last request (minute resolution)
	keyToken    = "sid"  // the session's random token; its SessionID names the stored session
)

// sessionManager reads and writes the signed, encrypted session cookie and
// checks it against the account on every request: a disabled account, a
// raised epoch (password reset, sign-out) or an expired time voids it.
type sessionManager struct {
	cfg   SessionConfig
	name  string // the cookie's name
	store *sessions.CookieStore
	accts interface {
		AccountByID(ctx context.Context, id int64) (accounts.Account, error)
		FreshAccountByID(ctx context.Context, id int64) (accounts.Account, error)
		CreateSession(ctx context.Context, s accounts.Session) error
		SessionByID(ctx context.Context, id string) (accounts.Session, error)
		TouchSession(ctx context.Context, id string, at time.Time) error
	}
	now func() time.Time
}

// signedIn is a request's valid session: the account and the stored
// session's ID (this device).
type signedIn struct {
	accounts.Account
	SessionID string
}

func newSessionManager(cfg SessionConfig, accts Accounts, now func() time.Time) *sessionManager {
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = 12 * time.Hour
	}
	if cfg.IdleTimeout <= 0 || cfg.IdleTimeout > cfg.MaxAge {
		cfg.IdleTimeout = cfg.MaxAge
	}
	cs := sessions.NewCookieStore(cfg.HashKey, cfg.BlockKey)
	for _, codec := range cs.Codecs {
		if sc, ok := codec.(*securecookie.SecureCookie); ok {
			sc.SetSerializer(sessionSerializer{})
		}
	}
	cs.Options = &sessions.Options{Path: "/", MaxAge: int(cfg.MaxAge / time.Second), HttpOnly: true, Secure: cfg.Secure, SameSite: http.SameSiteLaxMode}
	cs.MaxAge(int(cfg.MaxAge / time.Second))
	name := SessionCookie
	if cfg.Secure {
		name = "__Host-" + SessionCookie
	}
	return &sessionManager{cfg: cfg, name: name, store: cs, accts: accts, now: now}
}

// sessionSerializer encodes the session's four integers and its token
// compactly; gob, securecookie's default, cost more than the whole signed
// API call per launch. The bytes are then signed and encrypted by
// securecookie.
type sessionSerializer struct{}

// sessionKeys is the fixed order of the encoded integers; the token
// follows them.
var sessionKeys = [...]string{keyAccount, keyEpoch, keyIssued, keyLastSeen}

// sessionFormat 2 added the token (per-device sessions); a format-1
// cookie does not decode, and its holder signs in again.
const sessionFormat = 2

// maxToken bounds the token a cookie may carry.
const maxToken = 64

func (sessionSerializer) Serialize(src interface{}) ([]byte, error) {
	m, ok := src.(map[interface{}]interface{})
	if !ok || len(m) != len(sessionKeys)+1 {
		return nil, errors.New("session: unexpected values")
	}
	b := make([]byte, 1, 1+len(sessionKeys)*binary.MaxVarintLen64+1+maxToken)
	b[0] = sessionFormat
	for _, k := range sessionKeys {
		v, ok := m[k].(int64)
		if !ok {
			return nil, errors.New("session: value " + k + " missing")
		}
		b = binary.AppendVarint(b, v)
	}
	tok, ok := m[keyToken].(string)
	if !ok || tok == "" || len(tok) > maxToken {
		return nil, errors.New("session: token missing")
	}
	b = append(b, byte(len(tok)))
	return append(b, tok...), nil
}

func (sessionSerializer) Deserialize(src []byte, dst interface{}) error {
	m, ok := dst.(*map[interface{}]interface{})
	if !ok || len(src) == 0 || src[0] != sessionFormat {
		return errors.New("session: unknown format")
	}
	src = src[1:]
	vals := make(map[interface{}]interface{}, len(sessionKeys))
	for _, k := range sessionKeys {
		v, n := binary.Varint(src)
		if n <= 0 {
			return errors.New("session: truncated")
		}
		vals[k] = v
		src = src[n:]
	}
	if len(src) == 0 || int(src[0]) != len(src)-1 || src[0] == 0 || src[0] > maxToken {
		return errors.New("session: bad token")
	}
	vals[keyToken] = string(src[1:])
	*m = vals
	return nil
}

// Why a request has no usable session.
var (
	errNoSession      = errors.New("no session")
	errSessionExpired = errors.New("session expired")
)

// current returns the signed-in account and its session. errNoSession: no
// cookie; errSessionExpired: a cookie that is no longer valid (tampered,
// foreign key, timed out, account disabled, this device signed out, or
// signed out everywhere).
func (m *sessionManager) current(ctx context.Context, r *http.Request, w http.ResponseWriter) (signedIn, error) {
	if _, err := r.Cookie(m.name); err != nil {
		return signedIn{}, errNoSession
	}
	s, err := m.store.Get(r, m.name)
	if err != nil {
		return signedIn{}, errSessionExpired // decode failure: treated as signed out
	}
	id, ok1 := s.Values[keyAccount].(int64)
	epoch, ok2 := s.Values[keyEpoch].(int64)
	issued, ok3 := s.Values[keyIssued].(int64)
	seen, ok4 := s.Values[keyLastSeen].(int64)
	token, ok5 := s.Values[keyToken].(string)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return signedIn{}, errSessionExpired
	}
	now := m.now()
	if now.Sub(time.Unix(issued, 0)) > m.cfg.MaxAge || now.Sub(time.Unix(seen, 0)) > m.cfg.IdleTimeout {
		return signedIn{}, errSessionExpired
	}
	acct, err := m.accts.AccountByID(ctx, id)
	if err == nil && acct.SessionEpoch < epoch {
		// The cookie is newer than the account this instance holds: another
		// instance changed it (a sign-out, a new password) and has signed
		// in since. Read past the cache rather than void a valid session.
		acct, err = m.accts.FreshAccountByID(ctx, id)
	}
	if errors.Is(err, accounts.ErrNotFound) {
		return signedIn{}, errSessionExpired
	}
	if err != nil {
		return signedIn{}, err
	}
	if acct.Disabled || acct.SessionEpoch != epoch {
		return signedIn{}, errSessionExpired
	}
	// The device's session must still be on record (signing out one device
	// deletes only its record).
	sid := accounts.SessionID(token)
	sess, err := m.accts.SessionByID(ctx, sid)
	if errors.Is(err, accounts.ErrNotFound) || (err == nil && sess.AccountID != id) {
		return signedIn{}, errSessionExpired
	}
	if err != nil {
		return signedIn{}, err
	}
	// Refresh the idle clock at most once a minute, not on every request.
	if now.Unix()-seen >= 60 {
		s.Values[keyLastSeen] = now.Unix()
		if err := m.accts.TouchSession(ctx, sid, now); err != nil {
			return signedIn{}, err
		}
		if err := s.Save(r, w); err != nil {
			return signedIn{}, err
		}
	}
	return signedIn{Account: acct, SessionID: sid}, nil
}

// start replaces whatever session the browser had with a new one for acct
// (no fixation: no value of an earlier session survives), recorded in the
// store under a fresh random token.
func (m *sessionManager) start(ctx context.Context, r *http.Request, w http.ResponseWriter, acct accounts.Account) error {
	token, sid := accounts.NewSessionToken()
	now := m.now()
	if err := m.accts.CreateSession(ctx, accounts.Session{ID: sid, AccountID: acct.ID, CreatedAt: now, LastSeenAt: now,
		UserAgent: r.UserAgent()}); err != nil {
		return err
	}
	s := sessions.NewSession(m.store, m.name)
	opts := *m.store.Options
	s.Options = &opts
	s.IsNew = true
	s.Values[keyAccount] = acct.ID
	s.Values[keyEpoch] = acct.SessionEpoch
	s.Values[keyIssued] = now.Unix()
	s.Values[keyLastSeen] = now.Unix()
	s.Values[keyToken] = token
	return s.Save(r, w)
}

// clear deletes the session cookie.
func (m *sessionManager) clear(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: m.name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: m.cfg.Secure, SameSite: http.SameSiteLaxMode})
}

// What requireUser does when there is no session.
type noSessionAction int

const (
	redirectToLogin    noSessionAction = iota // pages: go to /login
	sessionExpiredPage                        // actions: the session-expired page (401)
)

// Context keys of the signed-in account and its session's ID.
const (
	ctxAccount   = "account"
	ctxSessionID = "session_id"
)

// requireUser puts the signed-in account into the context.
func (h *server) requireUser(action noSessionAction) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			in, err := h.sessions.current(c.Request().Context(), c.Request(), c.Response())
			switch {
			case err == nil:
				c.Set(ctxAccount, in.Account)
				c.Set(ctxSessionID, in.SessionID)
				return next(c)
			case errors.Is(err, errNoSession), errors.Is(err, errSessionExpired):
				if errors.Is(err, errSessionExpired) {
					h.sessions.clear(c.Response())
				}
				if action == redirectToLogin {
					target := "/login"
					if errors.Is(err, errSessionExpired) {
						target += "?expired=1"
					}
					return c.Redirect(http.StatusSeeOther, target)
				}
				return errSessionExpired
			default:
				return err
			}
		}
	}
}

func (h *server) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if acct, ok := account(c); !ok || !acct.Admin {
			return errAdminOnly
		}
		return next(c)
	}
}

// account returns the signed-in account set by requireUser.
func account(c echo.Context) (accounts.Account, bool) {
	a, ok := c.Get(ctxAccount).(accounts.Account)
	return a, ok
}
