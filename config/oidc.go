package config

import (
	"fmt"
	"net/url"
	"slices"

	"github.com/ssobridge/ssobridge/internal/loopback"
)

// OIDC is sign-in with the partner's identity provider.
type OIDC struct {
	Issuer               string `yaml:"issuer"`                 // https URL of the IdP (discovery); empty: off
	ClientID             string `yaml:"client_id"`              // the bridge's client at the IdP
	ClientSecret         string `yaml:"client_secret"`          // set SSOBRIDGE_OIDC_CLIENT_SECRET
	ClientSecretFile     string `yaml:"client_secret_file"`     // or read it from this file
	DisplayName          string `yaml:"display_name"`           // "Sign in with <display_name>"
	Scopes               Words  `yaml:"scopes"`                 // default: openid email profile
	GroupsClaim          string `yaml:"groups_claim"`           // default: groups
	AdminGroup           string `yaml:"admin_group"`            // members are admins; empty: the IdP grants no admin
	AllowUnverifiedEmail bool   `yaml:"allow_unverified_email"` // default false
	CreateAccounts       bool   `yaml:"create_accounts"`        // default true
	// EmailDomains: the domains the IdP is trusted for (its addresses
	// reach existing accounts there; others are refused); empty: it
	// reaches only the accounts it made or linked.
	EmailDomains       Words `yaml:"email_domains"`
	LocalLogin         bool  `yaml:"local_login"`          // show the password form (default true)
	LocalLoginFallback bool  `yaml:"local_login_fallback"` // with local_login off: /login?local=1 still shows it (default true)
}

// Enabled reports whether OIDC sign-in is configured.
func (o OIDC) Enabled() bool { return o.Issuer != "" }

// validateOIDC checks OIDC: the identity provider and the bridge's client.
func (c *Config) validateOIDC(bad func(key, problem string)) {
	if o := c.OIDC; o.Enabled() {
		if u, err := url.Parse(o.Issuer); err != nil || !loopback.SecureURL(u) {
			bad("oidc.issuer", fmt.Sprintf("%q must be the IdP's https URL (http only on loopback), e.g. https://login.partner.example", o.Issuer))
		} else if p := c.localURLProblem(o.Issuer); p != "" {
			bad("oidc.issuer", p)
		}
		if o.ClientID == "" {
			bad("oidc.client_id", "empty; the client id the IdP issued for the bridge")
		}
		if o.ClientSecret == "" {
			bad("oidc.client_secret", "empty; set "+EnvName("oidc.client_secret")+" or oidc.client_secret_file")
		}
		if !slices.Contains(o.Scopes.List(), "openid") {
			bad("oidc.scopes", fmt.Sprintf("%q must include openid", string(o.Scopes)))
		}
	}
}
