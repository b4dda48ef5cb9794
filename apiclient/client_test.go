package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var emptyPage = map[string]any{"content": []any{}, "number": 0, "size": 100, "totalElements": 0, "totalPages": 0}

func TestStatusClasses(t *testing.T) {
	classes := []error{ErrBadRequest, ErrUnauthorized, ErrForbidden, ErrNotFound, ErrConflict, ErrRateLimited, ErrServer, ErrUnexpected}
	tests := []struct {
		status int
		want   error
	}{
		{400, ErrBadRequest}, {401, ErrUnauthorized}, {403, ErrForbidden}, {404, ErrNotFound},
		{409, ErrConflict}, {500, ErrServer}, {502, ErrServer}, {503, ErrServer}, {418, ErrUnexpected},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			h := setup(t)
			h.mux.HandleFunc("POST /api/5/public/users", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, tt.status, map[string]any{"message": "msg " + strconv.Itoa(tt.status), "status": tt.status, "extra": true})
			})
			_, err := h.client.CreateUser(context.Background(), NewUser{FirstName: "A", LastName: "B", Email: "a@example.com"})
			require.Error(t, err)
			for _, c := range classes {
				assert.Equal(t, c == tt.want, errors.Is(err, c), "errors.Is(%v)", c)
			}
			var ae *APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tt.status, ae.Status)
			assert.Equal(t, "msg "+strconv.Itoa(tt.status), ae.Message)
			assert.Contains(t, string(ae.Body), `"extra":true`)
			assert.NotContains(t, err.Error(), testSecret)
			assert.NotContains(t, err.Error(), "Authorization")
		})
	}
}

func TestErrorBodyIsBounded(t *testing.T) {
	h := setup(t)
	h.mux.HandleFunc("POST /api/5/public/users", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		_, _ = w.Write([]byte(strings.Repeat("x", 1<<20)))
	})
	_, err := h.client.CreateUser(context.Background(), NewUser{FirstName: "A", LastName: "B", Email: "a@example.com"})
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Len(t, ae.Body, maxErrorBody)
}

func TestUnauthorizedClockSkew(t *testing.T) {
	tests := []struct {
		name   string
		offset time.Duration
		skew   bool
	}{
		{"platform 10 min ahead", 10 * time.Minute, true},
		{"platform 10 min behind", -10 * time.Minute, true},
		{"close clocks: bad credentials", 5 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := setup(t)
			h.mux.HandleFunc("GET /api/5/public/users", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Date", fixedNow.Add(tt.offset).Format(http.TimeFormat))
				writeErr(w, 401, "signature does not verify")
			})
			_, _, err := h.client.FindUserByEmail(context.Background(), "a@example.com")
			assert.ErrorIs(t, err, ErrUnauthorized)
			assert.Equal(t, tt.skew, errors.Is(err, ErrClockSkew))
			var cs *ClockSkewError
			if tt.skew {
				require.ErrorAs(t, err, &cs)
				assert.Equal(t, tt.offset, cs.Offset)
			}
		})
	}
}

