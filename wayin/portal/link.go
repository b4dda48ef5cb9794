package portal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/localpath"
)

// Commands are the portal's sub-command, portal-link.
func (Module) Commands() []wayin.Command {
	return []wayin.Command{{Name: "portal-link", Line: "print a signed portal handoff URL (/sso/jwt) for trying it out",
		Synopsis: "--email E [--first-name F] [--last-name L] [--return-to P] [--config FILE]",
		Summary:  "Print a URL that signs E in through the portal handoff (/sso/jwt) and opens the editor, signed with\nportal.jwt_secret (or the embedded demo's key). Valid for 5 minutes, once.",
		Run:      linkCommand}}
}

// linkCommand is `ssobridge portal-link`: it prints a /sso/jwt URL signed
// with the configured HS256 key (or the embedded demo's), as the
// partner's portal would make it, for trying the handoff out.
func linkCommand(_ context.Context, cl wayin.CommandLine, args []string) error {
	fs := cl.Flags()
	cfgPath := fs.String("config", "", "configuration file")
	email := fs.String("email", "", "the portal user's email (required)")
	first := fs.String("first-name", "", "given name (for an account created on first use)")
	last := fs.String("last-name", "", "family name")
	returnTo := fs.String("return-to", "", "a relative platform path to open, e.g. /editor/projects/42")
	if err := cl.Parse(fs, args); err != nil {
		return err
	}
	if err := store.ValidateEmail(strings.TrimSpace(*email)); err != nil {
		return cl.BadInput("portal-link: --email: " + strings.TrimPrefix(err.Error(), store.ErrInvalid.Error()+": "))
	}
	if err := localpath.CheckReturnTo(*returnTo); *returnTo != "" && err != nil {
		return cl.BadInput("portal-link: --return-to: return_to must be a relative platform path: " + err.Error())
	}
	cfg, err := cl.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if config.Settings(cfg, Section()).JWTPublicKeyFile != "" {
		return cl.BadInput("portal-link: the portal signs with its private key (portal.jwt_public_key_file is its public half); portal-link can only sign with portal.jwt_secret")
	}
	k, _, ok, err := SigningKey(cfg)
	if err != nil {
		return err
	}
	if !ok {
		return cl.BadInput("portal-link: no portal key: set portal.jwt_secret (" + config.EnvName("portal.jwt_secret") + ") and portal.jwt_issuer")
	}
	// A link the handoff would refuse is no link to print: say why now,
	// before anyone follows it.
	if src := (Module{}).Sources(cfg); len(src) == 1 && !src[0].Open() && !src[0].Trusts(strings.TrimSpace(*email)) {
		return cl.BadInput(fmt.Sprintf("portal-link: --email %s: the portal is trusted for %s only (portal.email_domains), so its handoff would be refused; "+
			"use an address of those domains, or list its domain in portal.email_domains", strings.TrimSpace(*email), strings.Join(src[0].EmailDomains, ", ")))
	}
	tok, err := SignHS256(k.Secret, k.Issuer, k.Audience,
		Claims{Email: strings.TrimSpace(*email), GivenName: *first, FamilyName: *last, ReturnTo: *returnTo}, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(cl.Stdout(), "%s/sso/jwt?jwt=%s\n", cfg.PublicURL(cfg.Server.Addr), tok)
	fmt.Fprintf(cl.Stderr(), "the link's %s\n", cfg.PublicURLSource())
	return nil
}
