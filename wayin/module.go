package wayin

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/ssobridge/ssobridge/accounts/regulation"
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// Module is a way in as the bridge registers it: one entry of app's list
// of modules, which the configuration, the server, check and the trust
// report loop over. A module declares its configuration section; from the
// configuration read, it names its sources, opens its way in and checks
// what it reads from elsewhere. Nothing outside its package names it.
type Module interface {
	// Section is its configuration section (nil: none).
	Section() config.Sectioner
	// Sources are the admission's sources the configuration turns on, in
	// the order check reports them (none: the module is off).
	Sources(cfg config.Config) []signin.Source
	// Open opens the way in the configuration turns on (nil when it is
	// off). A party that does not answer at start is a warning in the
	// log, not an error: the way retries and /readyz reports it.
	Open(ctx context.Context, h Host) (Way, error)
	// Check says, for `ssobridge check`, what the way reads from
	// elsewhere as the bridge would, and what to enter at the other
	// party; false when the way would not work. It writes nothing when
	// the module is off.
	Check(ctx context.Context, h Host, w io.Writer) bool
}

// PasswordRule is a module that decides whether the sign-in page shows
// the password form (an IdP that is every account's way in may hide it).
type PasswordRule interface {
	// PasswordForm is whether the configuration hides the form, and
	// whether /login?local=1 still shows it then.
	PasswordForm(cfg config.Config) (hide, fallback bool)
}

// Host is what the bridge gives a module to open or check its way in.
type Host struct {
	Config config.Config
	// Store is the bridge's store; for check, the store when it can be
	// read (nil when there is none yet, or StoreProblem says why not).
	Store        store.Store
	StoreProblem string
	Logger       *slog.Logger
	Now          func() time.Time
	// HTTPClient reaches the way's other parties, under the outbound
	// policy (outbound:).
	HTTPClient *http.Client
	// PollEvery is how often a way reads again what it polls (an IdP's
	// health); 0: the way's own period.
	PollEvery time.Duration
	// RetryEvery is how soon a way reads again what it could not read
	// (an LMS's key set); 0: the way's own.
	RetryEvery time.Duration
	// Provision starts the console's provisioning job for accounts a way
	// found ahead of their first arrival (a course's roster), waiting
	// while another job runs; nil for check.
	Provision func(ctx context.Context, startedBy string, accts []store.Account) error
	// ProvisionAhead queues an account whose platform user is made in
	// the background, at the platform's shared pace, ahead of its first
	// launch (SCIM's new accounts); nil for check.
	ProvisionAhead func(acct store.Account)
	// Regulator counts an API client's failures toward a ban (SCIM's
	// wrong tokens); nil: not counted.
	Regulator *regulation.Regulator
	// EndLaunches stops the launches in flight of an account whose
	// sessions ended elsewhere (SCIM deactivated it); nil: none.
	EndLaunches func(accountID int64)
	// ClientIP is a request's client address as the bridge reads it
	// (behind a trusted proxy, from its header).
	ClientIP func(*http.Request) string
}

// StoredSourcer is a module whose sources are kept in the store as well
// (an LMS registered from the console), for check's report of who may
// arrive as whom.
type StoredSourcer interface {
	// KeepsSources: the configuration turns on the sources the store
	// keeps (check opens the store only then).
	KeepsSources(cfg config.Config) bool
	StoredSources(ctx context.Context, h Host) []signin.Source
}

// ConsolePage is a way in that adds a page to the admin console: its
// path and its label in the console's navigation ("": none).
type ConsolePage interface {
	ConsolePage() (path, label string)
}

// OrganisationSignIn is what pages call a source that has no name of its
// own: the person's organisation's sign-in, which every way in is.
func OrganisationSignIn() locale.ID { return locale.Msg("your organisation's sign-in") }

// Worded is a way in whose refusals have words of their own (a course
// and its LMS, not a sign-in): the page gallery's accessibility and
// language tests render each.
type Worded interface {
	Wordings() []views.Wording
}

// Wordings are the refusal wordings of mods, in their order.
func Wordings(mods []Module) []views.Wording {
	var out []views.Wording
	for _, m := range mods {
		if w, ok := m.(Worded); ok {
			out = append(out, w.Wordings()...)
		}
	}
	return out
}

// Commander is a module that adds sub-commands to the command line (the
// portal's portal-link): the command line runs them by name and lists
// them in its help.
type Commander interface {
	Commands() []Command
}

// Command is a sub-command a module adds.
type Command struct {
	Name string // as typed: "portal-link"
	Line string // what it does, for the command list (one line)
	// Synopsis and Summary are its --help: its flags in short, and what
	// it does in a sentence or two.
	Synopsis, Summary string
	Run               func(ctx context.Context, cl CommandLine, args []string) error
}

// CommandLine is what a module's sub-command runs with (package cli's
// Env lends it).
type CommandLine interface {
	Stdout() io.Writer
	Stderr() io.Writer
	// Flags are the command's flags; Parse reads args into them (--help
	// prints the command's usage; a wrong flag is bad input).
	Flags() *flag.FlagSet
	Parse(fs *flag.FlagSet, args []string) error
	// LoadConfig reads path, else ./config.yaml, else the embedded
	// default, then the SSOBRIDGE_* environment, with the modules'
	// sections.
	LoadConfig(path string) (config.Config, error)
	// BadInput is a wrong command line or input: exit 2, nothing changed.
	BadInput(msg string) error
}

// DemoRule is a way in that brings a sample of its other side into the
// embedded demo (the portal's sample portal, LTI's sample LMS), so that
// it can be tried with nothing else running.
type DemoRule interface {
	// Demo starts the sample when cfg gets one and returns cfg as the
	// bridge serves it (the sample set in the way's settings); a nil
	// *Demo: cfg gets none. tool is the bridge's URL as browsers reach
	// it.
	Demo(cfg config.Config, tool string) (config.Config, *Demo, error)
}

// Demo is a sample a way in brought into the demo.
type Demo struct {
	// Name and Note are what the start-up line says of it: "sample LMS"
	// and "its course page launches with LTI 1.3, no password".
	Name, Note string
	// Listening tells the sample where the bridge listens and returns
	// where a person opens it.
	Listening func(tool string) string
	// Close stops it (nil: nothing to stop).
	Close func() error
	// Double is the running sample, for tests that drive it.
	Double any
}

// Sampled is a way in that renders pages of its own: the page gallery's
// accessibility and language tests render each sample (l writes the
// texts a handler gives a page, in its language; nil: English).
type Sampled interface {
	Samples(l *locale.Localizer) []views.Sample
}

// Samples are the sample pages of mods, in their order.
func Samples(mods []Module, l *locale.Localizer) []views.Sample {
	var out []views.Sample
	for _, m := range mods {
		if s, ok := m.(Sampled); ok {
			out = append(out, s.Samples(l)...)
		}
	}
	return out
}

// Sections are the configuration sections of mods.
func Sections(mods []Module) []config.Sectioner {
	var out []config.Sectioner
	for _, m := range mods {
		if s := m.Section(); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// HomeRule is a module that is the partner's own portal.
type HomeRule interface {
	Home(cfg config.Config) Home
}

// Home is the partner's portal, as the bridge's pages link it.
type Home struct {
	// URL is where the "back" links of people who came from the portal
	// lead ("": none).
	URL string
	// Label is the "back" links' text ("Back to your portal").
	Label locale.ID
	// AdminSessions: a session the portal began may open the console.
	AdminSessions bool
}
