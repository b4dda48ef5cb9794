package app

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/handlers"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/oidc"
	"github.com/ssobridge/ssobridge/wayin/samlsso"
)

// Either IdP can turn the password form off: a SAML-only deployment too;
// with both off, the fallback holds only while both allow it.
func TestPasswordForm(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(c *config.Config)
		want handlers.PasswordForm
	}{
		{"no IdP", func(*config.Config) {}, handlers.PasswordForm{Fallback: true}},
		{"OIDC, form on", func(c *config.Config) { setOIDC(c, func(o *oidc.Settings) { o.Issuer = "https://idp.example" }) }, handlers.PasswordForm{Fallback: true}},
		{"OIDC, form off", func(c *config.Config) {
			setOIDC(c, func(o *oidc.Settings) { o.Issuer, o.LocalLogin = "https://idp.example", false })
		}, handlers.PasswordForm{Hidden: true, Fallback: true}},
		{"OIDC and SAML, form off, one without the fallback", func(c *config.Config) {
			setOIDC(c, func(o *oidc.Settings) { o.Issuer, o.LocalLogin = "https://idp.example", false })
			setSAML(c, func(s *samlsso.Settings) {
				s.IdPMetadataFile, s.LocalLogin, s.LocalLoginFallback = "md.xml", false, false
			})
		}, handlers.PasswordForm{Hidden: true}},
		{"an OIDC setting while OIDC is off", func(c *config.Config) { setOIDC(c, func(o *oidc.Settings) { o.LocalLogin = false }) }, handlers.PasswordForm{Fallback: true}},
		{"SAML only, form off", func(c *config.Config) {
			setSAML(c, func(s *samlsso.Settings) { s.IdPMetadataFile, s.LocalLogin = "md.xml", false })
		}, handlers.PasswordForm{Hidden: true, Fallback: true}},
		{"SAML only, form and fallback off", func(c *config.Config) {
			setSAML(c, func(s *samlsso.Settings) {
				s.IdPMetadataFile, s.LocalLogin, s.LocalLoginFallback = "md.xml", false, false
			})
		}, handlers.PasswordForm{Hidden: true}},
		{"a SAML setting while SAML is off", func(c *config.Config) { setSAML(c, func(s *samlsso.Settings) { s.LocalLogin = false }) }, handlers.PasswordForm{Fallback: true}},
	} {
		cfg := config.Defaults(wayin.Sections(Modules())...)
		tc.set(&cfg)
		assert.Equal(t, tc.want, passwordForm(cfg, Modules()), tc.name)
	}
}

// setSAML changes cfg's saml: section.
func setSAML(cfg *config.Config, set func(*samlsso.Settings)) {
	s := config.Settings(*cfg, samlsso.Section())
	set(&s)
	*cfg = config.WithSettings(*cfg, samlsso.Section(), s)
}

// setOIDC changes cfg's oidc: section.
func setOIDC(cfg *config.Config, set func(*oidc.Settings)) {
	o := config.Settings(*cfg, oidc.Section())
	set(&o)
	*cfg = config.WithSettings(*cfg, oidc.Section(), o)
}
