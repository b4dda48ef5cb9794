package commands

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/cli"
)

// StoreBackupCmd is `ssobridge store backup FILE`: a consistent copy of
// the SQLite store, taken while the bridge runs. PostgreSQL has its own
// tools (pg_dump), which the command names instead.
func StoreBackupCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "store backup", Synopsis: "FILE [--config FILE]",
		Summary: "Write a consistent copy of the SQLite store to FILE (a new file), while the bridge runs.\n" +
			"A complete backup also keeps the session keys, the LTI tool key and the configuration: see docs/deploy.md, \"Back up and restore\"."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "configuration file")
	// FILE before or after the flags; a second one is refused by Parse.
	var target string
	var flags []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--config" || a == "-config":
			flags = append(flags, a)
			if i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		case target == "" && a != "" && !strings.HasPrefix(a, "-"):
			target = a
		default:
			flags = append(flags, a)
		}
	}
	if err := env.Parse(fs, cmd, flags); err != nil {
		return err
	}
	if target == "" {
		return cli.UsageError("store backup: name one file to write, e.g. 'ssobridge store backup /backups/ssobridge-$(date +%F).db'")
	}
	if _, err := os.Lstat(target); err == nil {
		return cli.UsageError(fmt.Sprintf("store backup: %s exists already: name a new file (a backup is never written over one)", target))
	}
	cfg, err := env.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if cfg.Store.Driver == "postgres" {
		return cli.UsageError("store backup copies a SQLite store; this one is PostgreSQL: back it up with pg_dump " +
			"(pg_dump --format=custom --file=ssobridge.dump \"$DSN\"; see docs/deploy.md, \"Back up and restore\")")
	}
	st, err := app.OpenStore(ctx, cfg, nil) // as every command opens it: store.timeout, migrations
	if err != nil {
		return err
	}
	defer st.Close()
	b, ok := st.(interface {
		Backup(ctx context.Context, path string) error
	})
	if !ok {
		return fmt.Errorf("store backup: the %s store cannot be copied by this command", cfg.Store.Driver)
	}
	start := time.Now()
	if err := b.Backup(ctx, target); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "backed up %s to %s in %s\n", cfg.Store.DSN, target, time.Since(start).Round(time.Millisecond))
	return nil
}
