package app

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/handlers"
)

// Either IdP can turn the password form off: a SAML-only deployment too.
func TestPasswordForm(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(c *config.Config)
		want handlers.PasswordForm
	}{
		{"no IdP", func(*config.Config) {}, handlers.PasswordForm{Fallback: true}},
		{"OIDC, form on", func(c *config.Config) { c.OIDC.Issuer = "https://idp.example" }, handlers.PasswordForm{Fallback: true}},
		{"OIDC, form off", func(c *config.Config) { c.OIDC.Issuer, c.OIDC.LocalLogin = "https://idp.example", false }, handlers.PasswordForm{Hidden: true, Fallback: true}},
		{"SAML only, form off", func(c *config.Config) { c.SAML.IdPMetadataFile, c.SAML.LocalLogin = "md.xml", false }, handlers.PasswordForm{Hidden: true, Fallback: true}},
		{"SAML only, form and fallback off", func(c *config.Config) {
			c.SAML.IdPMetadataFile, c.SAML.LocalLogin, c.SAML.LocalLoginFallback = "md.xml", false, false
		}, handlers.PasswordForm{Hidden: true}},
		{"a SAML setting while SAML is off", func(c *config.Config) { c.SAML.LocalLogin = false }, handlers.PasswordForm{Fallback: true}},
	} {
		cfg := config.Defaults()
		tc.set(&cfg)
		assert.Equal(t, tc.want, passwordForm(cfg), tc.name)
	}
}