func TestRetryPolicy(t *testing.T) {
	type step struct {
		status     int
		retryAfter string
	}
	tests := []struct {
		name      string
		endpoint  string // which call to make
		steps     []step // answers in order; the last repeats
		jitter    float64
		wantCalls int
		wantWaits []time.Duration
		wantErr   error
	}{
		{"429 twice then OK", "list", []step{{429, ""}, {429, ""}, {200, ""}}, 0.5, 3,
			[]time.Duration{time.Second, 2 * time.Second}, nil},
		{"429 with jitter low", "list", []step{{429, ""}, {429, ""}, {200, ""}}, 0, 3,
			[]time.Duration{750 * time.Millisecond, 1500 * time.Millisecond}, nil},
		{"429 with jitter high", "list", []step{{429, ""}, {200, ""}}, 0.999999, 2,
			[]time.Duration{1249999500 * time.Nanosecond}, nil},
		{"429 always: 5 retries", "list", []step{{429, ""}}, 0.5, 6,
			[]time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}, ErrRateLimited},
		{"Retry-After wins", "list", []step{{429, "3"}, {200, ""}}, 0.5, 2,
			[]time.Duration{3 * time.Second}, nil},
		{"Retry-After too long: give up", "list", []step{{429, "120"}}, 0.5, 1, nil, ErrRateLimited},
		{"5xx once on GET", "list", []step{{500, ""}, {200, ""}}, 0.5, 2, []time.Duration{250 * time.Millisecond}, nil},
		{"5xx always on GET: one retry", "list", []step{{503, ""}}, 0.5, 2, []time.Duration{250 * time.Millisecond}, ErrServer},
		{"5xx once on token", "token", []step{{502, ""}, {200, ""}}, 0.5, 2, []time.Duration{250 * time.Millisecond}, nil},
		{"5xx on create: never retried", "create", []step{{500, ""}, {201, ""}}, 0.5, 1, nil, ErrServer},
		{"429 on create: retried", "create", []step{{429, "1"}, {201, ""}}, 0.5, 2, []time.Duration{time.Second}, nil},
		{"403 not retried", "list", []step{{403, ""}}, 0.5, 1, nil, ErrForbidden},
		{"401 not retried", "token", []step{{401, ""}}, 0.5, 1, nil, ErrUnauthorized},
		{"404 not retried", "token", []step{{404, ""}}, 0.5, 1, nil, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dates []string
			var mu sync.Mutex
			var clock atomic.Int64
			h := setup(t, func(o *Options) {
				o.Jitter = func() float64 { return tt.jitter }
				// Each attempt is signed at a new time.
				o.Now = func() time.Time { return fixedNow.Add(time.Duration(clock.Add(1)) * time.Second) }
			})
			var calls atomic.Int32
			answer := func(w http.ResponseWriter, r *http.Request, ok func()) {
				mu.Lock()
				dates = append(dates, r.Header.Get("Date"))
				mu.Unlock()
				n := int(calls.Add(1))
				s := tt.steps[min(n, len(tt.steps))-1]
				if s.retryAfter != "" {
					w.Header().Set("Retry-After", s.retryAfter)
				}
				if s.status < 300 {
					ok()
					return
				}
				writeErr(w, s.status, "nope")
			}
			h.mux.HandleFunc("GET /api/5/public/users", func(w http.ResponseWriter, r *http.Request) {
				answer(w, r, func() { writeJSON(w, 200, emptyPage) })
			})
			h.mux.HandleFunc("POST /api/5/public/users", func(w http.ResponseWriter, r *http.Request) {
				answer(w, r, func() { writeJSON(w, 201, map[string]any{"userId": 7, "email": "a@example.com"}) })
			})
			h.mux.HandleFunc("POST /api/5/login-token/{id}", func(w http.ResponseWriter, r *http.Request) {
				answer(w, r, func() { writeJSON(w, 200, map[string]any{"loginToken": "tok", "expiresIn": 300}) })
			})
			var err error
			ctx := context.Background()
			switch tt.endpoint {
			case "list":
				_, err = h.client.ListUsers(ctx, "a@example.com", 0, 10)
			case "create":
				_, err = h.client.CreateUser(ctx, NewUser{FirstName: "A", LastName: "B", Email: "a@example.com"})
			case "token":
				_, err = h.client.IssueLoginToken(ctx, "7", TokenProperties{})
			}
			if tt.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tt.wantErr)
			}
			assert.Equal(t, tt.wantCalls, int(calls.Load()), "attempts")
			assert.Equal(t, tt.wantWaits, h.recordedWaits(), "waits")
			// signed afresh: every attempt carries its own Date
			seen := map[string]bool{}
			for _, d := range dates {
				assert.False(t, seen[d], "Date %q reused", d)
				seen[d] = true
			}
		})
	}
}

