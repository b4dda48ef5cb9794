package platformsim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuthentication(t *testing.T) {
	e := newEnv(t)
	path := "/api/5/public/users?query=a%40b.c&page=0"
	full := func() string { return e.srv.URL + path }
	tests := []struct {
		name   string
		header func(req *http.Request)
		want   int
	}{
		{"valid HMAC", func(r *http.Request) {}, 200},
		{"valid simple", func(r *http.Request) { r.Header.Set("Authorization", "SVCSIMPLE admin-secret") }, 200},
		{"missing Authorization", func(r *http.Request) { r.Header.Del("Authorization") }, 401},
		{"scheme without credential", func(r *http.Request) { r.Header.Set("Authorization", "SVCSIMPLE") }, 401},
		{"two spaces", func(r *http.Request) { r.Header.Set("Authorization", "SVCSIMPLE  admin-secret") }, 401},
		{"Bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer admin-secret") }, 401},
		{"quoted secret", func(r *http.Request) { r.Header.Set("Authorization", `SVCSIMPLE "admin-secret"`) }, 401},
		{"simple with the key", func(r *http.Request) { r.Header.Set("Authorization", "SVCSIMPLE admin-key") }, 401},
		{"simple wrong secret", func(r *http.Request) { r.Header.Set("Authorization", "SVCSIMPLE nope") }, 401},
		{"unknown key", func(r *http.Request) {
			r.Header.Set("Authorization", signSpec("GET", nil, e.date(), full(), "other", "admin-secret"))
		}, 401},
		{"wrong secret", func(r *http.Request) {
			r.Header.Set("Authorization", signSpec("GET", nil, e.date(), full(), "admin-key", "wrong"))
		}, 401},
		{"missing Date", func(r *http.Request) { r.Header.Del("Date") }, 401},
		{"GMT Date", func(r *http.Request) {
			d := strings.Replace(e.date(), "UTC", "GMT", 1)
			r.Header.Set("Date", d)
			r.Header.Set("Authorization", signSpec("GET", nil, d, full(), "admin-key", "admin-secret"))
		}, 401},
		{"Date header differs from signed Date", func(r *http.Request) {
			r.Header.Set("Date", e.clock.Now().Add(time.Second).Format("Mon, 02 Jan 2006 15:04:05")+" UTC")
		}, 401},
		{"Date 6 min old", func(r *http.Request) { resignAt(e, r, full(), -6*time.Minute) }, 401},
		{"Date 6 min ahead", func(r *http.Request) { resignAt(e, r, full(), 6*time.Minute) }, 401},
		{"Date 4 min old is within skew", func(r *http.Request) { resignAt(e, r, full(), -4*time.Minute) }, 200},
		{"path-only URL signed", func(r *http.Request) {
			r.Header.Set("Authorization", signSpec("GET", nil, e.date(), path, "admin-key", "admin-secret"))
		}, 401},
		{"query left out of signed URL", func(r *http.Request) {
			r.Header.Set("Authorization", signSpec("GET", nil, e.date(), e.srv.URL+"/api/5/public/users", "admin-key", "admin-secret"))
		}, 401},
		{"hex signature", func(r *http.Request) {
			a := signSpec("GET", nil, e.date(), full(), "admin-key", "admin-secret")
			r.Header.Set("Authorization", "SVC admin-key:"+fmt.Sprintf("%x", a))
		}, 401},
		{"wrong verb signed", func(r *http.Request) {
			r.Header.Set("Authorization", signSpec("POST", nil, e.date(), full(), "admin-key", "admin-secret"))
		}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", full(), nil)
			req.Header.Set("Date", e.date())
			req.Header.Set("Authorization", signSpec("GET", nil, e.date(), full(), "admin-key", "admin-secret"))
			tt.header(req)
			status, body := e.do(t, req)
			assert.Equal(t, tt.want, status, body)
			if tt.want == 401 {
				assert.Equal(t, float64(401), body["status"])
				assert.NotEmpty(t, body["message"])
			}
		})
	}
}

