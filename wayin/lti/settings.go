package lti

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/internal/loopback"
	"github.com/ssobridge/ssobridge/localpath"
)

// Settings are the lti: section: launching from a school's LMS, the
// bridge as an LTI 1.3 Tool. It is off while it lists no platform.
type Settings struct {
	// KeyFile is the tool's RSA private key (PEM), published at /lti/jwks;
	// empty: a key generated once and kept in the store, the same on every
	// instance.
	KeyFile string `yaml:"key_file"`
	// Platforms are the LMS registrations (in YAML a list; in
	// SSOBRIDGE_LTI_PLATFORMS the same list in YAML's or JSON's flow form).
	Platforms ConfiguredPlatforms `yaml:"platforms"`
	// DynamicRegistration turns LTI on without a platform in Platforms:
	// LMSs register themselves (LTI Dynamic Registration) from a URL the
	// console makes. With platforms listed it is on anyway.
	DynamicRegistration bool `yaml:"dynamic_registration"`
	// RosterMax is the members one read of a course's roster admits, for
	// every LMS whose own roster_max is unset (registered ones too); past
	// it the course waits for an admin's confirmation in the console.
	RosterMax int `yaml:"roster_max"`
	// SampleLMS is the embedded demo's sample LMS when the bridge serves
	// one (set by the bridge, not a setting): its configuration's origin
	// and its issuer, a name that is no address, which Dynamic
	// Registration takes from that origin.
	SampleLMS struct{ Origin, Issuer string } `yaml:"-"`
}

// Enabled reports whether LTI is on: platforms are configured, or LMSs
// may register themselves.
func (l Settings) Enabled() bool { return len(l.Platforms) > 0 || l.DynamicRegistration }

// Section is the lti: section.
func Section() config.Section[Settings] {
	return config.Section[Settings]{Key: "lti", Defaults: Settings{RosterMax: 500}, Check: checkSettings}
}

// maxRosterMax bounds a roster cap: a larger course is confirmed by an
// admin, not configured away.
const maxRosterMax = 100_000

// ConfiguredPlatforms is the list of lti.platforms.
type ConfiguredPlatforms []ConfiguredPlatform

// ListItem: a platform, create_accounts true unless set.
func (ConfiguredPlatforms) ListItem() (any, string, string) {
	return &ConfiguredPlatform{CreateAccounts: true}, "platform", `[{name: Canvas, issuer: "https://canvas.instructure.com", client_id: "1000", deployment_ids: ["1:abc"], auth_url: "https://sso.canvaslms.com/api/lti/authorize_redirect", jwks_url: "https://sso.canvaslms.com/api/lti/security/jwks"}]`
}

// ConfiguredPlatform is one LMS registration in lti.platforms: what the
// LMS shows once the tool is added.
type ConfiguredPlatform struct {
	Name          string       `yaml:"name"`           // shown on pages, e.g. "Springfield Canvas"
	Issuer        string       `yaml:"issuer"`         // the platform's iss, e.g. https://canvas.instructure.com
	ClientID      string       `yaml:"client_id"`      // the LMS's client id of this tool
	DeploymentIDs config.Words `yaml:"deployment_ids"` // at least one
	AuthURL       string       `yaml:"auth_url"`       // the platform's OIDC authorization endpoint
	JWKSURL       string       `yaml:"jwks_url"`       // the platform's key set
	// AdminRoles: LTI role URIs or short names (Administrator) whose
	// holders become partner admins; empty: none (a teacher is no partner
	// admin).
	AdminRoles     config.Words `yaml:"admin_roles"`
	CreateAccounts bool         `yaml:"create_accounts"` // create the account on a first launch (default true)
	// EmailDomains: the domains the LMS is trusted for (its addresses
	// reach existing accounts there; others are refused); empty: it
	// reaches only the accounts it made or linked.
	EmailDomains config.Words `yaml:"email_domains"`
	// FrameOrigins: the origins (https://lms.example) whose pages may
	// frame a launch's new-tab page; empty: auth_url's origin and the
	// launch's signed return_url's.
	FrameOrigins config.Words `yaml:"frame_origins"`
	// DeepLinkItems: the places of the editor (a project, a template) an
	// instructor may place in a course, besides the editor itself.
	DeepLinkItems []DeepLinkItem `yaml:"deep_link_items"`
	// TokenURL: the platform's OAuth 2.0 token endpoint, for its LTI
	// Advantage services (the course roster, NRPS); empty: none are read.
	TokenURL string `yaml:"token_url"`
	// RosterMax: the members one read of a course's roster admits; past
	// it the course waits for an admin's confirmation (0: lti.roster_max).
	RosterMax int `yaml:"roster_max"`
}

