package app

import (
	"context"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/handlers"
	"github.com/ssobridge/ssobridge/wayin"
)

// ways are the ways in the configuration turns on, in the order the
// sign-in page shows their buttons (the modules' order), and the
// partner's portal, as the module that is it says (wayin.HomeRule).
type ways struct {
	list []wayin.Way
	home wayin.Home
}

// waysOf opens the modules' ways in with what the bridge lends them (h).
// An identity provider that does not answer at start is a warning, not an
// error: sign-in with it retries, and /readyz reports it meanwhile.
func waysOf(ctx context.Context, h wayin.Host, mods []wayin.Module) (ways, error) {
	var in ways
	cfg := h.Config
	for _, m := range mods {
		w, err := m.Open(ctx, h)
		if err != nil {
			return ways{}, err
		}
		if w != nil {
			in.list = append(in.list, w)
		}
		if r, ok := m.(wayin.HomeRule); ok {
			in.home = r.Home(cfg)
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
