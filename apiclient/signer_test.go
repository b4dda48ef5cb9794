package apiclient

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type vectorFile struct {
	APIKey    string `json:"api_key"`
	APISecret string `json:"api_secret"`
	Vectors   []struct {
		Name          string            `json:"name"`
		Method        string            `json:"method"`
		URL           string            `json:"url"`
		Body          string            `json:"body"`
		Date          string            `json:"date"`
		BodyMD5       string            `json:"body_md5"`
		Signature     string            `json:"signature"`
		Authorization string            `json:"authorization"`
		Wrong         map[string]string `json:"wrong"`
	} `json:"vectors"`
}

func loadVectors(t *testing.T) vectorFile {
	t.Helper()
	raw, err := os.ReadFile("testdata/hmac_vectors.json")
	require.NoError(t, err)
	var vf vectorFile
	require.NoError(t, json.Unmarshal(raw, &vf))
	require.Len(t, vf.Vectors, 4)
	return vf
}

var vectorTime = time.Date(2026, 11, 22, 4, 5, 6, 0, time.UTC)

// TestSignerKnownAnswers checks the signer against vectors computed with
// openssl and md5sum (testdata/gen_vectors.sh).
func TestSignerKnownAnswers(t *testing.T) {
	vf := loadVectors(t)
	s, err := NewSigner(Credentials{Method: AuthHMAC, APIKey: vf.APIKey, APISecret: vf.APISecret})
	require.NoError(t, err)
	for _, v := range vf.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			var body []byte
			if v.Body != "" {
				body = []byte(v.Body)
			}
			req, err := http.NewRequest(v.Method, v.URL, bytes.NewReader(body))
			require.NoError(t, err)
			s.Sign(req, body, vectorTime)
			assert.Equal(t, v.Date, req.Header.Get("Date"))
			assert.Equal(t, v.Authorization, req.Header.Get("Authorization"))
			assert.Equal(t, v.URL, FullURL(req.URL))
			sum := md5.Sum(body)
			assert.Equal(t, v.BodyMD5, hex.EncodeToString(sum[:]))
			m := hmac.New(sha256.New, []byte(vf.APISecret))
			m.Write([]byte(StringToSign(v.Method, body, v.Date, v.URL)))
			assert.Equal(t, v.Signature, base64.StdEncoding.EncodeToString(m.Sum(nil)), "StringToSign is the spec's string")
			for what, wrong := range v.Wrong {
				assert.NotEqual(t, wrong, v.Signature, "the %s variant must differ", what)
				assert.NotContains(t, req.Header.Get("Authorization"), wrong, "signer matches the %s mistake", what)
			}
		})
	}
}

// capture is a RoundTripper that records requests and answers from a func.
type capture struct {
	reqs   []*http.Request
	bodies [][]byte
	answer func(*http.Request) *http.Response
}

func (c *capture) RoundTrip(r *http.Request) (*http.Response, error) {
	var b []byte
	if r.Body != nil {
		b, _ = io.ReadAll(r.Body)
	}
	c.reqs = append(c.reqs, r)
	c.bodies = append(c.bodies, b)
	return c.answer(r), nil
}

func jsonResponse(status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body))}
}

// TestClientProducesVectors drives the real client (URL building, query
// encoding, JSON body, signing) and compares the wire with the vectors.
func TestClientProducesVectors(t *testing.T) {
	vf := loadVectors(t)
	newClient := func(base string, rt *capture) *Client {
		c, err := New(Options{BaseURL: base,
			Credentials: Credentials{Method: AuthHMAC, APIKey: vf.APIKey, APISecret: vf.APISecret},
			HTTPClient:  &http.Client{Transport: rt},
			Now:         func() time.Time { return vectorTime }})
		require.NoError(t, err)
		return c
	}
	check := func(t *testing.T, rt *capture, i int) {
		v := vf.Vectors[i]
		require.Len(t, rt.reqs, 1)
		r := rt.reqs[0]
		assert.Equal(t, v.URL, r.URL.Scheme+"://"+r.URL.Host+r.URL.RequestURI(), "URL on the wire")
		assert.Equal(t, v.Body, string(rt.bodies[0]), "body on the wire")
		assert.Equal(t, v.Date, r.Header.Get("Date"))
		assert.Equal(t, v.Authorization, r.Header.Get("Authorization"))
		assert.Equal(t, "application/json", r.Header.Get("Accept"))
	}
	t.Run("query", func(t *testing.T) {
		rt := &capture{answer: func(*http.Request) *http.Response {
			return jsonResponse(200, `{"content":[],"number":0,"size":100,"totalElements":0,"totalPages":0}`)
		}}
		_, err := newClient("https://platform.example.com", rt).ListUsers(context.Background(), "jürgen o+x@example.com", 0, 100)
		require.NoError(t, err)
		check(t, rt, 1)
	})
	t.Run("non-ASCII body", func(t *testing.T) {
		rt := &capture{answer: func(*http.Request) *http.Response {
			return jsonResponse(201, `{"userId":1,"firstName":"Zoë","lastName":"Ångström","email":"zoe@example.com"}`)
		}}
		_, err := newClient("https://platform.example.com/", rt).CreateUser(context.Background(), NewUser{FirstName: "Zoë", LastName: "Ångström", Email: "zoe@example.com"})
		require.NoError(t, err)
		check(t, rt, 2)
		assert.Equal(t, "application/json", rt.reqs[0].Header.Get("Content-Type"))
	})
	t.Run("port", func(t *testing.T) {
		rt := &capture{answer: func(*http.Request) *http.Response { return jsonResponse(200, `{"loginToken":"t","expiresIn":300}`) }}
		_, err := newClient("http://127.0.0.1:8443", rt).IssueLoginToken(context.Background(), "9007199254740993", TokenProperties{RedirectTo: "/editor/projects?id=7"})
		require.NoError(t, err)
		check(t, rt, 3)
	})
}