func TestNetworkErrorRetriedOnceForGet(t *testing.T) {
	h := setup(t)
	var calls atomic.Int32
	h.mux.HandleFunc("GET /api/5/public/users", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			// Reset the connection without an answer.
			conn, _, err := w.(http.Hijacker).Hijack()
			require.NoError(t, err)
			conn.Close()
			return
		}
		writeJSON(w, 200, emptyPage)
	})
	_, err := h.client.ListUsers(context.Background(), "a@example.com", 0, 10)
	require.NoError(t, err)
	assert.Equal(t, int32(2), calls.Load())
}

func TestTransportErrorClasses(t *testing.T) {
	h := setup(t, func(o *Options) { o.Timeout = 50 * time.Millisecond })
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	h.mux.HandleFunc("GET /api/5/public/users", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	_, err := h.client.ListUsers(context.Background(), "a@example.com", 0, 10)
	require.ErrorIs(t, err, ErrTimeout)
	assert.True(t, Retryable(err))
	assert.NotContains(t, err.Error(), "a@example.com", "no URL with the email in the error")

	h.server.Close()
	_, err = h.client.ListUsers(context.Background(), "a@example.com", 0, 10)
	require.ErrorIs(t, err, ErrUnreachable)
}

func TestContextCancelStopsWaiting(t *testing.T) {
	h := setup(t, func(o *Options) { o.Sleep = nil }) // the real, context-aware sleep
	var calls atomic.Int32
	h.mux.HandleFunc("GET /api/5/public/users", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "25")
		writeErr(w, 429, "slow down")
	})
	ctx, cancel := context.WithCancel(context.Background())
	h.client.opts.Hooks.OnRetry = func(string, string, time.Duration) { cancel() }
	done := make(chan error, 1)
	go func() {
		_, err := h.client.ListUsers(ctx, "a@example.com", 0, 10)
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, ErrRateLimited)
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not stop the 25 s wait")
	}
	assert.Equal(t, int32(1), calls.Load())
}

// usersServer serves GET /public/users from a list, with the platform's
// substring filter and paging, and counts calls.
type usersServer struct {
	mu    sync.Mutex
	users []map[string]any
	calls counter
	// listFault, when set, answers the nth lookup (from 1) with its
	// status and Retry-After 1 instead (0: the users).
	listFault func(n int) int
}

func (s *usersServer) list(w http.ResponseWriter, r *http.Request) {
	n := s.calls.inc("list")
	if s.listFault != nil {
		if status := s.listFault(n); status != 0 {
			w.Header().Set("Retry-After", "1")
			writeErr(w, status, "fault")
			return
		}
	}
	q := strings.ToLower(r.URL.Query().Get("query"))
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	size, _ := strconv.Atoi(r.URL.Query().Get("size"))
	s.mu.Lock()
	var match []map[string]any
	for _, u := range s.users {
		if strings.Contains(strings.ToLower(u["email"].(string)), q) {
			match = append(match, u)
		}
	}
	s.mu.Unlock()
	from, to := min(page*size, len(match)), min((page+1)*size, len(match))
	writeJSON(w, 200, map[string]any{"content": match[from:to], "number": page, "size": size,
		"totalElements": len(match), "totalPages": (len(match) + size - 1) / size})
}

func (s *usersServer) add(id any, email string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users = append(s.users, map[string]any{"userId": id, "email": email, "firstName": "F", "lastName": "L"})
}

