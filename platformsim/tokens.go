package platformsim

import (
	"encoding/json"
	"html/template"
	"net/http"
	"strings"
	"time"
)

// issueToken answers POST /login-token/{userId}.
func (s *Server) issueToken(w http.ResponseWriter, r *http.Request, body []byte) {
	var redirectTo string
	if len(strings.TrimSpace(string(body))) > 0 {
		var in struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			writeError(w, http.StatusBadRequest, "malformed JSON")
			return
		}
		if v, ok := in.Properties["redirectTo"]; ok {
			str, isString := v.(string)
			if !isString || !relativePath(str) {
				writeError(w, http.StatusBadRequest, "properties.redirectTo must be a relative path starting with /")
				return
			}
			redirectTo = str
		}
	}
	id := r.PathValue("userId")
	token := randomString(32) // 256 bits
	now := s.now()
	s.mu.Lock()
	if _, ok := s.byID[id]; !ok {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "user not found")
		return
	}
	s.tokens[token] = &loginToken{userID: id, redirectTo: redirectTo, expires: now.Add(s.cfg.TokenTTL)}
	s.issued++
	if s.issued%1024 == 0 {
		s.purgeTokensLocked(now)
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"loginToken": token, "expiresIn": int64(s.cfg.TokenTTL / time.Second)})
}

// purgeTokensLocked drops tokens expired for a while, keeping memory bounded.
func (s *Server) purgeTokensLocked(now time.Time) {
	for k, t := range s.tokens {
		if now.Sub(t.expires) > s.cfg.TokenTTL {
			delete(s.tokens, k)
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
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[token]
	switch {
	case !ok:
		return TokenUnknown
	case t.consumed:
		return TokenConsumed
	case !s.now().Before(t.expires):
		return TokenExpired
	}
	return TokenUnconsumed
}

// exchange answers the browser's GET /login-token/login/{token}: one use
// only, then a session cookie and a redirect.
func (s *Server) exchange(w http.ResponseWriter, r *http.Request) {
	s.calls.add(EndpointExchange)
	token := r.PathValue("token")
	now := s.now()
	f := s.faults.take(EndpointExchange)
	if f.Status != 0 {
		writeError(w, f.Status, "injected fault")
		return
	}
	s.mu.Lock()
	t, ok := s.tokens[token]
	var status int
	switch {
	case !ok:
		status = http.StatusNotFound
	case t.consumed:
		status = http.StatusConflict
	case !now.Before(t.expires):
		status = http.StatusNotFound
	default:
		t.consumed = true
	}
	var sid string
	if status == 0 {
		sid = randomString(32)
		s.sessions[sid] = t.userID
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
