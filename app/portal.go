package app

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/handlers"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/oidc"
	"github.com/ssobridge/ssobridge/portal"
	"github.com/ssobridge/ssobridge/views"
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

// arrivals are the ways in besides the password form, as the handlers
// take them: the portal's JWT handoff (and the demo's sample portal) and
// the partner's identity provider. Each is nil when it is off.
type arrivals struct {
	portalTokens         handlers.PortalTokens
	portalCreateAccounts bool
	demoPortal           func() (views.DemoPortal, error)
	portalURL            string // portal.url, or the demo's sample portal
	idp                  handlers.IdP
	idpProvider          *oidc.Provider // the same IdP, for its health watch
	idpOptions           handlers.IdPOptions
}

// arrivalsOf wires them from cfg. An identity provider that does not
// answer at start is a warning, not an error: sign-in with it retries
// discovery, and /readyz reports it meanwhile.
func arrivalsOf(ctx context.Context, cfg config.Config, store accounts.Store, now func() time.Time, logger *slog.Logger) (arrivals, error) {
	in := arrivals{portalCreateAccounts: cfg.Portal.CreateAccounts, portalURL: cfg.Portal.URL}
	pk, ok, err := portalKeyOf(cfg)
	if err != nil {
		return arrivals{}, err
	}
	if ok {
		v, err := portal.NewVerifier(pk.cfg, store, now)
		if err != nil {
			return arrivals{}, err
		}
		in.portalTokens = v
		if pk.demo {
			in.demoPortal, in.portalCreateAccounts = demoPortal(pk, now), true
			in.portalURL = cmp.Or(in.portalURL, DemoPortalPath)
		} else if cfg.Platform.BaseURL == config.Embedded {
			key := "portal.jwt_public_key_file"
			if cfg.Portal.JWTSecret != "" {
				key = "portal.jwt_secret"
			}
			logger.Info("sample partner portal off: a portal key is set, so only your portal signs handoffs; "+DemoPortalPath+" answers 404", "key", key)
		}
	}
	if oc := cfg.OIDC; oc.Enabled() {
		prov := oidc.New(oidc.Config{Issuer: oc.Issuer, ClientID: oc.ClientID, ClientSecret: oc.ClientSecret,
			Scopes: oc.Scopes.List(), GroupsClaim: oc.GroupsClaim, AdminGroup: oc.AdminGroup, Now: now})
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := prov.Discover(dctx); err != nil {
			logger.Warn("identity provider unreachable at start: sign-in with it retries discovery; /readyz reports it", "issuer", oc.Issuer, "err", err)
		}
		cancel()
		in.idp, in.idpProvider = prov, prov
		in.idpOptions = handlers.IdPOptions{DisplayName: oc.DisplayName, CreateAccounts: oc.CreateAccounts, AllowUnverifiedEmail: oc.AllowUnverifiedEmail,
			ManageAdmin: oc.AdminGroup != "", LocalLogin: oc.LocalLogin, LocalLoginFallback: oc.LocalLoginFallback}
	}
	return in, nil
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

// demoPortalSecret is the demo portal's HS256 key, made once (0600).
func demoPortalSecret(cfg config.Config) ([]byte, error) {
	path := filepath.Join(cfg.DataDir(), demoPortalKeyFile)
	data, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(data))) >= portal.MinSecret {
		return []byte(strings.TrimSpace(string(data))), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	secret := hex.EncodeToString(b)
	if err := os.MkdirAll(cfg.DataDir(), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return []byte(secret), nil
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

// PortalLinkCmd is `ssobridge portal-link`: it prints a /sso/jwt URL
// signed with the configured HS256 key (or the embedded demo's), as the
// partner's portal would make it, for trying the handoff out.
func PortalLinkCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "portal-link", Synopsis: "--email E [--first-name F] [--last-name L] [--return-to P] [--config FILE]",
		Summary: "Print a URL that signs E in through the portal handoff (/sso/jwt) and opens the editor, signed with\nportal.jwt_secret (or the embedded demo's key). Valid for 5 minutes, once."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "configuration file")
	email := fs.String("email", "", "the portal user's email (required)")
	first := fs.String("first-name", "", "given name (for an account created on first use)")
	last := fs.String("last-name", "", "family name")
	returnTo := fs.String("return-to", "", "a relative platform path to open, e.g. /editor/projects/42")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	if err := accounts.ValidateEmail(strings.TrimSpace(*email)); err != nil {
		return invalidInput("portal-link: --email: ", err)
	}
	if err := launch.ValidateReturnTo(*returnTo); err != nil {
		return cli.UsageError("portal-link: --return-to: " + err.Error())
	}
	cfg, err := env.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if cfg.Portal.JWTPublicKeyFile != "" {
		return cli.UsageError("portal-link: the portal signs with its private key (portal.jwt_public_key_file is its public half); portal-link can only sign with portal.jwt_secret")
	}
	k, ok, err := portalKeyOf(cfg)
	if err != nil {
		return err
	}
	if !ok {
		return cli.UsageError("portal-link: no portal key: set portal.jwt_secret (" + config.EnvName("portal.jwt_secret") + ") and portal.jwt_issuer")
	}
	tok, err := portal.SignHS256(k.cfg.Secret, k.cfg.Issuer, k.cfg.Audience,
		portal.Claims{Email: strings.TrimSpace(*email), GivenName: *first, FamilyName: *last, ReturnTo: *returnTo}, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s/sso/jwt?jwt=%s\n", cfg.PublicURL(cfg.Server.Addr), tok)
	return nil
}

// UserInviteCmd is `ssobridge user invite`: it prints a one-time
// set-password link for an account (72 h).
func UserInviteCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "user invite", Synopsis: "--email E [--config FILE]",
		Summary: "Print a one-time link (valid 72 hours) with which the account chooses its password; it replaces any\nearlier link of the account. For accounts imported or created by the portal, which have none."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "configuration file")
	email := fs.String("email", "", "the account's email (required)")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	if err := accounts.ValidateEmail(strings.TrimSpace(*email)); err != nil {
		return invalidInput("user invite: --email: ", err)
	}
	cfg, err := env.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	store, err := OpenStore(ctx, cfg, nil)
	if err != nil {
		return err
	}
	defer store.Close()
	acct, err := store.AccountByEmail(ctx, *email)
	if errors.Is(err, accounts.ErrNotFound) {
		return cli.UsageError(fmt.Sprintf("user invite: no account with email %s: nothing was written", strings.TrimSpace(*email)))
	}
	if err != nil {
		return err
	}
	token, err := accounts.IssuePasswordLink(ctx, store, acct.ID, time.Now())
	if err != nil {
		return err
	}
	if err := store.Record(ctx, accounts.Event{Kind: accounts.KindAdmin, AccountID: acct.ID, Email: acct.Email, Outcome: "ok",
		Detail: "set-password link issued from the command line"}); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s%s\n(valid %s, once; it replaces any earlier link of %s)\n", cfg.PublicURL(cfg.Server.Addr), accounts.SetPasswordPath(token), accounts.PasswordLinkTTL, acct.Email)
	return nil
}
