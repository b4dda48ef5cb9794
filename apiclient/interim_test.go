package apiclient

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// interimPlatform answers every request on a kept-alive connection with
// the interim answers given (e.g. "100 Continue", "103 Early Hints"), then
// a token issued for the user named in the path: an answer that reaches
// the wrong request is seen at once. It counts the connections it accepted.
func interimPlatform(t *testing.T, interim ...string) (baseURL string, conns *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	conns = &atomic.Int32{}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					user := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
					body := fmt.Sprintf(`{"loginToken":"token-for-%s","expiresIn":300}`, user)
					var out strings.Builder
					for _, s := range interim {
						fmt.Fprintf(&out, "HTTP/1.1 %s\r\nLink: </style.css>; rel=preload\r\n\r\n", s)
					}
					fmt.Fprintf(&out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
					if _, err := io.WriteString(conn, out.String()); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String(), conns
}

// Interim (1xx) answers before the real one never pair a request with
// another request's answer: each user gets the token issued for them,
// one call after another on one kept-alive connection.
func TestInterimAnswersNeverReachAnotherRequest(t *testing.T) {
	for name, interim := range map[string][]string{
		"none":                  nil,
		"103 Early Hints":       {"103 Early Hints"},
		"100 Continue":          {"100 Continue"},
		"100 then 103 then 103": {"100 Continue", "103 Early Hints", "103 Early Hints"},
	} {
		t.Run(name, func(t *testing.T) {
			base, conns := interimPlatform(t, interim...)
			h := setup(t, func(o *Options) { o.BaseURL = base })
			defer h.client.CloseIdleConnections()
			for _, user := range []string{"alice", "bob", "carol", "dave"} {
				tok, err := h.client.IssueLoginToken(context.Background(), UserID(user), TokenProperties{RedirectTo: "/x"})
				if assert.NoError(t, err, user) {
					assert.Equal(t, "token-for-"+user, tok.Token, "the answer to %s's request", user)
				}
			}
			assert.Equal(t, int32(1), conns.Load(), "one kept-alive connection")
		})
	}
}