func resignAt(e *env, r *http.Request, full string, d time.Duration) {
	date := e.clock.Now().Add(d).Format("Mon, 02 Jan 2006 15:04:05") + " UTC"
	r.Header.Set("Date", date)
	r.Header.Set("Authorization", signSpec("GET", nil, date, full, "admin-key", "admin-secret"))
}

func TestBodyHashedAsSent(t *testing.T) {
	e := newEnv(t)
	signed := []byte(`{"firstName":"A","lastName":"B","email":"a@example.com"}`)
	sent := []byte(`{"firstName": "A", "lastName": "B", "email": "a@example.com"}`)
	req, _ := http.NewRequest("POST", e.srv.URL+"/api/5/public/users", bytes.NewReader(sent))
	req.Header.Set("Date", e.date())
	req.Header.Set("Authorization", signSpec("POST", signed, e.date(), e.srv.URL+"/api/5/public/users", "admin-key", "admin-secret"))
	status, _ := e.do(t, req)
	assert.Equal(t, 401, status, "a body serialised differently for hashing and sending")
	assert.Equal(t, 0, e.sim.UserCount())
}

func TestMemberCredentialIsForbiddenEverywhere(t *testing.T) {
	e := newEnv(t)
	u, err := e.sim.AddUser("A", "B", "a@example.com")
	require.NoError(t, err)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/5/public/users?query=a", ""},
		{"POST", "/api/5/public/users", `{"firstName":"X","lastName":"Y","email":"x@example.com"}`},
		{"POST", "/api/5/login-token/" + u.ID, ""},
	} {
		status, body := e.call(t, member, c.method, c.path, []byte(c.body))
		assert.Equal(t, 403, status, c.path)
		assert.Equal(t, float64(403), body["status"])
	}
	assert.Equal(t, 1, e.sim.UserCount(), "nothing created")
}

func TestWrongPathAndMethod(t *testing.T) {
	e := newEnv(t)
	status, body := e.call(t, admin, "GET", "/public/users", nil)
	assert.Equal(t, 404, status, "missing /api/5 prefix")
	assert.Equal(t, float64(404), body["status"])
	status, _ = e.call(t, admin, "GET", "/api/4/public/users", nil)
	assert.Equal(t, 404, status)
	status, body = e.call(t, admin, "DELETE", "/api/5/public/users", nil)
	assert.Equal(t, 405, status)
	assert.Equal(t, float64(405), body["status"])
}

func TestListUsersFilterAndPaging(t *testing.T) {
	e := newEnv(t)
	for i := range 45 {
		_, err := e.sim.AddUser("User", fmt.Sprintf("N%02d", i), fmt.Sprintf("user%02d@example.com", i))
		require.NoError(t, err)
	}
	_, err := e.sim.AddUser("Bob", "Builder", "Bob@Example.com")
	require.NoError(t, err)
	_, err = e.sim.AddUser("Decoy", "D", "bob@example.com.au")
	require.NoError(t, err)

	status, p := e.call(t, admin, "GET", "/api/5/public/users?query=BOB%40example.com", nil)
	require.Equal(t, 200, status)
	assert.Len(t, p["content"], 2, "substring, case-insensitive: the decoy matches too")

	status, p = e.call(t, admin, "GET", "/api/5/public/users?query=builder", nil)
	require.Equal(t, 200, status)
	assert.Len(t, p["content"], 1, "names match")

	status, p = e.call(t, admin, "GET", "/api/5/public/users?query=user", nil)
	require.Equal(t, 200, status)
	assert.Len(t, p["content"], 20, "default size 20")
	assert.Equal(t, float64(45), p["totalElements"])
	assert.Equal(t, float64(3), p["totalPages"])
	assert.Equal(t, float64(0), p["number"])

	_, p = e.call(t, admin, "GET", "/api/5/public/users?query=user&page=2&size=20", nil)
	assert.Len(t, p["content"], 5)
	assert.Equal(t, float64(2), p["number"])

	_, p = e.call(t, admin, "GET", "/api/5/public/users?size=1000", nil)
	assert.Equal(t, float64(100), p["size"], "max 100")
	_, p = e.call(t, admin, "GET", "/api/5/public/users?page=x&size=y", nil)
	assert.Equal(t, float64(0), p["number"], "invalid paging falls back to defaults")
	assert.Equal(t, float64(20), p["size"])
}

