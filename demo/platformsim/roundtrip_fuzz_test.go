package platformsim_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/demo/platformsim"
)

// FuzzSignVerifyRoundTrip: the emulator (its own verifier) accepts what the
// client signs, and refuses any one-byte change of method, URL, Date or
// body.
func FuzzSignVerifyRoundTrip(f *testing.F) {
	f.Add("bob+x@example.com", `{"firstName":"Zoë","lastName":"B","email":"zoe@example.com"}`, uint8(0), uint16(3), uint8(1))
	f.Add("a b&c=d", `{}`, uint8(1), uint16(40), uint8(0x20))
	f.Add("", "", uint8(2), uint16(0), uint8(0xff))
	f.Add("ü", `[1,2]`, uint8(3), uint16(7), uint8(2))
	cred := platformsim.Credential{Key: "k1", Secret: "s3cr3t", Admin: true}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	sim, err := platformsim.New(platformsim.Config{Credentials: []platformsim.Credential{cred}, Now: func() time.Time { return now }})
	require.NoError(f, err)
	signer, err := apiclient.NewSigner(apiclient.Credentials{Method: apiclient.AuthHMAC, APIKey: cred.Key, APISecret: cred.Secret})
	require.NoError(f, err)

	serve := func(method, rawURL string, body []byte, hdr http.Header) int {
		u, err := url.Parse(rawURL)
		if err != nil {
			return -1
		}
		// Built by hand: even a method no client could send reaches the emulator.
		req := &http.Request{Method: method, URL: u, RequestURI: u.RequestURI(), Host: u.Host, Header: hdr,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
		req = req.WithContext(context.Background())
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, req)
		return rec.Code
	}
	f.Fuzz(func(t *testing.T, query, body string, which uint8, pos uint16, delta uint8) {
		if delta == 0 {
			delta = 1
		}
		method, path := "GET", "/api/5/public/users"
		if len(body) > 0 {
			method = "POST"
		}
		full := "http://platform.test:8080" + path + "?" + url.Values{"query": {query}, "page": {"0"}}.Encode()
		req, _ := http.NewRequest(method, full, nil)
		b := []byte(body)
		signer.Sign(req, b, now)
		status := serve(method, full, b, req.Header.Clone())
		assert.NotEqual(t, http.StatusUnauthorized, status, "the emulator accepts what the client signs")

		// One byte changed in one signed part.
		m, u, d, bb := method, full, req.Header.Get("Date"), append([]byte(nil), b...)
		flip := func(s []byte) []byte {
			if len(s) == 0 {
				return s
			}
			i := int(pos) % len(s)
			s[i] ^= delta
			return s
		}
		switch which % 4 {
		case 0:
			m = string(flip([]byte(m)))
		case 1:
			// the path and query, not the scheme and host the test serves on
			prefix := len("http://platform.test:8080")
			u = u[:prefix] + string(flip([]byte(u[prefix:])))
		case 2:
			d = string(flip([]byte(d)))
		case 3:
			if len(bb) == 0 {
				return
			}
			bb = flip(bb)
		}
		if m == method && u == full && d == req.Header.Get("Date") && bytes.Equal(bb, b) {
			return
		}
		hdr := req.Header.Clone()
		hdr.Set("Date", d)
		changed := serve(m, u, bb, hdr)
		assert.False(t, changed >= 200 && changed < 300, "a changed request must be refused (%s %q date %q): got %d", m, u, d, changed)
	})
}
