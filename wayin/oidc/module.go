package oidc

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"time"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/internal/loopback"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/wayin"
)

// Settings are the oidc: section: sign-in with the partner's identity
// provider.
type Settings struct {
	Issuer               string       `yaml:"issuer"`                 // https URL of the IdP (discovery); empty: off
	ClientID             string       `yaml:"client_id"`              // the bridge's client at the IdP
	ClientSecret         string       `yaml:"client_secret"`          // set SSOBRIDGE_OIDC_CLIENT_SECRET
	ClientSecretFile     string       `yaml:"client_secret_file"`     // or read it from this file
	DisplayName          string       `yaml:"display_name"`           // "Sign in with <display_name>"
	Scopes               config.Words `yaml:"scopes"`                 // default: openid email profile
	GroupsClaim          string       `yaml:"groups_claim"`           // default: groups
	AdminGroup           string       `yaml:"admin_group"`            // members are admins; empty: the IdP grants no admin
	AllowUnverifiedEmail bool         `yaml:"allow_unverified_email"` // default false
	CreateAccounts       bool         `yaml:"create_accounts"`        // default true
	// EmailDomains: the domains the IdP is trusted for (its addresses
	// reach existing accounts there; others are refused); empty: it
	// reaches only the accounts it made or linked.
	EmailDomains       config.Words `yaml:"email_domains"`
	LocalLogin         bool         `yaml:"local_login"`          // show the password form (default true)
	LocalLoginFallback bool         `yaml:"local_login_fallback"` // with local_login off: /login?local=1 still shows it (default true)
}

// Enabled reports whether OIDC sign-in is configured.
func (s Settings) Enabled() bool { return s.Issuer != "" }

// Section is the oidc: section.
func Section() config.Section[Settings] {
	return config.Section[Settings]{Key: "oidc", Check: checkSettings, Defaults: Settings{DisplayName: string(locale.Msg("your organisation")),
		Scopes: "openid email profile", GroupsClaim: "groups", CreateAccounts: true, LocalLogin: true, LocalLoginFallback: true}}
}

// checkSettings reads the client secret's file and checks the identity
// provider and the bridge's client.
func checkSettings(c *config.Config, o *Settings, bad func(key, problem string)) {
	config.CheckEmailDomains("oidc.email_domains", o.EmailDomains, bad)
	if o.ClientSecretFile != "" {
		secret, err := config.ReadSecretFile(o.ClientSecretFile)
		if err != nil {
			bad("oidc.client_secret_file", err.Error())
		}
		o.ClientSecret = secret
	}
	if !o.Enabled() {
		return
	}
	if u, err := url.Parse(o.Issuer); err != nil || !loopback.SecureURL(u) {
		bad("oidc.issuer", fmt.Sprintf("%q must be the IdP's https URL (http only on loopback), e.g. https://login.partner.example", o.Issuer))
	} else if p := c.LocalURLProblem(o.Issuer); p != "" {
		bad("oidc.issuer", p)
	}
	if o.ClientID == "" {
		bad("oidc.client_id", "empty; the client id the IdP issued for the bridge")
	}
	if o.ClientSecret == "" {
		bad("oidc.client_secret", "empty; set "+config.EnvName("oidc.client_secret")+" or oidc.client_secret_file")
	}
	if !slices.Contains(o.Scopes.List(), "openid") {
		bad("oidc.scopes", fmt.Sprintf("%q must include openid", string(o.Scopes)))
	}
}

// Module is sign-in with the partner's OpenID Connect IdP as the bridge
// registers it (wayin.Module).
type Module struct{}

// Section is its configuration section, oidc:.
func (Module) Section() config.Sectioner { return Section() }

// Sources is the IdP, when oidc.issuer is set. Its ID is the issuer's, so
// that the identities it links never change with a setting that may.
func (Module) Sources(cfg config.Config) []signin.Source {
	o := config.Settings(cfg, Section())
	if !o.Enabled() {
		return nil
	}
	return []signin.Source{{ID: "oidc:" + o.Issuer, Name: "identity provider (" + o.DisplayName + ")", Noun: wayin.OrganisationSignIn(), Directory: true, Key: "oidc", EmailDomains: o.EmailDomains.List(),
		CreateAccounts: o.CreateAccounts, AdminAuthority: o.AdminGroup != ""}}
}

// Open is the way in, its IdP discovered at once (an IdP that does not
// answer is a warning: sign-in retries discovery, /readyz reports it).
func (m Module) Open(ctx context.Context, h wayin.Host) (wayin.Way, error) {
	o := config.Settings(h.Config, Section())
	if !o.Enabled() {
		return nil, nil
	}
	prov := New(Config{Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes.List(), GroupsClaim: o.GroupsClaim,
		AdminGroup: o.AdminGroup, Now: h.Now, HTTPClient: h.HTTPClient})
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := prov.Discover(dctx); err != nil {
		h.Logger.Warn("identity provider unreachable at start: sign-in with it retries discovery; /readyz reports it", "issuer", o.Issuer, "err", err)
	}
	return &Way{RP: prov, Source: m.Sources(h.Config)[0], DisplayName: o.DisplayName, AllowUnverifiedEmail: o.AllowUnverifiedEmail, WatchEvery: h.PollEvery}, nil
}

// Check says nothing of the IdP: /readyz and the sign-in page report it.
func (Module) Check(context.Context, wayin.Host, io.Writer) bool { return true }

// PasswordForm: with oidc.local_login false the IdP is every account's
// way in, and the form shows at /login?local=1 only while
// oidc.local_login_fallback allows.
func (Module) PasswordForm(cfg config.Config) (hide, fallback bool) {
	o := config.Settings(cfg, Section())
	return o.Enabled() && !o.LocalLogin, o.LocalLoginFallback
}