func TestCreateUser(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name string
		body string
		want int
	}{
		{"malformed JSON", `{"firstName":`, 400},
		{"not an object", `[1,2]`, 400},
		{"missing lastName", `{"firstName":"A","email":"a@example.com"}`, 400},
		{"empty firstName", `{"firstName":" ","lastName":"B","email":"a@example.com"}`, 400},
		{"invalid email", `{"firstName":"A","lastName":"B","email":"not-an-email"}`, 400},
		{"display-name email", `{"firstName":"A","lastName":"B","email":"A <a@example.com>"}`, 400},
		{"number as name", `{"firstName":1,"lastName":"B","email":"a@example.com"}`, 400},
		{"valid", `{"firstName":"Zoë","lastName":"Ångström","email":"zoe@example.com"}`, 201},
		{"duplicate, other case", `{"firstName":"Z","lastName":"Z","email":"ZOE@example.COM"}`, 409},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := e.call(t, admin, "POST", "/api/5/public/users", []byte(tt.body))
			assert.Equal(t, tt.want, status, body)
			if tt.want >= 400 {
				assert.Equal(t, float64(tt.want), body["status"], "error body carries the status")
				assert.NotEmpty(t, body["message"])
			} else {
				assert.Equal(t, "zoe@example.com", body["email"])
				assert.Equal(t, "Zoë", body["firstName"])
			}
		})
	}
	assert.Equal(t, 1, e.sim.UserCount())
}

func TestCreatedIDsExceedFloatPrecision(t *testing.T) {
	e := newEnv(t)
	b := []byte(`{"firstName":"A","lastName":"B","email":"a@example.com"}`)
	req, _ := http.NewRequest("POST", e.srv.URL+"/api/5/public/users", bytes.NewReader(b))
	req.Header.Set("Date", e.date())
	req.Header.Set("Authorization", signSpec("POST", b, e.date(), e.srv.URL+"/api/5/public/users", admin.Key, admin.Secret))
	resp, err := e.http.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	require.Equal(t, 201, resp.StatusCode)
	assert.Contains(t, string(raw), `"userId":9007199254740993`, "a bare JSON number above 2^53")
}

func TestParallelCreatesOfOneEmail(t *testing.T) {
	e := newEnv(t)
	const n = 30
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, _ := e.createUser(t, "race@example.com")
			statuses <- s
		}()
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	assert.Equal(t, map[int]int{201: 1, 409: n - 1}, count)
	assert.Len(t, e.sim.Users("race@example.com"), 1)
}