// checkSettings checks each platform's registration and the tool's key.
func checkSettings(c *config.Config, l *Settings, bad func(key, problem string)) {
	for i, p := range l.Platforms {
		config.CheckEmailDomains(fmt.Sprintf("lti.platforms[%d].email_domains", i), p.EmailDomains, bad)
	}
	if l.RosterMax < 1 || l.RosterMax > maxRosterMax {
		bad("lti.roster_max", fmt.Sprintf("%d: want 1..%d (the members one roster read admits before asking an admin)", l.RosterMax, maxRosterMax))
	}
	if !l.Enabled() {
		if l.KeyFile != "" {
			bad("lti.key_file", "set, but lti.platforms lists no platform and lti.dynamic_registration is off: LTI is off")
		}
		return
	}
	if l.KeyFile != "" {
		if _, err := os.Stat(l.KeyFile); err != nil {
			bad("lti.key_file", "cannot read: "+err.Error())
		}
	}
	seen := map[string]int{}
	for i, p := range l.Platforms {
		key := func(k string) string { return fmt.Sprintf("lti.platforms[%d].%s", i, k) }
		if strings.TrimSpace(p.Name) == "" {
			bad(key("name"), "empty; the platform's name shown on pages, e.g. \"Springfield Canvas\"")
		}
		if strings.TrimSpace(p.Issuer) == "" {
			bad(key("issuer"), "empty; the platform's issuer (iss) as its LMS shows it, e.g. https://canvas.instructure.com")
		}
		if p.ClientID == "" {
			bad(key("client_id"), "empty; the client id the LMS gave this tool")
		}
		for k, v := range map[string]string{"issuer": p.Issuer, "client_id": p.ClientID} {
			if strings.ContainsAny(v, "\r\n") {
				bad(key(k), "holds a line break; give it on one line, as the LMS shows it")
			}
		}
		if p.RosterMax < 0 || p.RosterMax > maxRosterMax {
			bad(key("roster_max"), fmt.Sprintf("%d: want 1..%d, or 0 for lti.roster_max", p.RosterMax, maxRosterMax))
		}
		if len(p.DeploymentIDs.List()) == 0 {
			bad(key("deployment_ids"), "empty; list at least one deployment id the LMS shows for this tool")
		}
		urls := map[string]string{"auth_url": p.AuthURL, "jwks_url": p.JWKSURL}
		if p.TokenURL != "" {
			urls["token_url"] = p.TokenURL
		}
		for k, raw := range urls {
			if u, err := url.Parse(raw); err != nil || !loopback.SecureURL(u) {
				bad(key(k), fmt.Sprintf("%q must be an https URL of the platform (http only on loopback)", raw))
			} else if p := c.LocalURLProblem(raw); p != "" {
				bad(key(k), p)
			}
		}
		for _, o := range p.FrameOrigins.List() {
			if u, err := url.Parse(o); err != nil || !loopback.SecureURL(u) || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil ||
				strings.ContainsAny(u.Host, "*;,' \"") {
				bad(key("frame_origins"), fmt.Sprintf("%q is not an origin; list exact origins such as https://springfield.instructure.com (no path, no wildcard)", o))
			}
		}
		for j, it := range p.DeepLinkItems {
			ik := func(k string) string { return fmt.Sprintf("lti.platforms[%d].deep_link_items[%d].%s", i, j, k) }
			if strings.TrimSpace(it.Title) == "" {
				bad(ik("title"), "empty; the title a course shows for this link, e.g. \"Make a trailer\"")
			}
			if localpath.CheckReturnTo(it.Path) != nil {
				bad(ik("path"), fmt.Sprintf("%q is not a path of the editor; use one such as /editor/templates/trailer", it.Path))
			}
		}
		reg := p.Issuer + "\x00" + p.ClientID
		if first, dup := seen[reg]; dup {
			bad(key("client_id"), fmt.Sprintf("issuer %q with client_id %q is registered already as lti.platforms[%d]", p.Issuer, p.ClientID, first))
		}
		seen[reg] = i
	}
}
