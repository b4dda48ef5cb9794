package loadtest

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// FillCmd is `ssobridge-bench fill`: it writes what a store holds after a
// year of use (by default 10 million audit events over 89 days, 100,000
// accounts with links and 500,000 sessions) into the store of --config,
// straight through the SQL layer, for the launch benchmark to run against.
// It refuses a store that holds accounts already.
func FillCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "fill", Program: "ssobridge-bench fill", Synopsis: "--config FILE [--accounts N] [--sessions N] [--events N] [--days D] [--seen-within D]",
		Summary: "Fill an empty store (the one --config names) with what a year of use leaves: accounts with links,\n" +
			"sessions seen within the last --seen-within, and audit events spread over --days, for the launch\n" +
			"benchmark (loadtest/external.sh --fill). A store that holds accounts is refused."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "the configuration whose store is filled (required)")
	f := sqlstore.Fill{PasswordHash: passhash.NoPassword}
	fs.IntVar(&f.Accounts, "accounts", 100_000, "accounts, each linked to a platform user (1..1000000)")
	fs.IntVar(&f.Sessions, "sessions", 500_000, "sessions of those accounts (0..5000000)")
	fs.IntVar(&f.Events, "events", 10_000_000, "audit events (0..100000000)")
	days := fs.Int("days", 89, "the audit events are spread over this many days, up to now (1..3650)")
	fs.IntVar(&f.FreshFirst, "fresh-first", 0, "of the events, this many among the oldest 1% are stamped now: rows whose time runs ahead of their id (0..10000)")
	fs.DurationVar(&f.SeenWithin, "seen-within", 30*time.Minute, "the sessions were last seen within this (1m..720h); keep it under session.idle_timeout, or the start's prune removes them")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	switch {
	case *cfgPath == "":
		return cli.UsageError("fill: give --config FILE (the store it names is filled)")
	case f.Accounts < 1 || f.Accounts > 1_000_000:
		return cli.UsageError("fill: --accounts must be 1..1000000")
	case f.Sessions < 0 || f.Sessions > 5_000_000:
		return cli.UsageError("fill: --sessions must be 0..5000000")
	case f.Events < 0 || f.Events > 100_000_000:
		return cli.UsageError("fill: --events must be 0..100000000")
	case f.FreshFirst < 0 || f.FreshFirst > 10_000:
		return cli.UsageError("fill: --fresh-first must be 0..10000")
	case *days < 1 || *days > 3650:
		return cli.UsageError("fill: --days must be 1..3650")
	case f.SeenWithin < time.Minute || f.SeenWithin > 720*time.Hour:
		return cli.UsageError("fill: --seen-within must be 1m..720h")
	}
	cfg, err := env.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	st, err := app.OpenStore(ctx, cfg, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	return fill(ctx, st, f, *days, env.Stdout)
}

// fill fills st, printing each table's progress and the time it took.
func fill(ctx context.Context, st store.Store, f sqlstore.Fill, days int, out io.Writer) error {
	if n, err := st.CountAccounts(ctx); err != nil {
		return err
	} else if n > 0 {
		return cli.UsageError(fmt.Sprintf("fill: the store holds %d accounts already; fill an empty one (nothing was written)", n))
	}
	f.Now, f.Span = time.Now(), time.Duration(days)*24*time.Hour
	start, last := time.Now(), time.Now()
	f.Progress = func(table string, done, total int) {
		if done == total || time.Since(last) > 10*time.Second {
			last = time.Now()
			fmt.Fprintf(out, "fill: %s %d of %d (%s)\n", table, done, total, time.Since(start).Round(time.Second))
		}
	}
	if err := sqlstore.FillStore(ctx, st, f); err != nil {
		return err
	}
	fmt.Fprintf(out, "fill: done: %d accounts with links, %d sessions, %d audit events over %d days, in %s\n",
		f.Accounts, f.Sessions, f.Events, days, time.Since(start).Round(time.Second))
	return nil
}