func TestLoginTokenLifecycle(t *testing.T) {
	e := newEnv(t)
	u, err := e.sim.AddUser("Ada", "Lovelace", "ada@example.com")
	require.NoError(t, err)

	status, body := e.call(t, admin, "POST", "/api/5/login-token/123", nil)
	assert.Equal(t, 404, status, "unknown user")
	assert.Equal(t, float64(404), body["status"])

	for _, bad := range []string{`{"properties":{"redirectTo":"https://evil.example/"}}`, `{"properties":{"redirectTo":"//evil.example"}}`,
		`{"properties":{"redirectTo":5}}`, `{bad json`} {
		status, _ := e.call(t, admin, "POST", "/api/5/login-token/"+u.ID, []byte(bad))
		assert.Equal(t, 400, status, bad)
	}

	status, body = e.call(t, admin, "POST", "/api/5/login-token/"+u.ID, nil)
	require.Equal(t, 200, status)
	tok := body["loginToken"].(string)
	assert.GreaterOrEqual(t, len(tok), 22, "at least 128 random bits")
	assert.Equal(t, float64(300), body["expiresIn"])
	assert.Equal(t, TokenUnconsumed, e.sim.TokenState(tok))

	resp := e.exchange(t, tok, nil)
	assert.Equal(t, 302, resp.StatusCode)
	assert.Equal(t, "/editor", resp.Header.Get("Location"))
	cookie := findCookie(resp, SessionCookie)
	require.NotNil(t, cookie)
	assert.True(t, cookie.HttpOnly)
	assert.Equal(t, http.SameSiteLaxMode, cookie.SameSite)
	assert.Equal(t, TokenConsumed, e.sim.TokenState(tok))

	page := e.get(t, "/editor", cookie)
	assert.Contains(t, page, "Signed in as Ada Lovelace")
	assert.Contains(t, e.get(t, "/editor", nil), "Not signed in")

	assert.Equal(t, 409, e.exchange(t, tok, nil).StatusCode, "consumed")
	assert.Equal(t, 404, e.exchange(t, "no-such-token", nil).StatusCode)
	flipped := []byte(tok)
	flipped[5] = 'A'
	if tok[5] == 'A' {
		flipped[5] = 'B'
	}
	assert.Equal(t, 404, e.exchange(t, string(flipped), nil).StatusCode, "one character off")
	assert.Equal(t, 404, e.exchange(t, strings.Repeat("*", len(tok)), nil).StatusCode, "right length, not base64url")

	withRedirect := e.issueToken(t, u.ID, `{"properties":{"redirectTo":"/editor/projects?id=7"}}`)
	resp = e.exchange(t, withRedirect, nil)
	assert.Equal(t, "/editor/projects?id=7", resp.Header.Get("Location"))

	expiring := e.issueToken(t, u.ID, "")
	e.clock.Advance(301 * time.Second)
	assert.Equal(t, TokenExpired, e.sim.TokenState(expiring))
	assert.Equal(t, 404, e.exchange(t, expiring, nil).StatusCode, "expired")
}

func TestTokenTTLSetting(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.TokenTTL = 10 * time.Second })
	u, err := e.sim.AddUser("A", "B", "a@example.com")
	require.NoError(t, err)
	_, body := e.call(t, admin, "POST", "/api/5/login-token/"+u.ID, nil)
	assert.Equal(t, float64(10), body["expiresIn"])
	e.clock.Advance(11 * time.Second)
	assert.Equal(t, TokenExpired, e.sim.TokenState(body["loginToken"].(string)))
}

// Issued tokens cost the emulator no memory (they carry their own state);
// consumed ones are remembered until a lifetime after they expire, so a
// platform that logs users in all day keeps a bounded table.
func TestConsumedTokensAreForgottenAfterExpiry(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.TokenTTL = 10 * time.Second })
	u, err := e.sim.AddUser("A", "B", "a@example.com")
	require.NoError(t, err)
	old := e.issueToken(t, u.ID, "")
	require.Equal(t, 302, e.exchange(t, old, nil).StatusCode)
	e.clock.Advance(15 * time.Second)
	assert.Equal(t, TokenConsumed, e.sim.TokenState(old), "expired but remembered: reuse still answers 409")
	assert.Equal(t, 409, e.exchange(t, old, nil).StatusCode)
	e.clock.Advance(6 * time.Second)
	for range 1023 { // the table is swept every 1024 exchanges
		require.Equal(t, 302, e.exchange(t, e.issueToken(t, u.ID, ""), nil).StatusCode)
	}
	e.sim.mu.Lock()
	held := len(e.sim.consumed)
	e.sim.mu.Unlock()
	assert.Equal(t, 1023, held, "the old token was swept")
	assert.Equal(t, TokenExpired, e.sim.TokenState(old))
	assert.Equal(t, 404, e.exchange(t, old, nil).StatusCode)
}

func TestTokensOfADeletedUserAreUnknown(t *testing.T) {
	e := newEnv(t)
	u, err := e.sim.AddUser("A", "B", "a@example.com")
	require.NoError(t, err)
	tok := e.issueToken(t, u.ID, "")
	require.True(t, e.sim.DeleteUser(u.ID))
	assert.Equal(t, 404, e.exchange(t, tok, nil).StatusCode)
}

