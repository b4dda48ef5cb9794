package loopback

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "127.0.0.1": true, "127.0.0.2": true, "::1": true,
		"": false, "lms.example": false, "10.0.0.1": false, "localhost.example": false, "[::1]": false, "127.0.0.1:80": false,
	} {
		assert.Equal(t, want, Host(host), host)
	}
}

func TestSecureURL(t *testing.T) {
	for raw, want := range map[string]bool{
		"https://lms.example/auth": true, "https://10.0.0.1:8443": true, "http://127.0.0.1:9000/jwks": true,
		"http://localhost/x": true, "http://[::1]:80/": true,
		"http://lms.example/auth": false, "http://10.0.0.1/": false, "ftp://127.0.0.1/": false,
		"https:///path-only": false, "/relative": false, "": false, "HTTP://127.0.0.1/": true,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		assert.Equal(t, want, SecureURL(u), raw)
	}
}
