package loopback

import (
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
