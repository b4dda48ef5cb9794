package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOIDCRefusals(t *testing.T) {
	assertRefused(t, []refusal{
		{"oidc issuer http", "oidc:\n  issuer: http://idp.example\n  client_id: c\n  client_secret: s\n", nil, "oidc.issuer", "https URL"},
		{"oidc no client id", "oidc:\n  issuer: https://idp.example\n  client_secret: s\n", nil, "oidc.client_id", "client id"},
		{"oidc no secret", "oidc:\n  issuer: https://idp.example\n  client_id: c\n", nil, "oidc.client_secret", "SSOBRIDGE_OIDC_CLIENT_SECRET"},
		{"oidc scopes without openid", "oidc:\n  issuer: https://idp.example\n  client_id: c\n  client_secret: s\n  scopes: email\n", nil, "oidc.scopes", "openid"},
		{"oidc email domain with an @", "oidc:\n  email_domains: a@partner.example\n", nil, "oidc.email_domains", `"a@partner.example" is not a domain`},
		{"oidc scope list with a space", "oidc:\n  issuer: https://idp.example\n  client_id: c\n  client_secret: s\n  scopes: [openid, \"a b\"]\n", nil, "oidc.scopes", "single words"},
	})
}

// oidc.scopes is a list or a space-separated string; http is allowed on
// loopback only.
func TestOIDCAccepted(t *testing.T) {
	cfg, err := Parse([]byte("oidc:\n  issuer: http://127.0.0.1:5556/dex\n  client_id: c\n  scopes:\n    - openid\n    - email\n    - groups\n"),
		[]string{"SSOBRIDGE_OIDC_CLIENT_SECRET=s"})
	require.NoError(t, err)
	assert.Equal(t, []string{"openid", "email", "groups"}, cfg.OIDC.Scopes.List())
	assert.True(t, cfg.OIDC.Enabled())
	cfg, err = Parse([]byte("oidc:\n  issuer: https://idp.example\n  client_id: c\n  client_secret: s\n"), []string{"SSOBRIDGE_OIDC_SCOPES=openid profile"})
	require.NoError(t, err)
	assert.Equal(t, []string{"openid", "profile"}, cfg.OIDC.Scopes.List())
}
