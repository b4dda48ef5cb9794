package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"
	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/csvsafe"
	"github.com/ssobridge/ssobridge/launch/provision"
	"github.com/ssobridge/ssobridge/store"
)

// MaxProvisionRows bounds one provisioning CSV (a school district's roll).
const MaxProvisionRows = 200000

// ProvisionCmd is `ssobridge provision (--csv FILE | --all)`: it links
// accounts to their platform users ahead of their first launch, at the
// pace of the shared platform budget and below users' launches, and
// writes a report. Run again after a stop, it continues.
func ProvisionCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "provision", Synopsis: "(--csv FILE | --all) [--dry-run] [--report FILE] [--workers N] [--config FILE]",
		Summary: "Create the platform users of accounts ahead of their first launch (the night before a first\n" +
			"morning), so that each launch is then one platform call. --csv adds the file's missing accounts\n" +
			"(email,firstName,lastName, no password, as the console's import) and provisions the file's\n" +
			"accounts; --all provisions every enabled account without a link. Paced by platform.rate_limit,\n" +
			"shared with the running instances (users' launches go first). Stopped and run again, it goes on\n" +
			"where it stopped and never creates a platform user twice. Each run writes a CSV report of its own\n" +
			"(next to --csv's file, the time in its name); a report is never overwritten. Exits 1 if any\n" +
			"account failed."}
	fs := env.Flags(cmd)
	cfgPath := fs.String("config", "", "configuration file")
	csvPath := fs.String("csv", "", "CSV file of email,firstName,lastName (a header line is allowed)")
	all := fs.Bool("all", false, "provision every enabled account that has no link")
	dry := fs.Bool("dry-run", false, "say what would be done, and do nothing")
	reportPath := fs.String("report", "", "where to write the report, a file that does not exist yet (default: FILE.report-TIME.csv next to --csv's file; provision-report-TIME.csv with --all)")
	workers := fs.Int("workers", provision.DefaultWorkers, "accounts provisioned at a time (1..64); the platform budget sets the pace")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	if (*csvPath == "") == !*all {
		return cli.UsageError("provision: give either --csv FILE or --all (see 'ssobridge provision --help')")
	}
	if *workers < 1 || *workers > 64 {
		return cli.UsageError(fmt.Sprintf("provision: --workers %d is out of range; use 1..64", *workers))
	}
	cfg, err := env.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if cfg.Platform.BaseURL == config.Embedded {
		// A platform of its own would end with the command, and the links
		// it stored would point at ids the demo's own emulator gives to
		// other people.
		return cli.UsageError(fmt.Sprintf("provision: platform.base_url is %q: this command has no platform to create users on (the demo's built-in\n"+
			"emulator runs inside 'ssobridge serve'). Nothing was done. Use the running demo's console instead (its\n"+
			"Provisioning page; a CSV is imported on its Accounts page), or set platform.base_url (%s) to your platform.", config.Embedded, config.EnvName("platform.base_url")))
	}
	explicit := *reportPath != ""
	if explicit {
		if _, err := os.Stat(*reportPath); err == nil {
			return cli.UsageError(fmt.Sprintf("provision: --report %s exists; nothing was done. A report is never overwritten: name another file, or leave --report out (each run then writes a report of its own)", *reportPath))
		}
	}
	rows, err := provisionRows(*csvPath, reportPath, time.Now())
	if err != nil {
		return err
	}
	p, err := app.NewProvisioning(ctx, cfg, env.Stderr)
	if err != nil {
		return err
	}
	defer p.Close()

	plan, err := planProvisioning(ctx, p.Store, rows, *all)
	if err != nil {
		return err
	}
	printPlan(env.Stdout, plan, cfg.Platform.RateLimit)
	if *dry {
		fmt.Fprintln(env.Stdout, "dry run: nothing was done")
		return nil
	}
	if len(plan.missing) > 0 {
		added, err := addMissing(ctx, p.Store, plan.missing)
		if err != nil {
			return err
		}
		plan.todo = append(plan.todo, added...)
	}

	return runProvisioning(ctx, env.Stdout, p, plan.todo, plan.linked, *workers, report{path: *reportPath, explicit: explicit})
}

// report is where a run's report goes: a file of its own. A default name
// taken already (two runs in one second) gets -2, -3, ...; a name the
// admin gave is never replaced.
type report struct {
	path     string
	explicit bool
}

