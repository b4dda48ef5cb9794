package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/handlers"
	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/portal"
	"github.com/ssobridge/ssobridge/signin"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// The embedded demo's own portal key, when no portal key is configured:
// the sample partner portal at /demo/portal and `ssobridge portal-link`
// sign with it.
const (
	demoPortalKeyFile = "portal-demo.key"
	demoPortalIssuer  = "ssobridge-demo-portal"
	demoPortalAud     = "ssobridge-demo"
	// DemoPortalPath is where the sample partner portal is served.
	DemoPortalPath = "/demo/portal"
)

// ways are the ways in the configuration turns on, in the order the
// sign-in page shows their buttons: the portal's JWT handoff (and the
// demo's sample portal), the modules' (Modules), the LMSs (app/lti.go
// adds them).
type ways struct {
	list       []wayin.Way
	portalURL  string // portal.url, or the demo's sample portal
	demoPortal bool
}

// waysOf builds them from cfg. An identity provider that does not answer
// at start is a warning, not an error: sign-in with it retries, and
// /readyz reports it meanwhile.
func waysOf(ctx context.Context, cfg config.Config, st store.Store, o Options, logger *slog.Logger) (ways, error) {
	in := ways{portalURL: cfg.Portal.URL}
	pk, ok, err := portalKeyOf(cfg)
	if err != nil {
		return ways{}, err
	}
	if ok {
		v, err := portal.NewVerifier(pk.cfg, st, o.Now)
		if err != nil {
			return ways{}, err
		}
		w := &portal.Way{Tokens: v, Source: PortalSource(cfg, pk.cfg.Issuer, pk.demo)}
		if pk.demo {
			w.Demo, in.demoPortal = demoPortal(pk, o.Now), true
			in.portalURL = cmp.Or(in.portalURL, DemoPortalPath)
		} else if cfg.Platform.BaseURL == config.Embedded {
			key := "portal.jwt_public_key_file"
			if cfg.Portal.JWTSecret != "" {
				key = "portal.jwt_secret"
			}
			logger.Info("sample partner portal off: a portal key is set, so only your portal signs handoffs; "+DemoPortalPath+" answers 404", "key", key)
		}
		in.list = append(in.list, w)
	}
	h := host(cfg, st, logger, o.Now, o.IdPHealthInterval)
	for _, m := range o.Modules {
		w, err := m.Open(ctx, h)
		if err != nil {
			return ways{}, err
		}
		if w != nil {
			in.list = append(in.list, w)
		}
	}
	return in, nil
}

// passwordForm is whether the sign-in page shows the password form: an
// IdP that is on (a module's: OIDC, SAML) with local_login false hides it,
// and /login?local=1 shows it only while every such IdP allows the
// fallback.
func passwordForm(cfg config.Config, mods []wayin.Module) handlers.PasswordForm {
	f := handlers.PasswordForm{Fallback: true}
	rule := func(hide, fallback bool) {
		if hide {
			f.Hidden = true
			f.Fallback = f.Fallback && fallback
		}
	}
	for _, m := range mods {
		if r, ok := m.(wayin.PasswordRule); ok {
			rule(r.PasswordForm(cfg))
		}
	}
	return f
}

// portalKey is how portal tokens are checked: the configured key, or the
// embedded demo's (demo true).
type portalKey struct {
	cfg  portal.Config
	demo bool
}

// portalKeyOf reads the configured portal key; with none, the embedded
// demo gets a key of its own (kept in the data directory); otherwise the
// handoff is off (ok false).
func portalKeyOf(cfg config.Config) (k portalKey, ok bool, err error) {
	p := cfg.Portal
	switch {
	case p.JWTSecret != "":
		return portalKey{cfg: portal.Config{Secret: []byte(p.JWTSecret), Issuer: p.JWTIssuer, Audience: cfg.PortalAudience()}}, true, nil
	case p.JWTPublicKeyFile != "":
		key, _, err := portal.LoadPublicKey(p.JWTPublicKeyFile)
		if err != nil {
			return portalKey{}, false, fmt.Errorf("config: portal.jwt_public_key_file: %s: %w", p.JWTPublicKeyFile, err)
		}
		return portalKey{cfg: portal.Config{PublicKey: key, Issuer: p.JWTIssuer, Audience: cfg.PortalAudience()}}, true, nil
	case cfg.Platform.BaseURL != config.Embedded:
		return portalKey{}, false, nil
	}
	secret, err := demoPortalSecret(cfg)
	if err != nil {
		return portalKey{}, false, err
	}
	return portalKey{cfg: portal.Config{Secret: secret, Issuer: demoPortalIssuer, Audience: demoPortalAud}, demo: true}, true, nil
}

// PortalSigningKey is the key portal tokens are checked with: the
// configured one, or the embedded demo's; ok is false when the handoff is
// off.
func PortalSigningKey(cfg config.Config) (k portal.Config, ok bool, err error) {
	pk, ok, err := portalKeyOf(cfg)
	return pk.cfg, ok, err
}

// PortalSourceOf is the admission's source of the portal cfg signs for
// (the demo's sample portal when the demo's key is used).
func PortalSourceOf(cfg config.Config) (signin.Source, error) {
	pk, ok, err := portalKeyOf(cfg)
	if err != nil || !ok {
		return signin.Source{}, err
	}
	return PortalSource(cfg, pk.cfg.Issuer, pk.demo), nil
}

// demoPortalSecret is the demo portal's HS256 key, made once (0600).
func demoPortalSecret(cfg config.Config) ([]byte, error) {
	data, err := keptDemoFile(cfg, demoPortalKeyFile,
		func(data []byte) bool { return len(strings.TrimSpace(string(data))) >= portal.MinSecret },
		func() ([]byte, error) { return []byte(randid.Hex(32) + "\n"), nil })
	return []byte(strings.TrimSpace(string(data))), err
}

// keptDemoFile is a file of the demo's in the data directory (0600): as
// kept when valid takes it, else made anew and kept, so every start of
// the demo uses the same key.
func keptDemoFile(cfg config.Config, name string, valid func([]byte) bool, make func() ([]byte, error)) ([]byte, error) {
	path := filepath.Join(cfg.DataDir(), name)
	data, err := os.ReadFile(path)
	if err == nil && valid(data) {
		return data, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if data, err = make(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir(), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return data, nil
}

// demoPortal fills the sample partner portal: its user and a fresh token.
func demoPortal(k portalKey, now func() time.Time) func() (views.DemoPortal, error) {
	return func() (views.DemoPortal, error) {
		const name, email = "Grace Hopper", "grace.hopper@portal.example"
		tok, err := portal.SignHS256(k.cfg.Secret, k.cfg.Issuer, k.cfg.Audience, portal.Claims{Email: email, GivenName: "Grace", FamilyName: "Hopper"}, now())
		if err != nil {
			return views.DemoPortal{}, err
		}
		return views.DemoPortal{Name: name, Email: email, Token: tok, DeepLink: "/open?return_to=" + url.QueryEscape("/editor/projects/demo")}, nil
	}
}
