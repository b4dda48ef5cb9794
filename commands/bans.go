package commands

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/store"
)

// BansListCmd is `ssobridge bans list`: the sign-in bans in force, on
// every instance sharing the store.
func BansListCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "bans list", Synopsis: "[--config FILE]",
		Summary: "List the sign-in bans in force (by email and by client IP), with when each ends."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "configuration file")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	_, st, err := openStore(ctx, env, *cfgPath)
	if err != nil {
		return err
	}
	defer st.Close()
	now := time.Now()
	bans, err := st.ListBans(ctx, now)
	if err != nil {
		return err
	}
	if len(bans) == 0 {
		fmt.Fprintln(env.Stdout, "no sign-in bans in force")
		return nil
	}
	fmt.Fprintf(env.Stdout, "%-6s %-40s %-20s %s\n", "KIND", "BANNED", "UNTIL (UTC)", "LEFT")
	for _, b := range bans {
		fmt.Fprintf(env.Stdout, "%-6s %-40s %-20s %s\n", b.Kind, b.Value, b.Until.UTC().Format("2006-01-02 15:04:05"), b.Until.Sub(now).Round(time.Second))
	}
	return nil
}

// BansRevokeCmd is `ssobridge bans revoke (--email E | --ip IP)`: it ends
// the ban and forgets the failed sign-ins counted for that email or IP.
func BansRevokeCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "bans revoke", Synopsis: "(--email E | --ip IP) [--config FILE]",
		Summary: "End the sign-in ban on an email or a client IP, and forget the failed sign-ins counted for it."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "configuration file")
	email := fs.String("email", "", "the banned email")
	ip := fs.String("ip", "", "the banned client IP")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	*email, *ip = strings.TrimSpace(*email), strings.TrimSpace(*ip)
	if (*email == "") == (*ip == "") {
		return cli.UsageError("bans revoke: give either --email E or --ip IP (see 'ssobridge bans revoke --help')")
	}
	what, value := "email", mailaddr.Key(*email)
	if *ip != "" {
		if net.ParseIP(*ip) == nil {
			return cli.UsageError(fmt.Sprintf("bans revoke: %q is not an IP address", *ip))
		}
		what, value = "IP", *ip
	}
	_, st, err := openStore(ctx, env, *cfgPath)
	if err != nil {
		return err
	}
	defer st.Close()
	n, err := st.LiftBans(ctx, *email, *ip)
	if err != nil {
		return err
	}
	if err := st.Record(ctx, store.Event{Kind: store.KindAdmin, Outcome: "ok", Email: *email,
		Detail: fmt.Sprintf("bans revoke from the command line: %s %s (%d lifted)", what, value, n)}); err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintf(env.Stdout, "no ban on %s %s; its counted failed sign-ins are cleared\n", what, value)
	} else {
		fmt.Fprintf(env.Stdout, "lifted the ban on %s %s; its counted failed sign-ins are cleared\n", what, value)
	}
	return nil
}
