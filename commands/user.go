package commands

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/store"
	"golang.org/x/term"
)

// UserInviteCmd is `ssobridge user invite`: it prints a one-time
// set-password link for an account (72 h).
func UserInviteCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "user invite", Synopsis: "--email E [--config FILE]",
		Summary: "Print a one-time link (valid 72 hours) with which the account chooses its password; it replaces any\nearlier link of the account. For accounts imported or created by the portal, which have none."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "configuration file")
	email := fs.String("email", "", "the account's email (required)")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	if err := store.ValidateEmail(strings.TrimSpace(*email)); err != nil {
		return invalidInput("user invite: --email: ", err)
	}
	cfg, st, err := openStore(ctx, env, *cfgPath)
	if err != nil {
		return err
	}
	defer st.Close()
	acct, err := st.AccountByEmail(ctx, *email)
	if errors.Is(err, store.ErrNotFound) {
		return cli.UsageError(fmt.Sprintf("user invite: no account with email %s: nothing was written", strings.TrimSpace(*email)))
	}
	if err != nil {
		return err
	}
	token, err := accounts.IssuePasswordLink(ctx, st, acct.ID, time.Now())
	if err != nil {
		return err
	}
	if err := st.Record(ctx, store.Event{Kind: store.KindAdmin, AccountID: acct.ID, Email: acct.Email, Outcome: "ok",
		Detail: "set-password link issued from the command line"}); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s%s\n(valid %s, once; it replaces any earlier link of %s)\n", cfg.PublicURL(cfg.Server.Addr), accounts.SetPasswordPath(token), accounts.PasswordLinkTTL, acct.Email)
	fmt.Fprintf(env.Stderr, "the link's %s\n", cfg.PublicURLSource())
	return nil
}

// UserAddCmd is `ssobridge user add`: it creates a local account. At a
// terminal it asks for the password twice without echo; otherwise the
// password is the first line of stdin.
func UserAddCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "user add", Synopsis: "--email E --first-name F --last-name L [--admin] [--config FILE]",
		Summary: "Add a local account. At a terminal the password is asked for twice without echo; otherwise it is\nthe first line of stdin. Bad input exits 2 and writes nothing."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "configuration file")
	email := fs.String("email", "", "the account's email (required)")
	first := fs.String("first-name", "", "first name (required)")
	last := fs.String("last-name", "", "last name (required)")
	admin := fs.Bool("admin", false, "make the account a partner admin")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	var missing []string
	for _, f := range []struct{ flag, v string }{{"--email", *email}, {"--first-name", *first}, {"--last-name", *last}} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.flag)
		}
	}
	if len(missing) > 0 {
		return cli.UsageError("user add: " + strings.Join(missing, ", ") + " required (see 'ssobridge user add --help')")
	}
	// Check everything before touching the store, so bad input writes nothing.
	n := store.NewAccount{Email: *email, FirstName: *first, LastName: *last, PasswordHash: "pending", Admin: *admin}
	if err := n.Normalize(); err != nil {
		return invalidInput("", err)
	}
	password, err := readPassword(env)
	if err != nil {
		return err
	}
	if err := passhash.CheckPassword(password); err != nil {
		return invalidInput("", err)
	}
	cfg, st, err := openStore(ctx, env, *cfgPath)
	if err != nil {
		return err
	}
	defer st.Close()
	hasher, err := app.NewHasher(cfg.Password, 1)
	if err != nil {
		return err
	}
	if n.PasswordHash, err = hasher.Hash(ctx, password); err != nil {
		return err
	}
	acct, err := st.CreateAccount(ctx, n)
	if err != nil {
		if errors.Is(err, store.ErrEmailTaken) {
			return cli.UsageError(fmt.Sprintf("an account with email %s exists already: nothing was written", n.Email))
		}
		return err
	}
	if err := st.Record(ctx, store.Event{Kind: store.KindAdmin, AccountID: acct.ID, Email: acct.Email, Outcome: "ok",
		Detail: fmt.Sprintf("account created from the command line (admin=%v)", acct.Admin)}); err != nil {
		return err
	}
	role := "account"
	if acct.Admin {
		role = "admin account"
	}
	fmt.Fprintf(env.Stdout, "created %s %s (id %d)\n", role, acct.Email, acct.ID)
	return nil
}

// invalidInput is bad input (an accounts.ErrInvalid) as a command's usage
// error, without the error's class; prefix names the command and flag.
func invalidInput(prefix string, err error) error {
	return cli.UsageError(prefix + strings.TrimPrefix(err.Error(), store.ErrInvalid.Error()+": "))
}

// readPassword asks twice, without echo, when stdin is a terminal;
// otherwise it reads the first line (a pipe or a file).
func readPassword(env cli.Env) (string, error) {
	if f, ok := env.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return promptPassword(f, env.Stderr)
	}
	line, err := bufio.NewReader(io.LimitReader(env.Stdin, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", cli.UsageError("empty password: type it at the prompt, or pipe it on stdin, e.g. printf '%s\\n' \"$PW\" | ssobridge user add ...")
	}
	return line, nil
}

// promptPassword reads the password twice from the terminal tty, echo off.
func promptPassword(tty *os.File, prompts io.Writer) (string, error) {
	read := func(prompt string) (string, error) {
		fmt.Fprint(prompts, prompt)
		b, err := term.ReadPassword(int(tty.Fd()))
		fmt.Fprintln(prompts) // the Enter the terminal did not echo
		if err != nil {
			return "", fmt.Errorf("read password from the terminal: %w", err)
		}
		return string(b), nil
	}
	first, err := read("Password: ")
	if err != nil {
		return "", err
	}
	if first == "" {
		return "", cli.UsageError("empty password: nothing was written")
	}
	again, err := read("Repeat the password: ")
	if err != nil {
		return "", err
	}
	if again != first {
		return "", cli.UsageError("the two passwords differ: nothing was written")
	}
	return first, nil
}