func TestFindUserByEmailDecoysAndPaging(t *testing.T) {
	h := setup(t, func(o *Options) { o.Shapes.PageSize = 2 })
	us := &usersServer{}
	h.mux.HandleFunc("GET /api/5/public/users", us.list)
	us.add(1, "bob@example.com.au")
	us.add(2, "xbob@example.com")
	us.add(3, "bob@example.community")
	us.add(4, "Bob@Example.COM") // the real one, on page 1
	us.add(5, "bob@example.com.evil")

	u, found, err := h.client.FindUserByEmail(context.Background(), "bob@example.com")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, UserID("4"), u.UserID)
	assert.Equal(t, 2, us.calls.get("list"), "stops at the page with the match")

	_, found, err = h.client.FindUserByEmail(context.Background(), "ob@example.co")
	require.NoError(t, err)
	assert.False(t, found, "substring hits are not matches")
	assert.Equal(t, 2+3, us.calls.get("list"), "walks all 3 pages when absent")

	// Unicode case mapping would match these; the mail rule does not.
	us.add(6, "k\u0130m@example.com")
	us.add(7, "\u212Aim@example.com")
	_, found, err = h.client.FindUserByEmail(context.Background(), "kim@example.com")
	require.NoError(t, err)
	assert.False(t, found, "kİm and Kim (Kelvin sign) are not kim")
	u, found, err = h.client.FindUserByEmail(context.Background(), "\u212AIM@EXAMPLE.com")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, UserID("7"), u.UserID, "ASCII letters fold")
}

func TestFindUserByEmailStopsAtMaxPages(t *testing.T) {
	h := setup(t, func(o *Options) { o.Shapes.MaxPages = 3 })
	var calls atomic.Int32
	h.mux.HandleFunc("GET /api/5/public/users", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1) // a platform that claims endless pages
		writeJSON(w, 200, map[string]any{"content": []any{map[string]any{"userId": 1, "email": "other@example.com"}}, "totalPages": 1 << 30})
	})
	_, _, err := h.client.FindUserByEmail(context.Background(), "a@example.com")
	require.Error(t, err)
	assert.Equal(t, int32(3), calls.Load())
}

func TestUserIDsBeyondFloatPrecision(t *testing.T) {
	h := setup(t)
	us := &usersServer{}
	h.mux.HandleFunc("GET /api/5/public/users", us.list)
	us.add(json9007199254740993{}, "big@example.com")
	us.add("u-abc-123", "str@example.com")

	u, found, err := h.client.FindUserByEmail(context.Background(), "big@example.com")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, UserID("9007199254740993"), u.UserID, "2^53+1 survives decoding")

	u, _, err = h.client.FindUserByEmail(context.Background(), "str@example.com")
	require.NoError(t, err)
	assert.Equal(t, UserID("u-abc-123"), u.UserID)
}

// json9007199254740993 marshals as the bare number 2^53+1.
type json9007199254740993 struct{}

func (json9007199254740993) MarshalJSON() ([]byte, error) { return []byte("9007199254740993"), nil }

// ensureServer is a platform with users, create and faults, for EnsureUser.
type ensureServer struct {
	usersServer
	createFault func(n int) (status int, createAnyway bool)
	nextID      atomic.Int64
}

func newEnsureServer(t *testing.T, h *harness) *ensureServer {
	es := &ensureServer{}
	es.nextID.Store(1 << 53)
	h.mux.HandleFunc("GET /api/5/public/users", es.list)
	h.mux.HandleFunc("POST /api/5/public/users", func(w http.ResponseWriter, r *http.Request) {
		n := es.calls.inc("create")
		var nu NewUser
		require.NoError(t, jsonDecode(r, &nu))
		if es.createFault != nil {
			if status, createAnyway := es.createFault(n); status != 0 {
				if createAnyway {
					es.add(es.nextID.Add(1), nu.Email)
				}
				writeErr(w, status, "fault")
				return
			}
		}
		es.mu.Lock()
		for _, u := range es.users {
			if strings.EqualFold(u["email"].(string), nu.Email) {
				es.mu.Unlock()
				writeErr(w, 409, "exists")
				return
			}
		}
		es.mu.Unlock()
		id := es.nextID.Add(1)
		es.add(id, nu.Email)
		writeJSON(w, 201, map[string]any{"userId": id, "email": nu.Email, "firstName": nu.FirstName, "lastName": nu.LastName})
	})
	return es
}

