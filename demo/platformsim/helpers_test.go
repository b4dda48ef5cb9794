package platformsim

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/fakeclock"
)

var (
	admin  = Credential{Key: "admin-key", Secret: "admin-secret", Admin: true}
	member = Credential{Key: "member-key", Secret: "member-secret"}
)

type env struct {
	sim   *Server
	srv   *httptest.Server
	clock *fakeclock.Clock
	http  *http.Client
}

func newEnv(t *testing.T, tweak ...func(*Config)) *env {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	cfg := Config{Credentials: []Credential{admin, member}, Now: clock.Now}
	for _, f := range tweak {
		f(&cfg)
	}
	sim, err := New(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	hc := srv.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &env{sim: sim, srv: srv, clock: clock, http: hc}
}

// signSpec signs by the spec's rules, written out by hand here.
func signSpec(method string, body []byte, date, fullURL, key, secret string) string {
	sum := md5.Sum(body)
	sts := method + "\n" + hex.EncodeToString(sum[:]) + "\n" + date + "\n" + fullURL
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(sts))
	return "SVC " + key + ":" + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func (e *env) date() string { return e.clock.Now().Format("Mon, 02 Jan 2006 15:04:05") + " UTC" }

// call sends a signed request with cred and returns status and body.
func (e *env) call(t *testing.T, cred Credential, method, pathAndQuery string, body []byte) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+pathAndQuery, bytes.NewReader(body))
	require.NoError(t, err)
	date := e.date()
	req.Header.Set("Date", date)
	req.Header.Set("Authorization", signSpec(method, body, date, e.srv.URL+pathAndQuery, cred.Key, cred.Secret))
	return e.do(t, req)
}

func (e *env) do(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := e.http.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	}
	return resp.StatusCode, out
}

func (e *env) createUser(t *testing.T, email string) (int, map[string]any) {
	b, _ := json.Marshal(map[string]string{"firstName": "Fi", "lastName": "La", "email": email})
	return e.call(t, admin, "POST", "/api/5/public/users", b)
}

func (e *env) issueToken(t *testing.T, userID string, body string) string {
	t.Helper()
	status, out := e.call(t, admin, "POST", "/api/5/login-token/"+userID, []byte(body))
	require.Equal(t, 200, status, out)
	return out["loginToken"].(string)
}
