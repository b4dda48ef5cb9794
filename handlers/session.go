package handlers

import (
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/internal/seal"
	"github.com/ssobridge/ssobridge/store"
)

// SessionConfig configures the browser session cookie.
type SessionConfig struct {
	HashKey  []byte // with BlockKey, derives the key that seals the cookies
	BlockKey []byte
	// PreviousHashKey and PreviousBlockKey (both or neither) still open
	// cookies sealed before a key rotation; new cookies use the current keys.
	PreviousHashKey  []byte
	PreviousBlockKey []byte
	MaxAge           time.Duration // absolute lifetime
	IdleTimeout      time.Duration // lifetime without requests
	Secure           bool          // https: Secure cookies
}

// SessionCookie is the bridge's session cookie name; on https it carries
// the __Host- prefix (this host only, Secure, path /), so no sibling
// subdomain can plant one.
const SessionCookie = "ssobridge_session"

// SessionKeys are one generation of the session keys.
type SessionKeys = seal.Keys

func (c SessionConfig) keys() SessionKeys { return SessionKeys{Hash: c.HashKey, Block: c.BlockKey} }
func (c SessionConfig) previousKeys() SessionKeys {
	return SessionKeys{Hash: c.PreviousHashKey, Block: c.PreviousBlockKey}
}

// sessionManager reads and writes the signed, encrypted session cookie and
// checks it against the account on every request: a disabled account, a
// raised epoch (password reset, sign-out) or an expired time voids it.
// gorilla/sessions writes the cookie through the sealed codec; the hot
// path opens the cookie straight into a sessionValues, without the map of
// interfaces a sessions.Session holds.
type sessionManager struct {
	cfg    SessionConfig
	name   string // the cookie's name
	store  *sessions.CookieStore
	sealer *seal.Sealer
	rules  *signin.Service // what makes a session valid
	now    func() time.Time
	// touched is told of each write of a session's last-seen time.
	touched func()
}

// signedIn is a request's valid session: the account and the stored
// session's ID (this device).
type signedIn struct {
	store.Account
	SessionID string
	Handoff   bool // begun by the portal's handoff
	// NoConsole: made by a way in that does not speak for the account's
	// admin role (an LMS without admin_roles, an IdP without an admin
	// group, or whose rule did not grant it): it opens no console until
	// the password upgrades it.
	NoConsole bool
}

// sessionFlags are how a session began.
type sessionFlags struct {
	handoff   bool // the portal's handoff
	noConsole bool // a way in without authority over the admin role
}

func newSessionManager(cfg SessionConfig, rules *signin.Service, now func() time.Time) *sessionManager {
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = 12 * time.Hour
	}
	if cfg.IdleTimeout <= 0 || cfg.IdleTimeout > cfg.MaxAge {
		cfg.IdleTimeout = cfg.MaxAge
	}
	sealer := seal.New(purposeSession, cfg.keys(), cfg.previousKeys(), cfg.MaxAge, now)
	cs := &sessions.CookieStore{Codecs: []securecookie.Codec{sealedSessionCodec{sealer}},
		Options: &sessions.Options{Path: "/", MaxAge: int(cfg.MaxAge / time.Second), HttpOnly: true, Secure: cfg.Secure, SameSite: http.SameSiteLaxMode}}
	name := SessionCookie
	if cfg.Secure {
		name = "__Host-" + SessionCookie
	}
	return &sessionManager{cfg: cfg, name: name, store: cs, sealer: sealer, rules: rules, now: now, touched: func() {}}
}

// sessionValues are what the session cookie holds.
type sessionValues struct {
	account, epoch, issued, lastSeen int64  // account id, its session epoch, unix seconds of sign-in and of the last request (minute resolution)
	handoff                          bool   // signed in by the portal's handoff: an end user's session, whoever the account is
	noConsole                        bool   // signed in by a way in that does not speak for the admin role
	token                            string // the session's random token; its SessionID names the stored session
}

// sessionFormat 4 added the no-console flag, 3 the handoff flag. A
// format-3 cookie still opens, as a session that opens no console until
// the password upgrades it (it cannot say whether its way in spoke for
// the admin role); a format-2 cookie (the token, per-device sessions) as
// a handoff session likewise. Format 1 does not decode, and its holder
// signs in again.
const (
	sessionFormat   = 4
	sessionFormatV3 = 3
	sessionFormatV2 = 2
)

// maxToken bounds the token a cookie may carry.
const maxToken = 64

