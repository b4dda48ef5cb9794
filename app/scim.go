package app

import (
	"context"
	"net/http"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/regulation"
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/handlers"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/launch/provision"
	"github.com/ssobridge/ssobridge/scim"
	"github.com/ssobridge/ssobridge/store"
)

// scimHandler is the SCIM service provider when scim.enabled (nil
// otherwise): the identity provider's changes go through the account
// rules; a new account's platform user is made in the background
// (scim.provision_platform_users); a deactivated or removed account's
// launches in flight here stop (its sessions end on every instance
// through the store).
func (a *App) scimHandler(ctx context.Context, o Options, launcher *launch.Service, reg *regulation.Regulator) (http.Handler, error) {
	sc := a.cfg.SCIM
	if !sc.Enabled {
		return nil, nil
	}
	admission := signin.NewAdmission(a.store, a.logger)
	src := SCIMSource(a.cfg)
	dir := &accounts.Directory{Store: a.store, AdminGroup: sc.AdminGroup, Logger: a.logger,
		Ended: func(id int64) { a.line.End(id, "") },
		MayAdopt: func(ctx context.Context, acct store.Account) error {
			return admission.MayAdopt(ctx, acct, signin.Arrival{Source: src, Email: acct.Email})
		}}
	// The roles SCIM decides follow the admin group as stored, whatever a
	// change cut off before its follow-up left.
	if err := dir.Reconcile(ctx); err != nil {
		a.logger.Warn("scim: admin roles not brought in line with scim.admin_group at start", "err", err)
	}
	if sc.ProvisionPlatformUsers {
		q := provision.NewQueue(launcher, 0, a.logger)
		a.closers = append(a.closers, func() error { q.Close(); return nil })
		dir.Created = func(acct store.Account) { q.Add(acct) }
	}
	return scim.New(scim.Config{Directory: dir, Tokens: sc.Tokens(), Regulator: reg,
		ClientIP: handlers.ClientIP(a.cfg.Server.TrustProxyHeaders), BaseURL: a.cfg.PublicURL(a.cfg.Server.Addr) + "/scim/v2", Logger: a.logger, Now: o.Now})
}
