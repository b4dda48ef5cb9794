package samlsso

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/internal/loopback"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/wayin"
)

// Settings are the saml: section: sign-in with the partner's SAML 2.0
// identity provider, the bridge as a service provider.
type Settings struct {
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
	EmailDomains      config.Words `yaml:"email_domains"`
	CreateAccounts    bool         `yaml:"create_accounts"`     // default true
	AllowIDPInitiated bool         `yaml:"allow_idp_initiated"` // take unsolicited responses (default false)
	// LocalLogin and LocalLoginFallback: as OIDC's, for a SAML-only
	// deployment (either IdP's false hides the password form).
	LocalLogin         bool   `yaml:"local_login"`
	LocalLoginFallback bool   `yaml:"local_login_fallback"`
	SPCertFile         string `yaml:"sp_cert_file"` // PEM certificate published in the metadata; with sp_key_file, AuthnRequests are signed
	SPKeyFile          string `yaml:"sp_key_file"`  // its PEM private key (RSA or ECDSA)
}

// Enabled reports whether SAML sign-in is configured.
func (s Settings) Enabled() bool { return s.IdPMetadataURL != "" || s.IdPMetadataFile != "" }

// Section is the saml: section.
func Section() config.Section[Settings] {
	return config.Section[Settings]{Key: "saml", Check: checkSettings, Defaults: Settings{DisplayName: string(locale.Msg("your organisation")),
		CreateAccounts: true, MetadataRefresh: time.Hour, LocalLogin: true, LocalLoginFallback: true}}
}

// EntityID is the bridge's entity ID: saml.entity_id, else its metadata
// URL.
func EntityID(cfg config.Config) string {
	if s := config.Settings(cfg, Section()); s.EntityID != "" {
		return s.EntityID
	}
	return cfg.PublicURL(cfg.Server.Addr) + MetadataPath
}

// ACSURL is where the IdP posts its responses.
func ACSURL(cfg config.Config) string { return cfg.PublicURL(cfg.Server.Addr) + ACSPath }

// checkSettings checks the IdP's metadata, the bridge's own key pair and
// the button.
func checkSettings(c *config.Config, sm *Settings, bad func(key, problem string)) {
	config.CheckEmailDomains("saml.email_domains", sm.EmailDomains, bad)
	if !sm.Enabled() {
		return
	}
	switch {
	case sm.IdPMetadataURL != "" && sm.IdPMetadataFile != "":
		bad("saml.idp_metadata_url", "set saml.idp_metadata_url or saml.idp_metadata_file, not both")
	case sm.IdPMetadataURL != "":
		if u, err := url.Parse(sm.IdPMetadataURL); err != nil || !loopback.SecureURL(u) {
			bad("saml.idp_metadata_url", fmt.Sprintf("%q must be the https URL of the IdP's metadata (http only on loopback), e.g. https://idp.partner.example/metadata", sm.IdPMetadataURL))
		} else if p := c.LocalURLProblem(sm.IdPMetadataURL); p != "" {
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

// Module is sign-in with the partner's SAML IdP as the bridge registers
// it (wayin.Module).
type Module struct{}

// Section is its configuration section, saml:.
func (Module) Section() config.Sectioner { return Section() }

// Sources is the IdP, when its metadata is configured; there is one SAML
// IdP, "saml".
func (Module) Sources(cfg config.Config) []signin.Source {
	s := config.Settings(cfg, Section())
	if !s.Enabled() {
		return nil
	}
	return []signin.Source{{ID: "saml", Name: "SAML identity provider (" + s.DisplayName + ")", Noun: wayin.OrganisationSignIn(), Directory: true, Key: "saml", EmailDomains: s.EmailDomains.List(),
		CreateAccounts: s.CreateAccounts, AdminAuthority: s.AdminGroup != ""}}
}

// newSP is the service provider cfg describes (its metadata not read
// yet); used records the assertions taken.
func newSP(cfg config.Config, used OneTime, h wayin.Host) (*SP, error) {
	sc := config.Settings(cfg, Section())
	c := Config{MetadataURL: sc.IdPMetadataURL, MetadataFile: sc.IdPMetadataFile, EntityID: EntityID(cfg), ACSURL: ACSURL(cfg),
		EmailAttribute: sc.EmailAttribute, FirstNameAttribute: sc.FirstNameAttribute, LastNameAttribute: sc.LastNameAttribute,
		GroupsAttribute: sc.GroupsAttribute, AdminGroup: sc.AdminGroup, AllowIDPInitiated: sc.AllowIDPInitiated, Skew: skew, Now: h.Now,
		Used: used, HTTPClient: h.HTTPClient}
	if sc.SPCertFile != "" {
		key, cert, err := LoadKeyPair(sc.SPCertFile, sc.SPKeyFile)
		if err != nil {
			return nil, fmt.Errorf("config: saml.sp_cert_file, saml.sp_key_file: %w", err)
		}
		c.Key, c.Certificate = key, cert
	}
	return New(c)
}

// skew is the clock difference allowed on an assertion's validity: the
// 30 s every way in allows.
const skew = 30 * time.Second

// Open is the way in, its metadata read at once (metadata that cannot be
// read is a warning: sign-in shows the unavailable page until it is).
func (m Module) Open(ctx context.Context, h wayin.Host) (wayin.Way, error) {
	sc := config.Settings(h.Config, Section())
	if !sc.Enabled() {
		return nil, nil
	}
	sp, err := newSP(h.Config, h.Store, h)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := sp.Refresh(rctx); err != nil {
		h.Logger.Warn("SAML identity provider's metadata unreadable at start: sign-in with it shows the unavailable page until it is read (tried every 15 s); /readyz reports it",
			"err", err)
	}
	return &Way{IdP: sp, Source: m.Sources(h.Config)[0], DisplayName: sc.DisplayName, RefreshEvery: sc.MetadataRefresh}, nil
}

// checkOnly is the single-use record of a check, which signs no one in.
type checkOnly struct{}

func (checkOnly) UseOnce(context.Context, string, string, time.Time) error {
	return errors.New("check signs no one in")
}

// Check reads the IdP's metadata as the bridge would and says what it
// names, and what to enter at the IdP.
func (Module) Check(ctx context.Context, h wayin.Host, w io.Writer) bool {
	sc := config.Settings(h.Config, Section())
	if !sc.Enabled() {
		return true
	}
	sp, err := newSP(h.Config, checkOnly{}, h)
	if err == nil {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = sp.Refresh(rctx)
		cancel()
	}
	fmt.Fprintf(w, "saml:      metadata from %s\n", cmp.Or(sc.IdPMetadataURL, sc.IdPMetadataFile))
	fmt.Fprintf(w, "           at the IdP, enter: entity ID %s, ACS URL %s (HTTP-POST), NameID format emailAddress\n", EntityID(h.Config), ACSURL(h.Config))
	if err != nil {
		fmt.Fprintf(w, "verdict:   SAML UNAVAILABLE\n%s\n", err)
		return false
	}
	entity, sso, certs, _ := sp.Describe()
	fmt.Fprintf(w, "           the IdP: entity %s, sign-in at %s, %d signing certificate(s)\n", entity, sso, certs)
	fmt.Fprintf(w, "verdict:   SAML OK\n")
	return true
}

// PasswordForm: with saml.local_login false the IdP is every account's
// way in (a SAML-only deployment too).
func (Module) PasswordForm(cfg config.Config) (hide, fallback bool) {
	s := config.Settings(cfg, Section())
	return s.Enabled() && !s.LocalLogin, s.LocalLoginFallback
}
