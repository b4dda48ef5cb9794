package app

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/oidc"
	"github.com/ssobridge/ssobridge/portal"
	"github.com/ssobridge/ssobridge/samlsso"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin"
)

// Modules are the ways in registered as modules, in the order the
// sign-in page shows their buttons and check reports them. Adding a
// way in is one more entry here; docs/architecture.md ("Add a way in")
// says what its package declares.
func Modules() []wayin.Module {
	return []wayin.Module{portal.Module{}, oidc.Module{}, samlsso.Module{}}
}

// ParseConfig is config.Parse with the sections of the registered
// modules.
func ParseConfig(yamlData []byte, environ []string) (config.Config, error) {
	return config.Parse(yamlData, environ, wayin.Sections(Modules())...)
}

// host is what the modules open and check their ways with.
func host(cfg config.Config, st store.Store, logger *slog.Logger, now func() time.Time, pollEvery time.Duration) wayin.Host {
	return wayin.Host{Config: cfg, Store: st, Logger: logger, Now: now, HTTPClient: cfg.OutboundPolicy().Client(nil), PollEvery: pollEvery}
}

// CheckModules runs each module's check, writing to w; false when one
// would not work.
func CheckModules(ctx context.Context, cfg config.Config, mods []wayin.Module, w io.Writer) bool {
	ok := true
	h := host(cfg, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now, 0)
	for _, m := range mods {
		ok = m.Check(ctx, h, w) && ok
	}
	return ok
}
