package portal

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/internal/keptfile"
	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/wayin"
)

// Settings are the portal: section: the signed JWT handoff from the
// partner's portal (/sso/jwt), and the portal's address.
type Settings struct {
	JWTSecret        string `yaml:"jwt_secret"`          // HS256: the secret's bytes as written, at least 32
	JWTPublicKeyFile string `yaml:"jwt_public_key_file"` // or a PEM public key: RS256, ES256 or EdDSA
	JWTIssuer        string `yaml:"jwt_issuer"`          // required with a key
	JWTAudience      string `yaml:"jwt_audience"`        // default server.public_url
	CreateAccounts   bool   `yaml:"create_accounts"`     // create the account on first use
	// EmailDomains: the domains the portal is trusted for (its addresses
	// reach existing accounts there; others are refused); empty: it
	// reaches only the accounts it made or linked.
	EmailDomains config.Words `yaml:"email_domains"`
	// URL is the partner's portal: the "back" links of users who came from
	// it lead there (an absolute http(s) URL; empty: none).
	URL string `yaml:"url"`
	// AdminSessions lets a session begun by the handoff open the admin
	// console; off (the default), an admin signs in with a password or
	// the IdP first, since whoever holds the key can sign in as anyone.
	AdminSessions bool `yaml:"admin_sessions"`
}

// Enabled reports whether the JWT handoff is configured.
func (p Settings) Enabled() bool { return p.JWTSecret != "" || p.JWTPublicKeyFile != "" }

// Section is the portal: section.
func Section() config.Section[Settings] {
	return config.Section[Settings]{Key: "portal", Defaults: Settings{CreateAccounts: true}, Check: checkSettings}
}

// checkSettings checks the handoff's key and issuer, and the portal's
// URL.
func checkSettings(_ *config.Config, pt *Settings, bad func(key, problem string)) {
	config.CheckEmailDomains("portal.email_domains", pt.EmailDomains, bad)
	if pt.Enabled() {
		switch {
		case pt.JWTSecret != "" && pt.JWTPublicKeyFile != "":
			bad("portal.jwt_secret", "set portal.jwt_secret (HS256) or portal.jwt_public_key_file (RS256, ES256, EdDSA), not both")
		case pt.JWTSecret != "" && len(pt.JWTSecret) < MinSecret:
			bad("portal.jwt_secret", fmt.Sprintf("is %d bytes; at least %d are required (e.g. `openssl rand -hex 32`), set as %s", len(pt.JWTSecret), MinSecret,
				config.EnvName("portal.jwt_secret")))
		case pt.JWTPublicKeyFile != "":
			if _, err := os.Stat(pt.JWTPublicKeyFile); err != nil {
				bad("portal.jwt_public_key_file", "cannot read: "+err.Error())
			}
		}
		if strings.TrimSpace(pt.JWTIssuer) == "" {
			bad("portal.jwt_issuer", "required with a portal key: the iss claim your portal puts in its tokens (e.g. https://portal.partner.example)")
		}
	}
	if u := pt.URL; u != "" {
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			bad("portal.url", fmt.Sprintf("%q must be an absolute http(s) URL, your portal's address (e.g. https://portal.partner.example)", u))
		}
	}
}

// Audience is the aud a portal token must carry: portal.jwt_audience,
// else the bridge's public URL.
func Audience(cfg config.Config) string {
	if a := config.Settings(cfg, Section()).JWTAudience; a != "" {
		return a
	}
	return cfg.PublicURL(cfg.Server.Addr)
}

// The embedded demo's own portal key, when no portal key is configured:
// the sample partner portal at DemoPath and `ssobridge portal-link` sign
// with it.
const (
	demoKeyFile = "portal-demo.key"
	demoIssuer  = "ssobridge-demo-portal"
	demoAud     = "ssobridge-demo"
)

// demo is whether the embedded demo's sample portal stands in for the
// partner's: no portal key, the built-in platform.
func demo(cfg config.Config) bool {
	return !config.Settings(cfg, Section()).Enabled() && cfg.Platform.BaseURL == config.Embedded
}

