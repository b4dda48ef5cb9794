package scim

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin"
)

// Prefix is where the service provider is served.
const Prefix = "/scim/v2"

// Module is SCIM in the modules' shape: its section, its source (the
// IdP's directory), its routes and its check line. It is no way in a
// person takes: the IdP's directory keeps the accounts, and no button
// or refusal page is its own.
type Module struct{}

// Section is its configuration section, scim:.
func (Module) Section() config.Sectioner { return Section() }

// Sources is the IdP's directory when SCIM is on: it adopts existing
// accounts only of its email_domains.
func (Module) Sources(cfg config.Config) []signin.Source {
	s := config.Settings(cfg, Section())
	if !s.Enabled {
		return nil
	}
	return []signin.Source{source(s)}
}

func source(s Settings) signin.Source {
	return signin.Source{ID: signin.SCIMSource, Name: "identity provider's directory (SCIM)", Key: "scim", EmailDomains: s.EmailDomains.List(),
		CreateAccounts: true, AdminAuthority: s.AdminGroup != ""}
}

// Open is the service provider when scim.enabled (nil otherwise): the
// identity provider's changes go through the account rules; a new
// account's platform user is made in the background
// (scim.provision_platform_users); a deactivated or removed account's
// launches in flight here stop (its sessions end on every instance
// through the store).
func (Module) Open(ctx context.Context, h wayin.Host) (wayin.Way, error) {
	s := config.Settings(h.Config, Section())
	if !s.Enabled {
		return nil, nil
	}
	admission := signin.NewAdmission(h.Store, h.Logger)
	src := source(s)
	dir := &accounts.Directory{Store: h.Store, AdminGroup: s.AdminGroup, Logger: h.Logger, Ended: h.EndLaunches,
		MayAdopt: func(ctx context.Context, acct store.Account) error {
			return admission.MayAdopt(ctx, acct, signin.Arrival{Source: src, Email: acct.Email})
		}}
	// The roles SCIM decides follow the admin group as stored, whatever a
	// change cut off before its follow-up left.
	if err := dir.Reconcile(ctx); err != nil {
		h.Logger.Warn("scim: admin roles not brought in line with scim.admin_group at start", "err", err)
	}
	w := &Way{}
	if s.ProvisionPlatformUsers {
		dir.Created = h.ProvisionAhead
	}
	c := Config{Directory: dir, Tokens: s.Tokens(), ClientIP: h.ClientIP, BaseURL: h.Config.PublicURL(h.Config.Server.Addr) + Prefix,
		Logger: h.Logger, Now: h.Now}
	if h.Regulator != nil {
		c.Regulator = h.Regulator
	}
	handler, err := New(c)
	if err != nil {
		return nil, err
	}
	w.handler = http.StripPrefix("/scim", handler)
	return w, nil
}

// Check says what to enter at the identity provider, and refuses a base
// URL that is not https: the IdP would send the bearer token in clear
// (and Entra ID and Okta take only https).
func (Module) Check(_ context.Context, h wayin.Host, w io.Writer) bool {
	cfg := h.Config
	s := config.Settings(cfg, Section())
	if !s.Enabled {
		return true
	}
	base := cfg.PublicURL(cfg.Server.Addr) + Prefix
	fmt.Fprintf(w, "scim:      at the IdP, enter: base URL %s, bearer token: the one in %s (%d token(s))\n",
		base, cmp.Or(s.TokenFile, config.EnvName("scim.token")), len(s.Tokens()))
	admins := "none (the IdP grants no admin)"
	if s.AdminGroup != "" {
		admins = "members of the group " + strconv.Quote(s.AdminGroup)
	}
	fmt.Fprintf(w, "           partner admins: %s; platform users made ahead: %t\n", admins, s.ProvisionPlatformUsers)
	switch reach, local := cfg.Reach(); {
	case !reach:
		fmt.Fprintf(w, "verdict:   SCIM NOT READY\nthe IdP would call %s over plain http, with the token in clear: set server.public_url to the https URL the IdP reaches\n", base)
		return false
	case local:
		fmt.Fprintf(w, "verdict:   SCIM OK (loopback: only an IdP on this machine reaches %s; a real IdP needs server.public_url set to the https URL it reaches)\n", base)
		return true
	}
	fmt.Fprintf(w, "verdict:   SCIM OK\n")
	return true
}

// Way serves the service provider under Prefix.
type Way struct {
	handler http.Handler
}

// Name is its key on /readyz and in logs.
func (*Way) Name() string { return "scim" }

// Mount serves every method under Prefix: a bearer token authenticates
// each request; no session or anti-forgery token is read.
func (w *Way) Mount(r wayin.Router, _ wayin.Kit) {
	h := echo.WrapHandler(w.handler)
	r.Any(Prefix, h)
	r.Any(Prefix+"/*", h)
}

// Exempt: an API its clients authenticate themselves, with its own body
// limit (it answers an oversize body with a SCIM error).
func (*Way) Exempt() []wayin.Exemption { return []wayin.Exemption{{Path: Prefix, API: true}} }

// Ready: it reads nothing from elsewhere.
func (*Way) Ready(context.Context) error { return nil }

// Essential: no sign-in needs it.
func (*Way) Essential() bool { return false }

// Button: no person signs in by it.
func (*Way) Button(string) (string, string) { return "", "" }

// Watch: it reads nothing from elsewhere.
func (*Way) Watch(context.Context, *slog.Logger) {}
