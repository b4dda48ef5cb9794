package outbound

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddresses(t *testing.T) {
	district := Policy{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")}}
	for _, tc := range []struct {
		addr string
		p    Policy
		want bool
	}{
		{"93.184.216.34", Policy{}, true},
		{"2606:2800:220:1:248:1893:25c8:1946", Policy{}, true},
		{"169.254.169.254", Policy{}, false}, // a cloud's metadata service
		{"127.0.0.1", Policy{}, false},
		{"::1", Policy{}, false},
		{"0.0.0.0", Policy{}, false},
		{"::", Policy{}, false},
		{"10.0.0.1", Policy{}, false},
		{"172.16.5.4", Policy{}, false},
		{"192.168.1.1", Policy{}, false},
		{"fd00::1", Policy{}, false},
		{"fe80::1", Policy{}, false},
		{"100.64.0.1", Policy{}, false},
		{"224.0.0.1", Policy{}, false},
		{"255.255.255.255", Policy{}, false},
		{"10.20.3.4", district, true},
		{"10.21.3.4", district, false},
		{"127.0.0.1", Policy{AllowLocal: true}, true},
		{"169.254.169.254", Policy{AllowLocal: true}, true},
	} {
		assert.Equal(t, tc.want, tc.p.addressAllowed(netip.MustParseAddr(tc.addr).Unmap()), tc.addr)
	}
	assert.ErrorIs(t, Policy{}.control("tcp", "[::ffff:127.0.0.1]:443", nil), ErrLocalAddress, "a mapped address is its IPv4 one")
	assert.ErrorIs(t, Policy{}.control("tcp", "not an address", nil), ErrLocalAddress)
}

func TestURLs(t *testing.T) {
	for _, tc := range []struct {
		raw   string
		local bool
		want  error
	}{
		{"https://lms.example/.well-known/openid-configuration", false, nil},
		{"http://lms.example/x", false, ErrNotHTTPS},
		{"http://lms.example/x", true, ErrNotHTTPS}, // http only on loopback, and only with the switch
		{"http://127.0.0.1:8080/x", false, ErrNotHTTPS},
		{"http://127.0.0.1:8080/x", true, nil},
		{"http://localhost/x", true, nil},
		{"https://user:pw@lms.example/", false, ErrNotHTTPS},
		{"ftp://lms.example/", true, ErrNotHTTPS},
		{"/relative", true, ErrNotHTTPS},
		{"", true, ErrNotHTTPS},
	} {
		got := Policy{AllowLocal: tc.local}.CheckURL(tc.raw)
		if tc.want == nil {
			assert.NoError(t, got, tc.raw)
		} else {
			assert.ErrorIs(t, got, tc.want, tc.raw)
		}
	}
}

// A party on this machine: refused over https at the moment of
// connecting (the name resolved to a loopback address), and over plain
// http before anything is sent; with the development switch, both work.
func TestLocalPartiesNeedTheSwitch(t *testing.T) {
	var hits atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1); _, _ = w.Write([]byte("{}")) })
	plain := httptest.NewServer(h)
	defer plain.Close()
	tls := httptest.NewTLSServer(h)
	defer tls.Close()
	base := tls.Client().Transport.(*http.Transport)

	_, err := Policy{}.Client(base).Get(plain.URL)
	assert.ErrorIs(t, err, ErrNotHTTPS)
	_, err = Policy{}.Client(base).Get(tls.URL)
	assert.ErrorIs(t, err, ErrLocalAddress)
	assert.Zero(t, hits.Load(), "nothing reached the local party")

	for _, u := range []string{plain.URL, tls.URL} {
		resp, err := Policy{AllowLocal: true}.Client(base).Get(u)
		require.NoError(t, err, u)
		resp.Body.Close()
	}
	assert.Equal(t, int32(2), hits.Load())
}

// A redirect to another origin is never followed, for a GET (302) or a
// POST (307, which would carry the body on): the other origin is never
// asked. A redirect within the origin is followed, a few at most.
func TestRedirects(t *testing.T) {
	var internal atomic.Int32
	inside := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { internal.Add(1) }))
	defer inside.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/302", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inside.URL+"/latest/meta-data", http.StatusFound)
	})
	mux.HandleFunc("/307", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inside.URL+"/register", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/here", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/there", http.StatusFound) })
	mux.HandleFunc("/there", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	lms := httptest.NewServer(mux)
	defer lms.Close()
	hc := Policy{AllowLocal: true}.Client(nil)

	_, err := hc.Get(lms.URL + "/302")
	assert.ErrorIs(t, err, ErrRedirect)
	_, err = hc.Post(lms.URL+"/307", "application/json", strings.NewReader(`{"client_name":"x"}`))
	assert.ErrorIs(t, err, ErrRedirect)
	assert.Zero(t, internal.Load(), "the other origin was never asked")

	resp, err := hc.Get(lms.URL + "/here")
	require.NoError(t, err)
	body, err := Read(resp, 10)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "ok", string(body))
	_, err = hc.Get(lms.URL + "/loop")
	assert.ErrorIs(t, err, ErrRedirect)

	guarded := Policy{AllowLocal: true}.Guard(&http.Client{})
	_, err = guarded.Get(lms.URL + "/302")
	assert.ErrorIs(t, err, ErrRedirect, "Guard keeps a client's transport and adds the checks")
}

func TestReadAndReason(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(strings.Repeat("#", 100))) }))
	defer srv.Close()
	resp, err := Policy{AllowLocal: true}.Client(nil).Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = Read(resp, 99)
	assert.ErrorIs(t, err, ErrTooLarge)

	_, err = Policy{AllowLocal: true}.Client(nil).Get("http://127.0.0.1:1/closed")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrUnreachable)
	assert.Equal(t, "it could not be read", Reason(err), "the transport's words stay in the log")
	for err, want := range map[error]string{ErrNotHTTPS: "it is not https", ErrRedirect: "it redirected elsewhere",
		ErrLocalAddress: "it is on a local or private network address", ErrTooLarge: "its answer is too large",
		errors.New(`invalid character '#' looking for beginning of value`): "it could not be read"} {
		assert.Equal(t, want, Reason(err))
	}
}
