package app

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/scim"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/lti"
	"github.com/ssobridge/ssobridge/wayin/oidc"
	"github.com/ssobridge/ssobridge/wayin/portal"
	"github.com/ssobridge/ssobridge/wayin/samlsso"
)

// Modules are the ways in registered as modules, in the order the
// sign-in page shows their buttons and check reports them, then SCIM,
// which takes the modules' shape though no person arrives by it. Adding
// a way in is one more entry here; docs/architecture.md ("Add a way in")
// says what its package declares.
func Modules() []wayin.Module {
	return []wayin.Module{portal.Module{}, oidc.Module{}, samlsso.Module{}, lti.Module{}, scim.Module{}}
}

// ParseConfig is config.Parse with the sections of the registered
// modules.
func ParseConfig(yamlData []byte, environ []string) (config.Config, error) {
	return config.Parse(yamlData, environ, wayin.Sections(Modules())...)
}

// host is what the modules open and check their ways with: every
// other party reached under the outbound policy.
func host(cfg config.Config, o Options, logger *slog.Logger) wayin.Host {
	hc := cfg.OutboundPolicy().Client(nil)
	if o.HTTPClient != nil {
		hc = cfg.OutboundPolicy().Guard(o.HTTPClient)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return wayin.Host{Config: cfg, Logger: logger, Now: now, HTTPClient: hc, PollEvery: o.IdPHealthInterval, RetryEvery: o.RetryEvery}
}

// CheckModules runs each module's check, writing to w: false when one
// would not work. The store is read when a module keeps sources there
// (an LMS registered from the console) and it is there; stored are those
// sources, for the report of who may arrive as whom.
func CheckModules(ctx context.Context, cfg config.Config, mods []wayin.Module, w io.Writer) (ok bool, stored []signin.Source) {
	h := host(cfg, Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, m := range mods {
		if s, is := m.(wayin.StoredSourcer); is && s.KeepsSources(cfg) {
			st, problem := storeForCheck(ctx, cfg)
			if st != nil {
				defer st.Close()
			}
			h.Store, h.StoreProblem = st, problem
			break
		}
	}
	ok = true
	for _, m := range mods {
		ok = m.Check(ctx, h, w) && ok
		if s, is := m.(wayin.StoredSourcer); is {
			stored = append(stored, s.StoredSources(ctx, h)...)
		}
	}
	return ok, stored
}

// storeForCheck is the store when check can read it: none for a SQLite
// store not made yet; a store that cannot be read is said (problem).
func storeForCheck(ctx context.Context, cfg config.Config) (_ store.Store, problem string) {
	if cfg.Store.Driver != "postgres" {
		if _, err := os.Stat(cfg.Store.DSN); errors.Is(err, fs.ErrNotExist) {
			return nil, ""
		}
	}
	st, err := OpenStore(ctx, cfg, nil)
	if err != nil {
		return nil, err.Error()
	}
	return st, ""
}
