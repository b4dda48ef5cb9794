package portal_test

import (
	"strings"
	"testing"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/config/configtest"
	"github.com/ssobridge/ssobridge/wayin/portal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSettingsRefusals(t *testing.T) {
	configtest.AssertRefused(t, []config.Sectioner{portal.Section()}, []configtest.Refusal{
		configtest.Refused("portal email domain that is a URL", "portal:\n  email_domains: https://portal.example\n", nil, "portal.email_domains", "is not a domain"),
		configtest.Refused("portal secret short", "portal:\n  jwt_secret: short\n  jwt_issuer: https://p.example\n  jwt_audience: a\n", nil, "portal.jwt_secret", "at least 32"),
		configtest.Refused("portal both keys", "portal:\n  jwt_secret: "+strings.Repeat("s", 32)+"\n  jwt_public_key_file: /etc/hosts\n  jwt_issuer: i\n  jwt_audience: a\n", nil, "portal.jwt_secret", "not both"),
		configtest.Refused("portal key without issuer", "portal:\n  jwt_secret: "+strings.Repeat("s", 32)+"\n  jwt_audience: a\n", nil, "portal.jwt_issuer", "required"),
		configtest.Refused("portal key file missing", "portal:\n  jwt_public_key_file: /nonexistent.pem\n  jwt_issuer: i\n  jwt_audience: a\n", nil, "portal.jwt_public_key_file", "cannot read"),
		configtest.Refused("portal url not absolute", "portal:\n  url: portal.partner.example\n", nil, "portal.url", "absolute http(s) URL"),
	})
}

// portal.jwt_audience defaults to server.public_url, which defaults to
// http://<server.addr>: a portal key and issuer alone start.
func TestAudienceDefaults(t *testing.T) {
	key := "portal:\n  jwt_secret: " + strings.Repeat("s", 32) + "\n  jwt_issuer: https://portal.example\n"
	for _, tt := range []struct{ yaml, want string }{
		{key, "http://127.0.0.1:8080"},
		{key + "server:\n  addr: 0.0.0.0:9000\n", "http://localhost:9000"},
		{key + "server:\n  public_url: https://sso.partner.example/\n", "https://sso.partner.example"},
		{key + "server:\n  public_url: https://sso.partner.example\n" + "  addr: 127.0.0.1:1\n", "https://sso.partner.example"},
	} {
		cfg, err := config.Parse([]byte(tt.yaml), nil, portal.Section())
		require.NoError(t, err, tt.yaml)
		assert.Equal(t, tt.want, portal.Audience(cfg), tt.yaml)
	}
	cfg, err := config.Parse([]byte(key+"  jwt_audience: https://aud.example\n"), nil, portal.Section())
	require.NoError(t, err)
	assert.Equal(t, "https://aud.example", portal.Audience(cfg))
}