// encode writes v compactly: the format, four varints, the token with its
// length. gob, securecookie's default, cost more than the whole signed API
// call per launch.
func (v sessionValues) encode() ([]byte, error) {
	if v.token == "" || len(v.token) > maxToken {
		return nil, errors.New("session: token missing")
	}
	b := make([]byte, 1, 1+4*binary.MaxVarintLen64+2+len(v.token))
	b[0] = sessionFormat
	for _, n := range [...]int64{v.account, v.epoch, v.issued, v.lastSeen} {
		b = binary.AppendVarint(b, n)
	}
	var flags byte
	if v.handoff {
		flags |= flagHandoff
	}
	if v.noConsole {
		flags |= flagNoConsole
	}
	b = append(b, flags, byte(len(v.token)))
	return append(b, v.token...), nil
}

func decodeSession(src []byte) (sessionValues, error) {
	var v sessionValues
	if len(src) == 0 || (src[0] != sessionFormat && src[0] != sessionFormatV3 && src[0] != sessionFormatV2) {
		return v, errors.New("session: unknown format")
	}
	format := src[0]
	src = src[1:]
	for _, dst := range [...]*int64{&v.account, &v.epoch, &v.issued, &v.lastSeen} {
		n, size := binary.Varint(src)
		if size <= 0 {
			return v, errors.New("session: truncated")
		}
		*dst, src = n, src[size:]
	}
	v.handoff = true // format 2: how it began is unknown
	if format != sessionFormatV2 {
		if len(src) == 0 || src[0]&^(flagHandoff|flagNoConsole) != 0 {
			return v, errors.New("session: bad flags")
		}
		v.handoff, v.noConsole, src = src[0]&flagHandoff != 0, src[0]&flagNoConsole != 0 || format == sessionFormatV3, src[1:]
	}
	if len(src) == 0 || int(src[0]) != len(src)-1 || src[0] == 0 || src[0] > maxToken {
		return v, errors.New("session: bad token")
	}
	v.token = string(src[1:])
	return v, nil
}

// The flags byte's bits.
const (
	flagHandoff   = 1
	flagNoConsole = 2
)

// Session value keys, as gorilla/sessions holds them.
const (
	keyAccount   = "aid"
	keyEpoch     = "ep"
	keyIssued    = "iat"
	keyLastSeen  = "seen"
	keyToken     = "sid"
	keyHandoff   = "via_handoff"
	keyNoConsole = "no_console"
)

func (v sessionValues) toMap() map[interface{}]interface{} {
	return map[interface{}]interface{}{keyAccount: v.account, keyEpoch: v.epoch, keyIssued: v.issued, keyLastSeen: v.lastSeen, keyToken: v.token, keyHandoff: v.handoff, keyNoConsole: v.noConsole}
}

func sessionValuesOf(m map[interface{}]interface{}) (sessionValues, bool) {
	var v sessionValues
	var ok [7]bool
	v.account, ok[0] = m[keyAccount].(int64)
	v.epoch, ok[1] = m[keyEpoch].(int64)
	v.issued, ok[2] = m[keyIssued].(int64)
	v.lastSeen, ok[3] = m[keyLastSeen].(int64)
	v.token, ok[4] = m[keyToken].(string)
	v.handoff, ok[5] = m[keyHandoff].(bool)
	v.noConsole, ok[6] = m[keyNoConsole].(bool)
	return v, len(m) == len(ok) && ok == [7]bool{true, true, true, true, true, true, true}
}

// sessionSerializer is the compact encoding as gorilla/sessions' view of
// it (the values map), for the sealed codec.
type sessionSerializer struct{}

func (sessionSerializer) Serialize(src interface{}) ([]byte, error) {
	m, ok := src.(map[interface{}]interface{})
	if !ok {
		return nil, errors.New("session: unexpected values")
	}
	v, ok := sessionValuesOf(m)
	if !ok {
		return nil, errors.New("session: unexpected values")
	}
	return v.encode()
}

func (sessionSerializer) Deserialize(src []byte, dst interface{}) error {
	m, ok := dst.(*map[interface{}]interface{})
	if !ok {
		return errors.New("session: unexpected destination")
	}
	v, err := decodeSession(src)
	if err != nil {
		return err
	}
	*m = v.toMap()
	return nil
}

// sealedSessionCodec is the sealer as a securecookie.Codec, the first of
// the cookie store's codecs: gorilla/sessions writes new cookies with it.
type sealedSessionCodec struct{ sealer *seal.Sealer }

func (c sealedSessionCodec) Encode(name string, value interface{}) (string, error) {
	b, err := sessionSerializer{}.Serialize(value)
	if err != nil {
		return "", err
	}
	return c.sealer.Seal(name, b), nil
}

func (c sealedSessionCodec) Decode(name, value string, dst interface{}) error {
	b, _, err := c.sealer.Open(nil, name, value)
	if err != nil {
		return err
	}
	return sessionSerializer{}.Deserialize(b, dst)
}

