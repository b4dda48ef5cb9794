package config

import (
	"fmt"
	"strings"
)

// SCIM is account provisioning by the partner's identity provider (SCIM
// 2.0, under /scim/v2).
type SCIM struct {
	Enabled bool `yaml:"enabled"` // default false
	// TokenFile holds the bearer tokens the IdP may send, one a line (two
	// while one is being rotated).
	TokenFile string `yaml:"token_file"`
	// Token is a single token: set SSOBRIDGE_SCIM_TOKEN (read from
	// TokenFile when that is set).
	Token string `yaml:"token"`
	// AdminGroup names the SCIM group whose members are partner admins;
	// empty: the IdP grants no admin.
	AdminGroup string `yaml:"admin_group"`
	// EmailDomains are the domains whose existing accounts the IdP may
	// take over (adopt); empty: it manages only the accounts it made.
	EmailDomains Words `yaml:"email_domains"`
	// ProvisionPlatformUsers creates a new account's platform user in the
	// background, at the platform's shared pace (default true).
	ProvisionPlatformUsers bool `yaml:"provision_platform_users"`
}

// Tokens are the accepted bearer tokens.
func (s SCIM) Tokens() []string {
	var out []string
	for _, l := range strings.Split(s.Token, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// minSCIMToken is the shortest bearer token accepted: 32 characters (a
// token from "openssl rand -hex 32" has 64).
const minSCIMToken = 32

// validateSCIM checks SCIM: its tokens, when it is on.
func (c *Config) validateSCIM(bad func(key, problem string)) {
	CheckEmailDomains("scim.email_domains", c.SCIM.EmailDomains, bad)
	sc := c.SCIM
	if !sc.Enabled {
		return
	}
	tokens := sc.Tokens()
	key := "scim.token"
	if sc.TokenFile != "" {
		key = "scim.token_file"
	}
	switch {
	case len(tokens) == 0:
		bad(key, "no token; put one (e.g. from: openssl rand -hex 32) in scim.token_file, or set "+EnvName("scim.token"))
	case len(tokens) > 2:
		bad(key, fmt.Sprintf("%d tokens; give one, or two while one is being rotated", len(tokens)))
	}
	for i, t := range tokens {
		if len(t) < minSCIMToken {
			bad(key, fmt.Sprintf("token %d is %d characters; use a long random one of at least %d (e.g. openssl rand -hex 32)", i+1, len(t), minSCIMToken))
		}
	}
	if len(sc.AdminGroup) > 256 {
		bad("scim.admin_group", "over 256 characters; the group's displayName in the IdP")
	}
}
