package app

import (
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/wayin"
)

// The ways in as the admission sees them (signin.Source): who vouches for
// an arrival, the domains it is trusted for, whether it creates accounts
// and holds the admin role. The identities a source links are named by
// its ID, so an ID never changes with a setting that may (a metadata URL):
// OIDC's is its issuer, the portal's its token issuer, an LMS's its
// issuer; the one SAML IdP is "saml", SCIM "scim". A module names its
// own (wayin.Module.Sources).

// SCIMSource is the IdP's directory: it adopts existing accounts only of
// its email_domains.
func SCIMSource(cfg config.Config) signin.Source {
	return signin.Source{ID: signin.SCIMSource, Name: "identity provider's directory (SCIM)", Key: "scim", EmailDomains: cfg.SCIM.EmailDomains.List(),
		CreateAccounts: true, AdminAuthority: cfg.SCIM.AdminGroup != ""}
}

// Sources are every way in cfg turns on but the password (mods', in
// their order, then SCIM), in the order check reports them.
func Sources(cfg config.Config, mods []wayin.Module) []signin.Source {
	var out []signin.Source
	for _, m := range mods {
		out = append(out, m.Sources(cfg)...)
	}
	if cfg.SCIM.Enabled {
		out = append(out, SCIMSource(cfg))
	}
	return out
}
