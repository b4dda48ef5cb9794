package commands

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/config"
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
	// The port first: a busy one fails before anything is created (the
	// demo's data folder, its store, its keys).
	ln, err := listen(cfg.Server.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	a, err := app.New(ctx, cfg, app.Options{LogOutput: env.Stderr, Modules: env.Modules})
	if err != nil {
		return err
	}
	defer a.Close()
	switch l := gctune.LimitMemory(cfg.Password, os.DirFS("/")); l.From {
	case gctune.FromContainer:
		a.LogAfterStart("memory limit set from the container's", "limit_mib", l.Bytes>>20, "container_mib", l.Container>>20,
			"fraction", gctune.CgroupFraction, "note", "set GOMEMLIMIT to choose another")
	case gctune.FromHashing:
		a.LogAfterStart("memory limit set for password hashing", "limit_mib", l.Bytes>>20, "note", "set GOMEMLIMIT to choose another")
	}
	if gctune.RaiseGCPercent() {
		a.LogAfterStart("garbage collection set for serving", "gogc", gctune.ServingGCPercent, "note", "set GOGC to choose another")
	}
	return a.Serve(ctx, ln, env.Stdout)
}

// listen listens on addr; a port in use says how to choose another.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		host, _, _ := net.SplitHostPort(addr)
		if host == "" {
			host = "127.0.0.1"
		}
		return nil, fmt.Errorf("listen on %s (server.addr): the port is in use by another program (or another ssobridge): stop it, "+
			"or choose another port (e.g. %s=%s go run . for the demo)", addr, config.EnvName("server.addr"), net.JoinHostPort(host, "8081"))
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s (server.addr): %w", addr, err)
	}
	return ln, nil
}