// read opens the session cookie's value.
func (m *sessionManager) read(value string) (sessionValues, error) {
	var buf [128]byte
	b, _, err := m.sealer.Open(buf[:0], m.name, value)
	if err != nil {
		return sessionValues{}, err
	}
	return decodeSession(b)
}

// save writes v as the session cookie through gorilla/sessions.
func (m *sessionManager) save(r *http.Request, w http.ResponseWriter, v sessionValues) error {
	s := sessions.NewSession(m.store, m.name)
	opts := *m.store.Options
	s.Options = &opts
	s.IsNew = true
	s.Values = v.toMap()
	return m.store.Save(r, w, s)
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
	value, ok := cookieValue(r, m.name)
	if !ok {
		return signedIn{}, errNoSession
	}
	v, err := m.read(value)
	if err != nil {
		return signedIn{}, errSessionExpired // decode failure: treated as signed out
	}
	valid, err := m.rules.Session(ctx, signin.Cookie{AccountID: v.account, Epoch: v.epoch, Issued: time.Unix(v.issued, 0),
		LastSeen: time.Unix(v.lastSeen, 0), Token: v.token})
	if errors.Is(err, signin.ErrSessionEnded) {
		return signedIn{}, errSessionExpired
	}
	if err != nil {
		return signedIn{}, err
	}
	if !valid.Touched.IsZero() {
		// The idle clock moved (at most once a minute): the cookie carries it.
		m.touched()
		v.lastSeen = valid.Touched.Unix()
		if err := m.save(r, w, v); err != nil {
			return signedIn{}, err
		}
	}
	return signedIn{Account: valid.Account, SessionID: valid.SessionID, Handoff: v.handoff, NoConsole: v.noConsole}, nil
}

// start replaces whatever session the browser had with a new one for acct
// (no fixation: no value of an earlier session survives), recorded in the
// store under a fresh random token.
// f says how it began (the portal's handoff, a way in without authority
// over the admin role).
func (m *sessionManager) start(ctx context.Context, r *http.Request, w http.ResponseWriter, acct store.Account, f sessionFlags) (string, error) {
	token, sid, now, err := m.rules.Start(ctx, acct, r.UserAgent())
	if err != nil {
		return "", err
	}
	return sid, m.save(r, w, sessionValues{account: acct.ID, epoch: acct.SessionEpoch, issued: now.Unix(), lastSeen: now.Unix(), handoff: f.handoff,
		noConsole: f.noConsole, token: token})
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
	ctxHandoff   = "via_handoff"
	ctxNoConsole = "no_console"
	// ctxConsoleBy: the account the admission admitted in this request,
	// and whether its way in spoke for its admin role (consoleGrant).
	ctxConsoleBy = "console_by"
)

// consoleGrant is what an admission said of the admin role: the account
// admitted, and whether its source holds an admin rule that granted the
// role at this arrival.
type consoleGrant struct {
	account int64
	ok      bool
}

// requireUser puts the signed-in account into the context.
func (h *server) requireUser(action noSessionAction) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			in, err := h.sessions.current(c.Request().Context(), c.Request(), c.Response())
			switch {
			case err == nil:
				c.Set(ctxAccount, in.Account)
				c.Set(ctxSessionID, in.SessionID)
				c.Set(ctxHandoff, in.Handoff)
				c.Set(ctxNoConsole, in.NoConsole)
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

// requireAdmin lets admins in, when the way their session was made may
// speak for the admin role. A session the portal's handoff began is an
// end user's, even for an admin account (whoever holds the portal's key
// can mint a handoff for any address), unless portal.admin_sessions
// allows handoff sessions in; a session of a way in that does not hold
// the account's admin rule (an LMS trusted for the admin's domain, an IdP
// without an admin group) is one too. Either asks for the password (a
// step-up that replaces the session) before the console opens.
func (h *server) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		acct, ok := account(c)
		if !ok || !acct.Admin {
			return errAdminOnly
		}
		handoff, _ := c.Get(ctxHandoff).(bool)
		noConsole, _ := c.Get(ctxNoConsole).(bool)
		if handoff && !h.HomeAdminSessions || noConsole && !handoff {
			next := "/admin/"
			if c.Request().Method == http.MethodGet {
				next = c.Request().URL.RequestURI()
			}
			return c.Redirect(http.StatusSeeOther, "/login?reauth=1&next="+url.QueryEscape(next))
		}
		return next(c)
	}
}

// account returns the signed-in account set by requireUser.
func account(c echo.Context) (store.Account, bool) {
	a, ok := c.Get(ctxAccount).(store.Account)
	return a, ok
}
