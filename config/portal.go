package config

import (
	"fmt"
	"net/url"
	"os"
	"strings"
)

// Portal is the signed JWT handoff from the partner's portal (/sso/jwt).
type Portal struct {
	JWTSecret        string `yaml:"jwt_secret"`          // HS256: the secret's bytes as written, at least 32
	JWTPublicKeyFile string `yaml:"jwt_public_key_file"` // or a PEM public key: RS256, ES256 or EdDSA
	JWTIssuer        string `yaml:"jwt_issuer"`          // required with a key
	JWTAudience      string `yaml:"jwt_audience"`        // default server.public_url
	CreateAccounts   bool   `yaml:"create_accounts"`     // create the account on first use
	// EmailDomains: the domains the portal is trusted for (its addresses
	// reach existing accounts there; others are refused); empty: it
	// reaches only the accounts it made or linked.
	EmailDomains Words `yaml:"email_domains"`
	// URL is the partner's portal: the "back" links of users who came from
	// it lead there (an absolute http(s) URL; empty: none).
	URL string `yaml:"url"`
	// AdminSessions lets a session begun by the handoff open the admin
	// console; off (the default), an admin signs in with a password or
	// the IdP first, since whoever holds the key can sign in as anyone.
	AdminSessions bool `yaml:"admin_sessions"`
}

// Enabled reports whether the JWT handoff is configured.
func (p Portal) Enabled() bool { return p.JWTSecret != "" || p.JWTPublicKeyFile != "" }

// validatePortal checks the portal: the handoff's key and issuer, the portal's URL.
func (c *Config) validatePortal(bad func(key, problem string)) {
	if pt := c.Portal; pt.Enabled() {
		switch {
		case pt.JWTSecret != "" && pt.JWTPublicKeyFile != "":
			bad("portal.jwt_secret", "set portal.jwt_secret (HS256) or portal.jwt_public_key_file (RS256, ES256, EdDSA), not both")
		case pt.JWTSecret != "" && len(pt.JWTSecret) < 32:
			bad("portal.jwt_secret", fmt.Sprintf("is %d bytes; at least 32 are required (e.g. `openssl rand -hex 32`), set as %s", len(pt.JWTSecret), EnvName("portal.jwt_secret")))
		case pt.JWTPublicKeyFile != "":
			if _, err := os.Stat(pt.JWTPublicKeyFile); err != nil {
				bad("portal.jwt_public_key_file", "cannot read: "+err.Error())
			}
		}
		if strings.TrimSpace(pt.JWTIssuer) == "" {
			bad("portal.jwt_issuer", "required with a portal key: the iss claim your portal puts in its tokens (e.g. https://portal.partner.example)")
		}
	}
	if u := c.Portal.URL; u != "" {
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			bad("portal.url", fmt.Sprintf("%q must be an absolute http(s) URL, your portal's address (e.g. https://portal.partner.example)", u))
		}
	}
}

// PortalAudience is the aud a portal token must carry.
func (c *Config) PortalAudience() string {
	if c.Portal.JWTAudience != "" {
		return c.Portal.JWTAudience
	}
	return c.PublicURL(c.Server.Addr)
}
