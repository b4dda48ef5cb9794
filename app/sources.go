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

// Sources are every way in cfg turns on but the password (mods', in
// their order: SCIM's last), in the order check reports them.
func Sources(cfg config.Config, mods []wayin.Module) []signin.Source {
	var out []signin.Source
	for _, m := range mods {
		out = append(out, m.Sources(cfg)...)
	}
	return out
}
