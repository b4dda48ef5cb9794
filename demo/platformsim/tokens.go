package platformsim

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// issueToken answers POST /login-token/{userId}.
func (s *Server) issueToken(w http.ResponseWriter, r *http.Request, body []byte) {
	var redirectTo string
	sh := s.cfg.Shapes
	if len(strings.TrimSpace(string(body))) > 0 {
		var in any
		if err := json.Unmarshal(body, &in); err != nil {
			writeError(w, http.StatusBadRequest, "malformed JSON")
			return
		}
		if sh.TokenRedirect == none {
			writeError(w, http.StatusBadRequest, "this request takes no body")
			return
		}
		if v, ok := getPath(in, sh.TokenRedirect); ok {
			str, isString := v.(string)
			if !isString || !relativePath(str) {
				writeError(w, http.StatusBadRequest, sh.TokenRedirect+" must be a relative path starting with /")
				return
			}
			redirectTo = str
		}
	}
	id := r.PathValue("userId")
	s.mu.Lock()
	u, ok := s.byID[id]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "user not found")
		return
	}
	token := s.sealToken(u.ID, s.now().Add(s.cfg.TokenTTL), redirectTo)
	out := map[string]any{"expiresIn": int64(s.cfg.TokenTTL / time.Second)}
	setPath(out, sh.TokenField, token)
	writeJSON(w, http.StatusOK, out)
}

// A login token carries its own state, authenticated with the emulator's
// key: 128 random bits, the user, the expiry and the redirect. Only
// consumed tokens are remembered (until they expire), so memory follows
// exchanges, not issues: a platform issuing thousands of tokens a second
// that are never used (the load tool does) holds nothing for them. Before,
// a table of every issued token was 60% of the load tool's live heap.
const (
	nonceLen  = 16
	tokenMAC  = 16
	tokenHead = nonceLen + 8 + 8 // nonce, user id, expiry
)

type nonce [nonceLen]byte

// sealedToken is a token's content once its MAC is checked.
type sealedToken struct {
	nonce      nonce
	userID     int64
	expires    int64 // Unix nanoseconds
	redirectTo string
}

