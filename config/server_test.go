package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestServerRefusals(t *testing.T) {
	assertRefused(t, []refusal{
		{"addr", "server:\n  addr: localhost\n", nil, "server.addr", "host:port"},
		{"public url", "server:\n  public_url: sso.example\n", nil, "server.public_url", "absolute"},
		{"metrics addr", "server:\n  metrics_addr: metrics\n", nil, "server.metrics_addr", "not host:port"},
		{"metrics addr is addr", "server:\n  addr: 127.0.0.1:8080\n  metrics_addr: 127.0.0.1:8080\n", nil, "server.metrics_addr", "is server.addr"},
		{"pprof without a metrics address", "server:\n  pprof: true\n", nil, "server.pprof", "needs server.metrics_addr"},
	})
}

// PublicURL is server.public_url, else http:// and the listen address.
func TestPublicURL(t *testing.T) {
	tests := []struct {
		public, listen, want string
	}{
		{"", "127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"", "0.0.0.0:8080", "http://localhost:8080"},
		{"", "[::]:8080", "http://localhost:8080"},
		{"https://sso.partner.example/", "0.0.0.0:8080", "https://sso.partner.example"},
	}
	for _, tt := range tests {
		cfg := Defaults()
		cfg.Server.PublicURL = tt.public
		assert.Equal(t, tt.want, cfg.PublicURL(tt.listen))
	}
}