func TestParallelExchangesOfOneToken(t *testing.T) {
	e := newEnv(t)
	u, err := e.sim.AddUser("A", "B", "a@example.com")
	require.NoError(t, err)
	tok := e.issueToken(t, u.ID, "")
	const n = 20
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- e.exchange(t, tok, nil).StatusCode
		}()
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	assert.Equal(t, map[int]int{302: 1, 409: n - 1}, count)
}

func TestRateLimitPerCredential(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.RateLimit = 5
		c.Credentials = append(c.Credentials, Credential{Key: "admin2", Secret: "admin2-secret", Admin: true})
	})
	count := map[int]int{}
	var last map[string]any
	for range 12 {
		s, body := e.call(t, admin, "GET", "/api/5/public/users", nil)
		count[s]++
		if s == 429 {
			last = body
		}
	}
	assert.Equal(t, 5, count[200], "burst of 5 with the clock standing still")
	assert.Equal(t, 7, count[429])
	assert.Equal(t, float64(429), last["status"])
	assert.NotEmpty(t, last["message"])

	s, _ := e.call(t, Credential{Key: "admin2", Secret: "admin2-secret"}, "GET", "/api/5/public/users", nil)
	assert.Equal(t, 200, s, "another credential has its own bucket")

	e.clock.Advance(time.Second)
	s, _ = e.call(t, admin, "GET", "/api/5/public/users", nil)
	assert.Equal(t, 200, s, "the bucket refills with time")
}

func TestRateLimitRetryAfter(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.RateLimit = 0.5 })
	s, _ := e.call(t, admin, "GET", "/api/5/public/users", nil)
	require.Equal(t, 200, s)
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/5/public/users", nil)
	req.Header.Set("Authorization", "SVCSIMPLE admin-secret")
	resp, err := e.http.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 429, resp.StatusCode)
	assert.Equal(t, "2", resp.Header.Get("Retry-After"))
}

func TestFaults(t *testing.T) {
	e := newEnv(t)
	e.sim.InjectFault(EndpointListUsers, Fault{Status: 429, RetryAfter: 3, Times: 2})
	e.sim.InjectFault(EndpointListUsers, Fault{Status: 503, Times: 1})
	var got []int
	for range 5 {
		s, _ := e.call(t, admin, "GET", "/api/5/public/users", nil)
		got = append(got, s)
	}
	assert.Equal(t, []int{429, 429, 503, 200, 200}, got)
	assert.Equal(t, 5, e.sim.Calls(EndpointListUsers))

	e.sim.InjectFault(EndpointCreateUser, Fault{Ghost: true, Times: 1})
	s, _ := e.createUser(t, "ghost@example.com")
	assert.Equal(t, 500, s, "the answer says failure")
	assert.Len(t, e.sim.Users("ghost@example.com"), 1, "but the user exists")

	e.sim.InjectFault(EndpointIssueToken, Fault{Status: 500})
	for range 3 {
		s, _ := e.call(t, admin, "POST", "/api/5/login-token/1", nil)
		assert.Equal(t, 500, s, "Times 0: until cleared")
	}
	e.sim.ClearFaults()
	s, _ = e.call(t, admin, "POST", "/api/5/login-token/1", nil)
	assert.Equal(t, 404, s)

	e.sim.InjectFault(EndpointListUsers, Fault{Reset: true, Times: 1})
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/5/public/users", nil)
	req.Header.Set("Authorization", "SVCSIMPLE admin-secret")
	// A fresh connection: Go retries an idempotent request once on a reused one.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	_, err := fresh.Do(req)
	assert.Error(t, err, "connection reset")

	e.sim.ResetCalls()
	assert.Equal(t, 0, e.sim.Calls(EndpointListUsers))
}

