package config

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/internal/loopback"
)

// SAML is sign-in with the partner's SAML 2.0 identity provider, the
// bridge as a service provider.
type SAML struct {
	IdPMetadataURL  string `yaml:"idp_metadata_url"`  // https URL of the IdP's metadata; empty (and no file): off
	IdPMetadataFile string `yaml:"idp_metadata_file"` // or a file holding it
	// MetadataRefresh is how often the metadata is read again (a new
	// signing certificate is taken without a restart).
	MetadataRefresh    time.Duration `yaml:"metadata_refresh"`
	EntityID           string        `yaml:"entity_id"`            // default <public_url>/saml/metadata
	DisplayName        string        `yaml:"display_name"`         // "Sign in with <display_name>"
	EmailAttribute     string        `yaml:"email_attribute"`      // default: an emailAddress NameID, else an attribute email (or mail)
	FirstNameAttribute string        `yaml:"first_name_attribute"` // default firstName (also givenName, its OID and claim URI)
	LastNameAttribute  string        `yaml:"last_name_attribute"`  // default lastName (also sn, surname, its OID and claim URI)
	GroupsAttribute    string        `yaml:"groups_attribute"`     // default groups (also memberOf and Entra's groups claim URI)
	AdminGroup         string        `yaml:"admin_group"`          // members are admins; empty: the IdP grants no admin
	// EmailDomains: the domains the IdP is trusted for (its addresses
	// reach existing accounts there; others are refused); empty: it
	// reaches only the accounts it made or linked.
	EmailDomains      Words `yaml:"email_domains"`
	CreateAccounts    bool  `yaml:"create_accounts"`     // default true
	AllowIDPInitiated bool  `yaml:"allow_idp_initiated"` // take unsolicited responses (default false)
	// LocalLogin and LocalLoginFallback: as OIDC's, for a SAML-only
	// deployment (either IdP's false hides the password form).
	LocalLogin         bool   `yaml:"local_login"`
	LocalLoginFallback bool   `yaml:"local_login_fallback"`
	SPCertFile         string `yaml:"sp_cert_file"` // PEM certificate published in the metadata; with sp_key_file, AuthnRequests are signed
	SPKeyFile          string `yaml:"sp_key_file"`  // its PEM private key (RSA or ECDSA)
}

// Enabled reports whether SAML sign-in is configured.
func (s SAML) Enabled() bool { return s.IdPMetadataURL != "" || s.IdPMetadataFile != "" }

// SAMLEntityID is the bridge's entity ID: saml.entity_id, else its
// metadata URL.
func (c *Config) SAMLEntityID(listenAddr string) string {
	if c.SAML.EntityID != "" {
		return c.SAML.EntityID
	}
	return c.PublicURL(listenAddr) + "/saml/metadata"
}

// SAMLACSURL is where the IdP posts its responses: the public URL's
// /saml/acs.
func (c *Config) SAMLACSURL(listenAddr string) string {
	return c.PublicURL(listenAddr) + "/saml/acs"
}

// validateSAML checks SAML: the IdP's metadata, the bridge's own key pair, the button.
func (c *Config) validateSAML(bad func(key, problem string)) {
	if sm := c.SAML; sm.Enabled() {
		switch {
		case sm.IdPMetadataURL != "" && sm.IdPMetadataFile != "":
			bad("saml.idp_metadata_url", "set saml.idp_metadata_url or saml.idp_metadata_file, not both")
		case sm.IdPMetadataURL != "":
			if u, err := url.Parse(sm.IdPMetadataURL); err != nil || !loopback.SecureURL(u) {
				bad("saml.idp_metadata_url", fmt.Sprintf("%q must be the https URL of the IdP's metadata (http only on loopback), e.g. https://idp.partner.example/metadata", sm.IdPMetadataURL))
			} else if p := c.localURLProblem(sm.IdPMetadataURL); p != "" {
				bad("saml.idp_metadata_url", p)
			}
		default:
			if _, err := os.Stat(sm.IdPMetadataFile); err != nil {
				bad("saml.idp_metadata_file", "cannot read: "+err.Error())
			}
		}
		if sm.MetadataRefresh < time.Minute || sm.MetadataRefresh > 24*time.Hour {
			bad("saml.metadata_refresh", fmt.Sprintf("%s: use 1m to 24h (1h is a good value)", sm.MetadataRefresh))
		}
		if (sm.SPCertFile == "") != (sm.SPKeyFile == "") {
			bad("saml.sp_cert_file", "set both saml.sp_cert_file and saml.sp_key_file, or neither")
		}
		for key, f := range map[string]string{"saml.sp_cert_file": sm.SPCertFile, "saml.sp_key_file": sm.SPKeyFile} {
			if f != "" {
				if _, err := os.Stat(f); err != nil {
					bad(key, "cannot read: "+err.Error())
				}
			}
		}
		if strings.TrimSpace(sm.DisplayName) == "" {
			bad("saml.display_name", "empty; the name on the sign-in button, e.g. \"Springfield Schools\"")
		}
	}
}
