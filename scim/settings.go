package scim

import (
	"fmt"
	"strings"

	"github.com/ssobridge/ssobridge/config"
)

// Settings are the scim: section: account provisioning by the partner's
// identity provider (SCIM 2.0, under /scim/v2).
type Settings struct {
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
	EmailDomains config.Words `yaml:"email_domains"`
	// ProvisionPlatformUsers creates a new account's platform user in the
	// background, at the platform's shared pace (default true).
	ProvisionPlatformUsers bool `yaml:"provision_platform_users"`
}

// Tokens are the accepted bearer tokens.
func (s Settings) Tokens() []string {
	var out []string
	for _, l := range strings.Split(s.Token, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// Section is the scim: section.
func Section() config.Section[Settings] {
	return config.Section[Settings]{Key: "scim", Check: checkSettings, Defaults: Settings{ProvisionPlatformUsers: true}}
}

// minToken is the shortest bearer token accepted: 32 characters (a token
// from "openssl rand -hex 32" has 64).
const minToken = 32

// checkSettings reads the tokens' file and checks the tokens, when SCIM
// is on.
func checkSettings(_ *config.Config, s *Settings, bad func(key, problem string)) {
	config.CheckEmailDomains("scim.email_domains", s.EmailDomains, bad)
	if s.TokenFile != "" {
		if s.Token != "" {
			bad("scim.token_file", "set it or "+config.EnvName("scim.token")+" (scim.token), not both")
			return
		}
		tokens, err := config.ReadSecretFile(s.TokenFile)
		if err != nil {
			bad("scim.token_file", err.Error())
			return
		}
		s.Token = tokens
	}
	if !s.Enabled {
		return
	}
	tokens := s.Tokens()
	key := "scim.token"
	if s.TokenFile != "" {
		key = "scim.token_file"
	}
	switch {
	case len(tokens) == 0:
		bad(key, "no token; put one (e.g. from: openssl rand -hex 32) in scim.token_file, or set "+config.EnvName("scim.token"))
	case len(tokens) > 2:
		bad(key, fmt.Sprintf("%d tokens; give one, or two while one is being rotated", len(tokens)))
	}
	for i, t := range tokens {
		if len(t) < minToken {
			bad(key, fmt.Sprintf("token %d is %d characters; use a long random one of at least %d (e.g. openssl rand -hex 32)", i+1, len(t), minToken))
		}
	}
	if len(s.AdminGroup) > 256 {
		bad("scim.admin_group", "over 256 characters; the group's displayName in the IdP")
	}
}
