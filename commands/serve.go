package commands

import (
	"context"
	"fmt"
	"net"

	"github.com/ssobridge/ssobridge/app"

	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/internal/gctune"
)

// ServeCmd is `ssobridge [serve] [--config FILE]`: it runs the bridge
// until ctx ends.
func ServeCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "serve", Synopsis: "[--config FILE]",
		Summary: "Serve the bridge until interrupted. Without --config it reads ./config.yaml, else the built-in demo\n(embedded platform emulator, SQLite in ./data, a printed demo login)."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "configuration file (default ./config.yaml, else the embedded demo)")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	cfg, err := env.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	a, err := app.New(ctx, cfg, app.Options{LogOutput: env.Stderr})
	if err != nil {
		return err
	}
	defer a.Close()
	if limit, set := gctune.LimitMemory(cfg.Password); set {
		a.Logger().Info("memory limit set for password hashing", "limit_mib", limit>>20, "note", "set GOMEMLIMIT to choose another")
	}
	if gctune.RaiseGCPercent() {
		a.Logger().Info("garbage collection set for serving", "gogc", gctune.ServingGCPercent, "note", "set GOGC to choose another")
	}
	ln, err := net.Listen("tcp", cfg.Server.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (server.addr): %w", cfg.Server.Addr, err)
	}
	return a.Serve(ctx, ln, env.Stdout)
}