func (es *ensureServer) count(email string) int {
	es.mu.Lock()
	defer es.mu.Unlock()
	n := 0
	for _, u := range es.users {
		if strings.EqualFold(u["email"].(string), email) {
			n++
		}
	}
	return n
}

func TestEnsureUser(t *testing.T) {

	tests := []struct {
		name        string
		prepare     func(es *ensureServer)
		wantCreated bool
		wantLists   int
		wantCreates int
		wantErr     error
	}{
		{"exists: lookup only", func(es *ensureServer) { es.add(42, "ALICE@example.com") }, false, 1, 0, nil},
		{"absent: lookup and create", func(es *ensureServer) {}, true, 1, 1, nil},
		{"409 after a missed lookup: look up again", func(es *ensureServer) {
			// someone else creates the user between our lookup and create
			es.createFault = func(n int) (int, bool) { return 409, n == 1 }
		}, false, 2, 1, nil},
		{"ghost create: 500 after creating", func(es *ensureServer) {
			es.createFault = func(n int) (int, bool) {
				if n == 1 {
					return 500, true
				}
				return 0, false
			}
		}, false, 2, 1, nil},
		{"500 without creating: look up, then create once more", func(es *ensureServer) {
			es.createFault = func(n int) (int, bool) {
				if n == 1 {
					return 500, false
				}
				return 0, false
			}
		}, true, 2, 2, nil},
		{"500 always: two creates at most", func(es *ensureServer) {
			es.createFault = func(int) (int, bool) { return 500, false }
		}, false, 3, 2, ErrServer},
		{"403: stops at once", func(es *ensureServer) {
			es.createFault = func(int) (int, bool) { return 403, false }
		}, false, 1, 1, ErrForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := setup(t)
			es := newEnsureServer(t, h)
			tt.prepare(es)
			var n atomic.Int32
			res, err := h.client.EnsureUser(WithCallCounter(context.Background(), &n), alice)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
				assert.NotEmpty(t, res.User.UserID)
				assert.Equal(t, 1, es.count(alice.Email), "exactly one platform user")
			}
			assert.Equal(t, tt.wantCreated, res.Created)
			assert.Equal(t, tt.wantLists, es.calls.get("list"), "lookups")
			assert.Equal(t, tt.wantCreates, es.calls.get("create"), "creates")
			assert.Equal(t, int32(tt.wantLists+tt.wantCreates), n.Load(), "call counter")
		})
	}
}

func TestEnsureUserRejectsBadInputWithoutCalls(t *testing.T) {
	h := setup(t)
	es := newEnsureServer(t, h)
	for _, nu := range []NewUser{
		{FirstName: "A", LastName: "B", Email: "not-an-email"},
		{FirstName: "A", LastName: "B", Email: "Name <a@example.com>"},
		{FirstName: "", LastName: "B", Email: "a@example.com"},
	} {
		_, err := h.client.EnsureUser(context.Background(), nu)
		require.ErrorIs(t, err, ErrInvalidInput)
	}
	assert.Equal(t, 0, es.calls.get("list")+es.calls.get("create"))
}

func TestEnsureUserConcurrentCallsShareOneOperation(t *testing.T) {
	h := setup(t)
	es := newEnsureServer(t, h)
	gate := make(chan struct{})
	inner := h.mux
	h.mux = http.NewServeMux()
	h.server.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-gate // hold the first lookup until all callers are waiting
		inner.ServeHTTP(w, r)
	})
	const callers = 50
	var wg sync.WaitGroup
	ids := make([]UserID, callers)
	errs := make([]error, callers)
	var created atomic.Int32
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := h.client.EnsureUser(context.Background(), NewUser{FirstName: "C", LastName: "D", Email: "carol@example.com"})
			ids[i], errs[i] = res.User.UserID, err
			if res.Created {
				created.Add(1)
			}
		}()
	}
	close(gate)
	wg.Wait()
	for i := range callers {
		require.NoError(t, errs[i])
		assert.Equal(t, ids[0], ids[i])
	}
	assert.Equal(t, 1, es.count("carol@example.com"))
	assert.Equal(t, 1, es.calls.get("create"))
	assert.Equal(t, int32(1), created.Load(), "only one caller reports the creation")
}