// SigningKey is how portal tokens are checked: the configured key, or
// the embedded demo's (demo true; made once and kept in the data
// directory); ok is false when the handoff is off.
func SigningKey(cfg config.Config) (k Config, isDemo, ok bool, err error) {
	p := config.Settings(cfg, Section())
	switch {
	case p.JWTSecret != "":
		return Config{Secret: []byte(p.JWTSecret), Issuer: p.JWTIssuer, Audience: Audience(cfg)}, false, true, nil
	case p.JWTPublicKeyFile != "":
		key, _, err := LoadPublicKey(p.JWTPublicKeyFile)
		if err != nil {
			return Config{}, false, false, fmt.Errorf("config: portal.jwt_public_key_file: %s: %w", p.JWTPublicKeyFile, err)
		}
		return Config{PublicKey: key, Issuer: p.JWTIssuer, Audience: Audience(cfg)}, false, true, nil
	case !demo(cfg):
		return Config{}, false, false, nil
	}
	data, err := keptfile.Read(cfg.DataDir(), demoKeyFile,
		func(data []byte) bool { return len(strings.TrimSpace(string(data))) >= MinSecret },
		func() ([]byte, error) { return []byte(randid.Hex(32) + "\n"), nil })
	if err != nil {
		return Config{}, false, false, err
	}
	return Config{Secret: []byte(strings.TrimSpace(string(data))), Issuer: demoIssuer, Audience: demoAud}, true, true, nil
}

// Module is the portal's handoff as the bridge registers it
// (wayin.Module), and the partner's portal (wayin.Home).
type Module struct{}

// Section is its configuration section, portal:.
func (Module) Section() config.Sectioner { return Section() }

// Sources is the portal, named by its tokens' issuer; the embedded
// demo's sample portal is trusted for its one domain, portal.example.
func (Module) Sources(cfg config.Config) []signin.Source {
	p := config.Settings(cfg, Section())
	s := signin.Source{ID: "portal:" + p.JWTIssuer, Name: "portal", Noun: locale.Msg("your portal"), Key: "portal", EmailDomains: p.EmailDomains.List(), CreateAccounts: p.CreateAccounts}
	switch {
	case demo(cfg):
		s.ID, s.EmailDomains, s.CreateAccounts = "portal:"+demoIssuer, []string{"portal.example"}, true
	case !p.Enabled():
		return nil
	}
	return []signin.Source{s}
}

// Open is the handoff, checked with the configured key or the demo's,
// with the demo's sample portal when that is the key.
func (m Module) Open(_ context.Context, h wayin.Host) (wayin.Way, error) {
	k, isDemo, ok, err := SigningKey(h.Config)
	if err != nil || !ok {
		return nil, err
	}
	v, err := NewVerifier(k, h.Store, h.Now)
	if err != nil {
		return nil, err
	}
	w := &Way{Tokens: v, Source: m.Sources(h.Config)[0]}
	switch {
	case isDemo:
		w.Demo = demoPortal(k, h.Now)
	case h.Config.Platform.BaseURL == config.Embedded:
		key := "portal.jwt_public_key_file"
		if config.Settings(h.Config, Section()).JWTSecret != "" {
			key = "portal.jwt_secret"
		}
		h.Logger.Info("sample partner portal off: a portal key is set, so only your portal signs handoffs; "+DemoPath+" answers 404", "key", key)
	}
	return w, nil
}

// demoPortal fills the sample partner portal: its user and a fresh token.
func demoPortal(k Config, now func() time.Time) func() (DemoPortal, error) {
	return func() (DemoPortal, error) {
		const name, email = "Grace Hopper", "grace.hopper@portal.example"
		tok, err := SignHS256(k.Secret, k.Issuer, k.Audience, Claims{Email: email, GivenName: "Grace", FamilyName: "Hopper"}, now())
		if err != nil {
			return DemoPortal{}, err
		}
		return DemoPortal{Name: name, Email: email, Token: tok, DeepLink: "/open?return_to=" + url.QueryEscape("/editor/projects/demo")}, nil
	}
}

// Check: the handoff reads nothing from elsewhere.
func (Module) Check(context.Context, wayin.Host, io.Writer) bool { return true }

// Home is the partner's portal: portal.url (else the demo's sample
// portal), and whether a session the handoff began may open the console.
func (Module) Home(cfg config.Config) wayin.Home {
	p := config.Settings(cfg, Section())
	home := wayin.Home{URL: p.URL, Label: locale.Msg("Back to your portal"), AdminSessions: p.AdminSessions}
	if demo(cfg) && home.URL == "" {
		home.URL = DemoPath
	}
	return home
}

// Demo is the embedded demo's sample partner portal, which the portal's
// way serves at DemoPath.
func (Module) Demo(cfg config.Config, _ string) (config.Config, *wayin.Demo, error) {
	if !demo(cfg) {
		return cfg, nil, nil
	}
	return cfg, &wayin.Demo{Name: "sample partner portal", Note: "its button signs in with no password",
		Listening: func(tool string) string { return tool + DemoPath }}, nil
}