// provisionRows reads --csv FILE (nil without one) and sets the report's
// default path beside it, or in the working directory with --all, the
// run's time (UTC) in its name.
func provisionRows(csvPath string, reportPath *string, now time.Time) ([]accounts.CSVRow, error) {
	stamp := now.UTC().Format("20060102-150405")
	if csvPath == "" {
		if *reportPath == "" {
			*reportPath = "provision-report-" + stamp + ".csv"
		}
		return nil, nil
	}
	data, err := os.ReadFile(csvPath)
	if err != nil {
		return nil, cli.UsageError(fmt.Sprintf("provision: %v", err))
	}
	rows, problems := accounts.ParseCSVUpTo(string(data), MaxProvisionRows)
	if len(problems) > 0 {
		return nil, cli.UsageError(fmt.Sprintf("provision: %s has problems; nothing was done:\n  %s", csvPath, strings.Join(firstN(problems, 20), "\n  ")))
	}
	if len(rows) == 0 {
		return nil, cli.UsageError(fmt.Sprintf("provision: %s has no rows of email,firstName,lastName", csvPath))
	}
	if *reportPath == "" {
		*reportPath = strings.TrimSuffix(csvPath, filepath.Ext(csvPath)) + ".report-" + stamp + ".csv"
	}
	return rows, nil
}

// printPlan says what a run will do and about how long it takes at the
// platform's pace.
func printPlan(out io.Writer, plan provisionPlan, rateLimit float64) {
	n := len(plan.todo) + len(plan.missing)
	calls := 2 * n // look up, create
	fmt.Fprintf(out, "%s to provision (%d already linked)", counted(n, "account", "accounts"), plan.linked)
	if len(plan.missing) > 0 {
		fmt.Fprintf(out, "; of them %s to add first (without a password)", counted(len(plan.missing), "local account", "local accounts"))
	}
	fmt.Fprintf(out, "; about %s", counted(calls, "platform call", "platform calls"))
	if rateLimit > 0 {
		fmt.Fprintf(out, ", %s at platform.rate_limit %g/s", (time.Duration(float64(calls)/rateLimit) * time.Second).Round(time.Second), rateLimit)
	}
	fmt.Fprintln(out)
}

// runProvisioning provisions todo with a progress bar, writes the report
// and says how it went: cli.ErrFailed when stopped or when any failed.
// linked are the accounts the plan found linked already, which the
// summary counts with those the run found so.
func runProvisioning(ctx context.Context, stdout io.Writer, p *app.Provisioning, todo []store.Account, linked, workers int, to report) error {
	out := progressWriter(stdout)
	bar := &progress{out: out, total: len(todo), start: time.Now(), rateLimited: p.RateLimited}
	report := make([]provision.Row, 0, len(todo))
	var tally provision.Tally
	tally.Total = len(todo)
	provision.Run(ctx, p.Service, todo, workers, func(r provision.Row) {
		report = append(report, r)
		tally.Add(r)
		bar.update(tally)
	})
	bar.finish(tally)
	reportPath, err := writeReport(to, report)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created %d, existed %d, already linked %d, failed %d; %d answered 429; took %s\nreport: %s\n",
		tally.Created, tally.Existed, tally.Linked+linked, tally.Failed, p.RateLimited(), time.Since(bar.start).Round(100*time.Millisecond), reportPath)
	if ctx.Err() != nil {
		fmt.Fprintf(stdout, "stopped after %d of %d: run the same command again to continue\n", tally.Done, tally.Total)
		return cli.ErrFailed
	}
	if tally.Failed > 0 {
		fmt.Fprintf(stdout, "%s failed: the report says why; run again to retry them\n", counted(tally.Failed, "account", "accounts"))
		return cli.ErrFailed
	}
	return nil
}

func firstN(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("… and %d more", len(s)-n))
}

// provisionPlan is what a run will do.
type provisionPlan struct {
	todo    []store.Account    // accounts to provision (no link yet)
	missing []store.NewAccount // accounts to add first (--csv)
	linked  int                // accounts of the file linked already
}

// planProvisioning reads what is to be done: with rows, the file's
// accounts (missing ones to add); else every enabled unlinked account.
func planProvisioning(ctx context.Context, s store.Store, rows []accounts.CSVRow, all bool) (provisionPlan, error) {
	var plan provisionPlan
	if all {
		for after := int64(0); ; {
			page, err := s.UnlinkedAccounts(ctx, after, 1000)
			if err != nil {
				return plan, err
			}
			if len(page) == 0 {
				return plan, nil
			}
			plan.todo = append(plan.todo, page...)
			after = page[len(page)-1].ID
		}
	}
	for _, r := range rows {
		a, err := s.AccountByEmail(ctx, r.Email)
		if errors.Is(err, store.ErrNotFound) {
			plan.missing = append(plan.missing, r.NewAccount)
			continue
		}
		if err != nil {
			return plan, err
		}
		if _, err := s.LinkFor(ctx, a.ID); err == nil {
			plan.linked++
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			return plan, err
		}
		plan.todo = append(plan.todo, a)
	}
	return plan, nil
}