func TestIssueLoginTokenAndExchangeURL(t *testing.T) {
	h := setup(t)
	var gotBody string
	h.mux.HandleFunc("POST /api/5/login-token/{id}", func(w http.ResponseWriter, r *http.Request) {
		b := new(strings.Builder)
		_, _ = fmt.Fprint(b, readAll(r))
		gotBody = b.String()
		if r.PathValue("id") != "9007199254740993" {
			writeErr(w, 404, "no such user")
			return
		}
		writeJSON(w, 200, map[string]any{"loginToken": "a/b+c", "expiresIn": 300})
	})
	tok, err := h.client.IssueLoginToken(context.Background(), "9007199254740993", TokenProperties{RedirectTo: "/editor?x=1"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"properties":{"redirectTo":"/editor?x=1"}}`, gotBody)
	assert.Equal(t, 300*time.Second, tok.ExpiresIn)
	assert.Equal(t, h.server.URL+"/api/5/login-token/login/a%2Fb+c", h.client.ExchangeURL(tok))
	assert.NotContains(t, fmt.Sprint(tok), "a/b+c", "a token prints redacted")

	_, err = h.client.IssueLoginToken(context.Background(), "9007199254740993", TokenProperties{})
	require.NoError(t, err)
	assert.Empty(t, gotBody, "no properties: no body")

	_, err = h.client.IssueLoginToken(context.Background(), "1", TokenProperties{})
	require.ErrorIs(t, err, ErrNotFound)
}

func TestNewRejectsBadBaseURL(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "platform.example.com", "http://"} {
		_, err := New(Options{BaseURL: u, Credentials: Credentials{Method: AuthSimple, APISecret: "s"}})
		require.Error(t, err, u)
	}
	c, err := New(Options{BaseURL: "https://p.example/api/5/", Credentials: Credentials{Method: AuthSimple, APISecret: "s"}})
	require.NoError(t, err)
	assert.Equal(t, "https://p.example", c.BaseURL(), "a pasted /api/5 suffix is dropped")
}

// recordingPacer records what a Pacer is asked.
type recordingPacer struct {
	mu     sync.Mutex
	waits  int
	pauses []time.Duration
}

func (p *recordingPacer) Wait(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waits++
	return nil
}

func (p *recordingPacer) Pause(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pauses = append(p.pauses, d)
}

// With a pacer, every attempt (retries too) waits its turn in it, a 429
// pauses every caller for its Retry-After (or the backoff), and the client
// does not sleep on its own; a Retry-After too long to wait for still
// pauses the others.
func TestPacerSpacesEveryAttempt(t *testing.T) {
	tests := []struct {
		name        string
		answers     []string // Retry-After of each 429 ("-": none); then 200
		giveUp      bool
		wantWaits   int
		wantPauses  []time.Duration
		wantErrLike error
	}{
		{"no 429", nil, false, 1, nil, nil},
		{"Retry-After", []string{"2"}, false, 2, []time.Duration{2 * time.Second}, nil},
		{"no Retry-After: the backoff", []string{"-", "-"}, false, 3, []time.Duration{time.Second, 2 * time.Second}, nil},
		{"too long to wait: others still pause", []string{"120"}, true, 1, []time.Duration{120 * time.Second}, ErrRateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &recordingPacer{}
			h := setup(t, func(o *Options) { o.Pacer = p })
			var n atomic.Int32
			h.mux.HandleFunc("GET /api/5/public/users", func(w http.ResponseWriter, r *http.Request) {
				i := int(n.Add(1)) - 1
				if i < len(tt.answers) {
					if ra := tt.answers[i]; ra != "-" {
						w.Header().Set("Retry-After", ra)
					}
					writeErr(w, http.StatusTooManyRequests, "slow down")
					return
				}
				writeJSON(w, http.StatusOK, emptyPage)
			})
			_, err := h.client.ListUsers(context.Background(), "", 1, 10)
			if tt.wantErrLike != nil {
				require.ErrorIs(t, err, tt.wantErrLike)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.wantWaits, p.waits, "one wait per attempt")
			assert.Equal(t, tt.wantPauses, p.pauses)
			assert.Empty(t, h.recordedWaits(), "the client does not sleep on its own")
		})
	}
}

// retryPacer tells first attempts from retries.
type retryPacer struct {
	recordingPacer
	retries int
}

func (p *retryPacer) WaitRetry(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.retries++
	return nil
}

// A RetryPacer is asked Wait for a call's first attempt and WaitRetry for
// each retry, so it may refuse to start a call but never cuts one between
// its attempts.
func TestRetryPacerToldRetriesApart(t *testing.T) {
	p := &retryPacer{}
	h := setup(t, func(o *Options) { o.Pacer = p })
	var n atomic.Int32
	h.mux.HandleFunc("GET /api/5/public/users", func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			writeErr(w, http.StatusTooManyRequests, "slow down")
			return
		}
		writeJSON(w, http.StatusOK, emptyPage)
	})
	_, err := h.client.ListUsers(context.Background(), "", 1, 10)
	require.NoError(t, err)
	assert.Equal(t, 1, p.waits, "the first attempt")
	assert.Equal(t, 2, p.retries, "each retry")
}

// turnAfter is a Pacer whose turn comes after a fixed wait, told from the
// caller's deadline rather than slept: a caller whose deadline comes
// first is refused as the real wait would be.
type turnAfter time.Duration

func (d turnAfter) Wait(ctx context.Context) error {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < time.Duration(d) {
		return context.DeadlineExceeded
	}
	return nil
}

func (turnAfter) Pause(time.Duration) {}

// A new user's look-up-and-create waits for the platform's turn as long
// as the caller's own deadline allows (a launch's place in line: its
// arrival plus platform.max_wait), not a fixed 60 s: its turn after 90 s
// lands within a 30-minute line; without a deadline the 60 s bound holds.
func TestEnsureUserWaitsAsLongAsItsCallerMay(t *testing.T) {
	h := setup(t, func(o *Options) { o.Pacer = turnAfter(90 * time.Second) })
	newEnsureServer(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	res, err := h.client.EnsureUser(ctx, alice)
	require.NoError(t, err)
	assert.True(t, res.Created)

	h = setup(t, func(o *Options) { o.Pacer = turnAfter(90 * time.Second) })
	newEnsureServer(t, h)
	_, err = h.client.EnsureUser(context.Background(), alice)
	assert.ErrorIs(t, err, ErrTimeout, "no deadline of its own: EnsureTimeout")
}

// A call made WithPatience is cut off at the deadline when the platform
// is slower (ErrOutOfPatience, one attempt, no retry); without a
// deadline, or a platform quicker than it, the call is as ever.
func TestCallCutOffAtItsCallersPatience(t *testing.T) {
	var calls atomic.Int32
	h := setup(t)
	release := make(chan struct{})
	defer close(release)
	h.mux.HandleFunc("GET /api/5/public/users", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			select { // the first answer comes late
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		writeJSON(w, 200, emptyPage)
	})
	ctx := WithPatience(context.Background(), time.Now().Add(100*time.Millisecond))
	start := time.Now()
	_, _, err := h.client.FindUserByEmail(ctx, "a@example.com")
	require.ErrorIs(t, err, ErrOutOfPatience)
	assert.Less(t, time.Since(start), time.Second, "cut off at the deadline, not the client's timeout")
	assert.Equal(t, int32(1), calls.Load(), "not retried")

	_, found, err := h.client.FindUserByEmail(WithPatience(context.Background(), time.Now().Add(5*time.Second)), "a@example.com")
	require.NoError(t, err, "a quick platform within the patience")
	assert.False(t, found)
}