func TestLatencyStopsWithTheRequest(t *testing.T) {
	e := newEnv(t)
	e.sim.SetLatency("", time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/api/5/public/users", nil)
	req.Header.Set("Authorization", "SVCSIMPLE admin-secret")
	_, err := e.http.Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestClockOffsetAndResponseDate(t *testing.T) {
	e := newEnv(t)
	e.sim.SetClockOffset(10 * time.Minute)
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/5/public/users", nil)
	req.Header.Set("Date", e.date())
	req.Header.Set("Authorization", signSpec("GET", nil, e.date(), e.srv.URL+"/api/5/public/users", admin.Key, admin.Secret))
	resp, err := e.http.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 401, resp.StatusCode)
	d, err := http.ParseTime(resp.Header.Get("Date"))
	require.NoError(t, err)
	assert.Equal(t, e.clock.Now().Add(10*time.Minute), d, "the answer's Date shows the platform clock")
}

func TestControlEndpoint(t *testing.T) {
	off := newEnv(t)
	resp, err := off.http.Post(off.srv.URL+"/_sim/faults", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 404, resp.StatusCode, "off by default")

	e := newEnv(t, func(c *Config) { c.Control = true })
	post := func(path, body string) int {
		resp, err := e.http.Post(e.srv.URL+path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, 400, post("/_sim/faults", `{"endpoint":"nope","fault":{"status":500}}`))
	assert.Equal(t, 400, post("/_sim/faults", `{"endpoint":"list_users","fault":{"stauts":500}}`), "unknown field")
	assert.Equal(t, 400, post("/_sim/clock", `{"offset":"ten minutes"}`))
	assert.Equal(t, 200, post("/_sim/faults", `{"endpoint":"list_users","fault":{"status":503,"times":1}}`))
	s, _ := e.call(t, admin, "GET", "/api/5/public/users", nil)
	assert.Equal(t, 503, s)
	resp, err = e.http.Get(e.srv.URL + "/_sim/calls")
	require.NoError(t, err)
	var calls map[string]int
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&calls))
	resp.Body.Close()
	assert.Equal(t, 1, calls["list_users"])
	assert.Equal(t, 200, post("/_sim/clock", `{"offset":"10m"}`))
	s, _ = e.call(t, admin, "GET", "/api/5/public/users", nil)
	assert.Equal(t, 401, s, "clock moved 10 min")
}

func TestNewRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no credentials": {},
		"empty secret":   {Credentials: []Credential{{Key: "k"}}},
		"duplicate key":  {Credentials: []Credential{{Key: "k", Secret: "a"}, {Key: "k", Secret: "b"}}},
		"negative limit": {Credentials: []Credential{{Key: "k", Secret: "a"}}, RateLimit: -1},
	} {
		_, err := New(cfg)
		assert.Error(t, err, name)
	}
}

func (e *env) exchange(t *testing.T, token string, _ *http.Cookie) *http.Response {
	t.Helper()
	resp, err := e.http.Get(e.srv.URL + "/api/5/login-token/login/" + token)
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

func (e *env) get(t *testing.T, path string, c *http.Cookie) string {
	t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
	if c != nil {
		req.AddCookie(c)
	}
	resp, err := e.http.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func findCookie(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// With RacyCreate, concurrent creates of one email pass the duplicate check
// together and make duplicates; without it exactly one is made and the
// rest are 409.
func TestRacyCreateMakesDuplicates(t *testing.T) {
	for _, racy := range []bool{false, true} {
		sim, err := New(Config{Credentials: []Credential{{Key: "k", Secret: "s", Admin: true}}, RacyCreate: racy, RacyPause: 20 * time.Millisecond})
		require.NoError(t, err)
		srv := httptest.NewServer(sim)
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[int]int{}
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("POST", srv.URL+"/api/5/public/users", strings.NewReader(`{"firstName":"A","lastName":"B","email":"dup@example.com"}`))
				req.Header.Set("Authorization", "SVCSIMPLE s")
				req.Header.Set("Content-Type", "application/json")
				resp, err := srv.Client().Do(req)
				if !assert.NoError(t, err) {
					return
				}
				resp.Body.Close()
				mu.Lock()
				codes[resp.StatusCode]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		srv.Close()
		if racy {
			assert.Greater(t, len(sim.Users("dup@example.com")), 1, "racy: duplicates (%v)", codes)
		} else {
			assert.Len(t, sim.Users("dup@example.com"), 1)
			assert.Equal(t, map[int]int{201: 1, 409: 9}, codes)
		}
	}
}