// addMissing adds the file's missing accounts, 500 at a time, and returns
// them (one added meanwhile by someone else is taken as it is).
func addMissing(ctx context.Context, s store.Store, ns []store.NewAccount) ([]store.Account, error) {
	var out []store.Account
	for i := 0; i < len(ns); i += 500 {
		chunk := ns[i:min(i+500, len(ns))]
		if err := s.CreateAccounts(ctx, chunk); err != nil {
			if !errors.Is(err, store.ErrEmailTaken) {
				return nil, fmt.Errorf("add accounts: %w", err)
			}
			for _, n := range chunk { // one by one: another run or import added some
				if _, err := s.CreateAccount(ctx, n); err != nil && !errors.Is(err, store.ErrEmailTaken) {
					return nil, fmt.Errorf("add %s: %w", n.Email, err)
				}
			}
		}
		for _, n := range chunk {
			a, err := s.AccountByEmail(ctx, n.Email)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", n.Email, err)
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// writeReport writes one line per account (email, outcome, platform user
// id, reason) to a new file, and returns its path.
func writeReport(to report, rows []provision.Row) (string, error) {
	path := to.path
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	for n := 2; errors.Is(err, os.ErrExist) && !to.explicit && n < 100; n++ {
		path = strings.TrimSuffix(to.path, ".csv") + "-" + strconv.Itoa(n) + ".csv"
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		return "", fmt.Errorf("report (never overwritten): %w", err)
	}
	w := csvsafe.NewWriter(f) // opened in a spreadsheet: no cell may be a formula
	_ = w.Write([]string{"email", "outcome", "platform_user_id", "reason"})
	for _, r := range rows {
		_ = w.Write([]string{r.Email, string(r.Outcome), r.PlatformUserID, r.Reason})
	}
	w.Flush()
	if err := errors.Join(w.Error(), f.Close()); err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	return path, nil
}

// terminalWriter is progress output to a terminal: a bar redrawn in place.
type terminalWriter struct{ io.Writer }

// progressWriter marks w as a terminal when it is one.
func progressWriter(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return terminalWriter{w}
	}
	return w
}

// progress reports a run: a bar redrawn at most 10 times a second at a
// terminal, else a plain line every 5 s.
type progress struct {
	out         io.Writer
	total       int
	start       time.Time
	last        time.Time
	rateLimited func() int64
}

func (p *progress) update(t provision.Tally) {
	_, tty := p.out.(terminalWriter)
	every := 5 * time.Second
	if tty {
		every = 100 * time.Millisecond
	}
	if time.Since(p.last) < every {
		return
	}
	p.last = time.Now()
	p.print(t, tty)
}

func (p *progress) finish(t provision.Tally) {
	_, tty := p.out.(terminalWriter)
	p.print(t, tty)
	if tty {
		fmt.Fprintln(p.out)
	}
}

func (p *progress) print(t provision.Tally, tty bool) {
	elapsed := time.Since(p.start).Seconds()
	rate := float64(t.Done) / math.Max(elapsed, 1e-3)
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(p.total-t.Done)/rate) * time.Second).Round(time.Second).String()
	}
	line := fmt.Sprintf("%d/%d  %.1f/s  ETA %s  429s %d  failed %d", t.Done, p.total, rate, eta, p.rateLimited(), t.Failed)
	if !tty {
		fmt.Fprintln(p.out, "provision: "+line)
		return
	}
	const width = 30
	filled := 0
	if p.total > 0 {
		filled = width * t.Done / p.total
	}
	fmt.Fprintf(p.out, "\r[%s%s] %s ", strings.Repeat("#", filled), strings.Repeat(".", width-filled), line)
}

// counted is n with its noun in the form English's CLDR plural rule
// picks ("1 account", "0 accounts", "2 accounts"), as the pages count.
func counted(n int, one, other string) string {
	if plural.Cardinal.MatchPlural(language.English, n, 0, 0, 0, 0) == plural.One {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, other)
}