func (s *Server) sealToken(userID int64, expires time.Time, redirectTo string) string {
	buf := make([]byte, tokenHead, tokenHead+len(redirectTo)+tokenMAC)
	if _, err := rand.Read(buf[:nonceLen]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	binary.BigEndian.PutUint64(buf[nonceLen:], uint64(userID))
	binary.BigEndian.PutUint64(buf[nonceLen+8:], uint64(expires.UnixNano()))
	buf = append(buf, redirectTo...)
	m := hmac.New(sha256.New, s.tokenKey[:])
	m.Write(buf)
	buf = m.Sum(buf)[:len(buf)+tokenMAC]
	return tokenEncoding.EncodeToString(buf)
}

// tokenEncoding is strict: base64's last character has spare bits, and
// lenient decoding let a token found by FuzzOpenToken open under two
// spellings. Read-only after init.
var tokenEncoding = base64.RawURLEncoding.Strict()

// openToken checks a token's MAC and reads it; false for text the
// emulator never issued.
func (s *Server) openToken(text string) (sealedToken, bool) {
	buf, err := tokenEncoding.DecodeString(text)
	if err != nil || len(buf) < tokenHead+tokenMAC {
		return sealedToken{}, false
	}
	body, mac := buf[:len(buf)-tokenMAC], buf[len(buf)-tokenMAC:]
	m := hmac.New(sha256.New, s.tokenKey[:])
	m.Write(body)
	if !hmac.Equal(m.Sum(nil)[:tokenMAC], mac) {
		return sealedToken{}, false
	}
	var t sealedToken
	copy(t.nonce[:], body)
	t.userID = int64(binary.BigEndian.Uint64(body[nonceLen:]))
	t.expires = int64(binary.BigEndian.Uint64(body[nonceLen+8:]))
	t.redirectTo = string(body[tokenHead:])
	return t, true
}

// purgeConsumedLocked forgets consumed tokens a lifetime after they
// expired (a consumed token answers 409 until then, then 404 as expired).
func (s *Server) purgeConsumedLocked(now time.Time) {
	cutoff := now.Add(-s.cfg.TokenTTL).UnixNano()
	for n, expires := range s.consumed {
		if expires < cutoff {
			delete(s.consumed, n)
		}
	}
}

func relativePath(p string) bool {
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") && !strings.ContainsAny(p, "\\\r\n\t")
}

// TokenState is the lifecycle state of a login token.
type TokenState string

// Token states of the spec.
const (
	TokenUnknown    TokenState = "unknown"
	TokenUnconsumed TokenState = "unconsumed"
	TokenConsumed   TokenState = "consumed"
	TokenExpired    TokenState = "expired"
)

// TokenState reports the state of a token (for tests).
func (s *Server) TokenState(token string) TokenState {
	t, ok := s.openToken(token)
	if !ok {
		return TokenUnknown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, consumed := s.consumed[t.nonce]
	switch {
	case consumed:
		return TokenConsumed
	case s.now().UnixNano() >= t.expires:
		return TokenExpired
	}
	return TokenUnconsumed
}

// exchange answers the browser's GET /login-token/login/{token}: one use
// only, then a session cookie and a redirect.
func (s *Server) exchange(w http.ResponseWriter, r *http.Request) {
	s.calls.add(EndpointExchange)
	t, known := s.openToken(r.PathValue("token"))
	now := s.now()
	f := s.faults.take(EndpointExchange)
	if f.Status != 0 {
		writeError(w, f.Status, "injected fault")
		return
	}
	s.mu.Lock()
	_, consumed := s.consumed[t.nonce]
	_, userExists := s.byID[strconv.FormatInt(t.userID, 10)]
	var status int
	switch {
	case !known || !userExists:
		status = http.StatusNotFound
	case consumed:
		status = http.StatusConflict
	case now.UnixNano() >= t.expires:
		status = http.StatusNotFound
	default:
		s.consumed[t.nonce] = t.expires
		s.exchanged++
		if s.exchanged%1024 == 0 {
			s.purgeConsumedLocked(now)
		}
	}
	var sid string
	if status == 0 {
		sid = randomString(32)
		s.sessions[sid] = strconv.FormatInt(t.userID, 10)
	}
	s.mu.Unlock()
	switch status {
	case http.StatusNotFound:
		writeError(w, status, "login token unknown or expired")
		return
	case http.StatusConflict:
		writeError(w, status, "login token already used")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: sid, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	target := t.redirectTo
	if target == "" {
		target = "/editor"
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, target, http.StatusFound)
}

var editorPage = template.Must(template.New("editor").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Video editor (platform emulator)</title>
<style>body{font-family:system-ui,sans-serif;margin:0;background:#111827;color:#f9fafb}
header{padding:1rem 1.5rem;background:#1f2937;display:flex;justify-content:space-between;align-items:center}
main{padding:2rem 1.5rem;max-width:48rem}.note{color:#9ca3af;font-size:.9rem}
.stage{margin-top:1.5rem;border:2px dashed #4b5563;border-radius:.75rem;padding:3rem 1rem;text-align:center;color:#9ca3af}</style>
</head><body>
<header><strong>Video editor</strong><span class="note">platform emulator</span></header>
<main>
{{if .User}}<h1 id="who">Signed in as {{.User.FirstName}} {{.User.LastName}}</h1>
<p id="email">{{.User.Email}} · platform user {{.User.ID}}</p>
<p class="note">Opened at <code id="path">{{.Path}}</code>.</p>
<div class="stage">Your video project would open here.</div>
{{else}}<h1 id="who">Not signed in</h1>
<p>Open the editor from your partner portal to sign in.</p>{{end}}
</main></body></html>`))

// editor is the platform's landing page: it shows who the session cookie
// belongs to, so a browser test can see the handoff worked.
func (s *Server) editor(w http.ResponseWriter, r *http.Request) {
	var u *User
	if c, err := r.Cookie(SessionCookie); err == nil {
		s.mu.Lock()
		if id, ok := s.sessions[c.Value]; ok {
			if pu, ok := s.byID[id]; ok {
				eu := exportUser(pu)
				u = &eu
			}
		}
		s.mu.Unlock()
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if u == nil {
		w.WriteHeader(http.StatusUnauthorized)
	}
	_ = editorPage.Execute(w, map[string]any{"User": u, "Path": r.URL.Path})
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(SessionCookie); err == nil {
		s.mu.Lock()
		delete(s.sessions, c.Value)
		s.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, "/editor", http.StatusSeeOther)
}
