package oidc_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/config/configtest"
	"github.com/ssobridge/ssobridge/wayin/oidc"
)

func TestSettingsRefusals(t *testing.T) {
	configtest.AssertRefused(t, []config.Sectioner{oidc.Section()}, []configtest.Refusal{
		configtest.Refused("oidc issuer http", "oidc:\n  issuer: http://idp.example\n  client_id: c\n  client_secret: s\n", nil, "oidc.issuer", "https URL"),
		configtest.Refused("oidc no client id", "oidc:\n  issuer: https://idp.example\n  client_secret: s\n", nil, "oidc.client_id", "client id"),
		configtest.Refused("oidc no secret", "oidc:\n  issuer: https://idp.example\n  client_id: c\n", nil, "oidc.client_secret", "SSOBRIDGE_OIDC_CLIENT_SECRET"),
		configtest.Refused("oidc scopes without openid", "oidc:\n  issuer: https://idp.example\n  client_id: c\n  client_secret: s\n  scopes: email\n", nil, "oidc.scopes", "openid"),
		configtest.Refused("oidc email domain with an @", "oidc:\n  email_domains: a@partner.example\n", nil, "oidc.email_domains", `"a@partner.example" is not a domain`),
		configtest.Refused("oidc scope list with a space", "oidc:\n  issuer: https://idp.example\n  client_id: c\n  client_secret: s\n  scopes: [openid, \"a b\"]\n", nil, "oidc.scopes", "single words"),
		configtest.Refused("oidc key misspelt", "oidc:\n  isuer: https://idp.example\n", nil, "oidc.isuer", "did you mean oidc.issuer?"),
		configtest.Refused("oidc variable misspelt", "", []string{"SSOBRIDGE_OIDC_CLIENT_SECRE=s"}, "SSOBRIDGE_OIDC_CLIENT_SECRE", "did you mean SSOBRIDGE_OIDC_CLIENT_SECRET?"),
		configtest.Refused("oidc secret file unreadable", "oidc:\n  issuer: https://idp.example\n  client_id: c\n  client_secret_file: /nonexistent/secret\n", nil,
			"oidc.client_secret_file", "cannot read"),
		configtest.Refused("oidc plain http on loopback, the switch off", "oidc:\n  issuer: http://127.0.0.1:5556/dex\n  client_id: c\n  client_secret: s\noutbound:\n  allow_local: \"false\"\n",
			nil, "oidc.issuer", "outbound.allow_local: true"),
	})
}

// oidc.scopes is a list or a space-separated string; http is allowed on
// loopback only; the secret is read from its file; without the section
// given, oidc: is no setting.
func TestSettingsAccepted(t *testing.T) {
	sections := []config.Sectioner{oidc.Section()}
	cfg, err := config.Parse([]byte("oidc:\n  issuer: http://127.0.0.1:5556/dex\n  client_id: c\n  scopes:\n    - openid\n    - email\n    - groups\n"),
		[]string{"SSOBRIDGE_OIDC_CLIENT_SECRET=s"}, sections...)
	require.NoError(t, err)
	o := config.Settings(cfg, oidc.Section())
	assert.Equal(t, []string{"openid", "email", "groups"}, o.Scopes.List())
	assert.True(t, o.Enabled())
	assert.Equal(t, "s", o.ClientSecret)
	assert.Equal(t, "groups", o.GroupsClaim, "a default kept")

	cfg, err = config.Parse([]byte("oidc:\n  issuer: https://idp.example\n  client_id: c\n  client_secret: s\n"), []string{"SSOBRIDGE_OIDC_SCOPES=openid profile"}, sections...)
	require.NoError(t, err)
	assert.Equal(t, []string{"openid", "profile"}, config.Settings(cfg, oidc.Section()).Scopes.List())

	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("from-file\n"), 0o600))
	cfg, err = config.Parse([]byte("oidc:\n  issuer: https://idp.example\n  client_id: c\n  client_secret_file: "+secret+"\n"), nil, sections...)
	require.NoError(t, err)
	assert.Equal(t, "from-file", config.Settings(cfg, oidc.Section()).ClientSecret)

	_, err = config.Parse([]byte("oidc:\n  issuer: https://idp.example\n"), nil)
	require.ErrorIs(t, err, config.ErrInvalid, "read without the section")
	assert.Contains(t, err.Error(), "config: oidc: line 1: no such setting")
}