func TestSimpleAuthHeader(t *testing.T) {
	for _, scheme := range []string{"", "PartnerSimple"} {
		s, err := NewSigner(Credentials{Method: AuthSimple, APISecret: "abc123", SchemeSimple: scheme})
		require.NoError(t, err)
		req, _ := http.NewRequest("GET", "https://x.example/api/5/public/users", nil)
		s.Sign(req, nil, vectorTime)
		want := DefaultSchemeSimple
		if scheme != "" {
			want = scheme
		}
		assert.Equal(t, want+" abc123", req.Header.Get("Authorization"), "exactly one space, no Bearer, no quotes")
		assert.Equal(t, "Sun, 22 Nov 2026 04:05:06 UTC", req.Header.Get("Date"))
	}
}

func TestCustomHMACScheme(t *testing.T) {
	s, err := NewSigner(Credentials{Method: AuthHMAC, APIKey: "k", APISecret: "s", SchemeHMAC: "PARTNERHMAC"})
	require.NoError(t, err)
	req, _ := http.NewRequest("GET", "https://x.example/api/5/public/users", nil)
	s.Sign(req, nil, vectorTime)
	assert.True(t, strings.HasPrefix(req.Header.Get("Authorization"), "PARTNERHMAC k:"))
}

func TestNewSignerRejectsBadCredentials(t *testing.T) {
	for name, c := range map[string]Credentials{
		"no secret":       {Method: AuthHMAC, APIKey: "k"},
		"no key for hmac": {Method: AuthHMAC, APISecret: "s"},
		"unknown method":  {Method: "oauth", APIKey: "k", APISecret: "s"},
		"scheme w/ space": {Method: AuthHMAC, APIKey: "k", APISecret: "s", SchemeHMAC: "A B"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewSigner(c)
			require.Error(t, err)
		})
	}
	s, err := NewSigner(Credentials{Method: AuthHMAC, APIKey: "k", APISecret: "hush"})
	require.NoError(t, err)
	assert.NotContains(t, s.String(), "hush")
}

// FuzzFullURL checks the canonicaliser: the URL signed is the URL Go's
// client writes, it is stable under re-parsing, a query the client encodes
// never carries whitespace and decodes back to the value, and a string to
// sign always has exactly four lines.
func FuzzFullURL(f *testing.F) {
	for _, s := range []string{"/api/5/public/users", "/api/5/public/users?query=a%2Bb%40c.d&page=0",
		"/a b/ü?x=1 2", "/login-token/9007199254740993", "/%2F?%zz", "?", "/p?q=é&&"} {
		f.Add("platform.example.com:8443", s, "bob+x@example.com")
	}
	f.Fuzz(func(t *testing.T, host, rest, value string) {
		u, err := url.Parse("https://" + host + rest)
		if err != nil || u.Host == "" || u.Opaque != "" || u.User != nil || u.Fragment != "" {
			return
		}
		if strings.Trim(strings.ToLower(u.Host), "abcdefghijklmnopqrstuvwxyz0123456789.-:[]") != "" {
			return // hosts are DNS names or IPs (Go also accepts "0%80", which no base URL is)
		}
		full := FullURL(u)
		assert.Equal(t, u.Scheme+"://"+u.Host+u.RequestURI(), full)
		back, err := url.Parse(full)
		require.NoError(t, err)
		assert.Equal(t, full, FullURL(back), "stable under re-parsing")

		u.RawQuery = url.Values{"query": {value}, "page": {"0"}}.Encode()
		full = FullURL(u)
		if !strings.ContainsAny(host+u.EscapedPath(), " \t\r\n") {
			assert.False(t, strings.ContainsAny(full, " \t\r\n"), "no whitespace in %q", full)
			assert.Len(t, strings.Split(StringToSign("GET", nil, "Sun, 22 Nov 2026 04:05:06 UTC", full), "\n"), 4)
		}
		q, err := url.ParseQuery(u.RawQuery)
		require.NoError(t, err)
		assert.Equal(t, value, q.Get("query"))
	})
}

var benchBody = []byte(`{"firstName":"Zoë","lastName":"Ångström","email":"zoe@example.com"}`)

const benchURL = "https://platform.example.com/api/5/public/users?page=0&query=zoe%40example.com&size=100"

// BenchmarkSign measures a full HMAC signing of a request.
func BenchmarkSign(b *testing.B) {
	s, _ := NewSigner(Credentials{Method: AuthHMAC, APIKey: testKey, APISecret: testSecret})
	req, _ := http.NewRequest("POST", benchURL, nil)
	b.ReportAllocs()
	for b.Loop() {
		s.Sign(req, benchBody, vectorTime)
	}
}

// BenchmarkSignBaseline is bare MD5 + HMAC-SHA256 + base64 over the same
// bytes: the floor BenchmarkSign is compared with.
func BenchmarkSignBaseline(b *testing.B) {
	key := []byte(testSecret)
	date := FormatDate(vectorTime)
	b.ReportAllocs()
	for b.Loop() {
		sum := md5.Sum(benchBody)
		m := hmac.New(sha256.New, key)
		m.Write([]byte("POST\n" + hex.EncodeToString(sum[:]) + "\n" + date + "\n" + benchURL))
		_ = base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
}
