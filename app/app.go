// Package app wires the bridge from a config.Config: store, password
// hasher, regulator, Partner API client (and the embedded emulator when
// platform.base_url is "embedded"), launch service and HTTP handlers. New
// is the one constructor, used by main's commands and by the end-to-end
// tests; Serve runs the result and drains it; Close releases it.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/accounts/regulation"
	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/handlers"
	"github.com/ssobridge/ssobridge/handlers/console"
	"github.com/ssobridge/ssobridge/handlers/metrics"
	"github.com/ssobridge/ssobridge/internal/logbuf"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/launch/pacing"
	"github.com/ssobridge/ssobridge/launch/provision"
	"github.com/ssobridge/ssobridge/launch/waitline"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/ssobridge/ssobridge/store/storecache"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// App is the wired bridge.
type App struct {
	cfg    config.Config
	logger *slog.Logger
	// flushLog writes the log lines gathered so far (logbuf.Buffer).
	flushLog func()
	// futureEventsSeen: retention logged audit events stamped in the
	// future (once a process).
	futureEventsSeen atomic.Bool
	store            store.Store // the configured backend behind the guard, and the cache when store.cache_ttl > 0
	guard            *sqlstore.Guard
	budget           *pacing.Budget // the platform's rate limit, shared by the instances
	line             *waitline.Line // users waiting for the platform's pace
	// rateLimited counts the platform's 429s (the provisioning job shows
	// those met while it ran).
	rateLimited atomic.Int64
	hasher      *passhash.Hasher
	client      *apiclient.Client
	sim         *platformsim.Running // nil unless the platform is embedded
	handler     http.Handler
	metrics     *metrics.Metrics
	closers     []func() error
	// stopping is set when Serve begins to drain; /readyz reads it.
	stopping atomic.Bool
	// demos are the samples the ways in brought into the embedded demo
	// (the sample portal, the sample LMS).
	demos []*wayin.Demo
	// afterStart: INFO lines Serve logs after its start-up lines.
	afterStart []startNote
	// stopped writes the final line of a Serve that ended well; Close
	// calls it last.
	stopped func()
}

// watch runs each way in's background refresh until Close.
func (a *App) watch(list []wayin.Way) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, w := range list {
		wg.Go(func() { logbuf.FlushingPanics(a.flushLog, func() { w.Watch(ctx, a.logger) }) })
	}
	a.closers = append(a.closers, func() error { cancel(); wg.Wait(); return nil })
}

// Options adjust the wiring for tests and the load tool; the zero value
// is what serve uses.
type Options struct {
	LogOutput io.Writer        // default os.Stderr
	Now       func() time.Time // the app's clock (sessions, regulation, store); default time.Now
	// Emulator adjusts the embedded emulator's configuration.
	Emulator func(*platformsim.Config)
	// Client adjusts the Partner API client (e.g. no retry sleeps).
	Client func(*apiclient.Options)
	// LinePatience is how long a launch is waited for before the waiting
	// page (0: waitline.DefaultPatience).
	LinePatience time.Duration
	// Pacing adjusts the platform budget (e.g. its waits recorded, not
	// slept).
	Pacing func(*pacing.Config)
	// IdPHealthInterval is how often the identity provider's health is
	// checked in the background; default 15 s.
	IdPHealthInterval time.Duration
	// HTTPClient reaches the ways' other parties (IdPs, LMSs), under the
	// outbound policy (tests: one that trusts a test certificate); nil:
	// the bridge's own.
	HTTPClient *http.Client
	// RetryEvery is how soon a way reads again what it could not read (an
	// LMS's key set); default: the way's own (15 s).
	RetryEvery time.Duration
	// SkipDemos leaves the samples of the modules of these sections out
	// of the embedded demo (tests that do not use the sample LMS, "lti":
	// it costs two RSA keys and a listener).
	SkipDemos []string
	// Modules are the ways in registered as modules (nil: Modules()); the
	// configuration is read with their sections.
	Modules []wayin.Module
}

// EmulatorUsersFile, in the data directory, keeps the embedded emulator's
// users across restarts.
const EmulatorUsersFile = "platform-users.jsonl"

// New wires every piece from cfg. Close releases them.
func New(ctx context.Context, cfg config.Config, o Options) (_ *App, err error) {
	if o.LogOutput == nil {
		o.LogOutput = os.Stderr
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Modules == nil {
		o.Modules = Modules()
	}
	logOut, flushLog, closeLog := logbuf.Buffer(o.LogOutput)
	a := &App{cfg: cfg, flushLog: flushLog, closers: []func() error{closeLog}} // closed last
	a.logger = slog.New(logbuf.UrgentFlush(newLogger(cfg.Log, logOut).Handler(), flushLog))
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if err := a.openStore(ctx, o.Now); err != nil {
		return nil, err
	}
	if a.hasher, err = NewHasher(cfg.Password, cfg.Password.HashConcurrency); err != nil {
		return nil, err
	}
	a.metrics = metrics.New()
	a.metrics.WatchStore(a.guard.Stats)
	a.startBudget(o)
	if err := a.connect(o); err != nil {
		return nil, err
	}
	if cfg, a.demos, err = startDemos(cfg, o.Modules, o.SkipDemos); err != nil {
		return nil, err
	}
	a.cfg = cfg
	for _, d := range a.demos {
		if d.Close != nil {
			a.closers = append(a.closers, d.Close)
		}
	}
	keys, err := a.sessionKeys()
	if err != nil {
		return nil, err
	}
	launcher := launch.New(a.client, a.store, launch.Options{Logger: a.logger, Now: o.Now, OnDone: a.metrics.Launch})
	sessions := handlers.SessionConfig{HashKey: keys.hash, BlockKey: keys.block, PreviousHashKey: keys.previousHash, PreviousBlockKey: keys.previousBlock, MaxAge: cfg.Session.MaxAge,
		IdleTimeout: cfg.Session.IdleTimeout, Secure: cfg.Secure()}
	a.startLine(o, launcher, sessions)
	jobs := provision.NewJobs(a.store, launcher, a.logger, o.Now, a.rateLimited.Load)
	a.closers = append(a.closers, func() error { jobs.Close(); return nil })
	reg := regulation.New(a.store, regulationConfig(cfg.Regulation), o.Now)
	h := host(cfg, o, a.logger)
	ahead := &aheadQueue{start: func() *provision.Queue { return provision.NewQueue(launcher, 0, a.logger) }}
	a.closers = append(a.closers, ahead.Close)
	h.Store, h.Provision, h.Regulator, h.ProvisionAhead = a.store, jobs.StartFor, reg, ahead.Add
	h.EndLaunches = func(id int64) { a.line.End(id, "") }
	h.ClientIP = handlers.ClientIP(cfg.Server.TrustProxyHeaders)
	in, err := waysOf(ctx, h, o.Modules)
	if err != nil {
		return nil, err
	}
	a.watch(in.list)
	languages, err := locale.New(cfg.Server.Languages.List())
	if err != nil {
		return nil, fmt.Errorf("server.languages: %w", err)
	}
	a.handler = handlers.New(handlers.Deps{
		Store: handlers.StoreOf(a.store), Passwords: a.hasher, Regulator: reg, Languages: languages, Zone: cfg.Zone(), ContactName: cfg.Server.ContactName, ContactURL: cfg.Server.ContactURL,
		Launcher: launcher, Line: a.line, Provisioning: jobs,
		Platform:          platformView{client: a.client, embedded: a.sim != nil},
		TrustProxyHeaders: cfg.Server.TrustProxyHeaders, Metrics: a.metrics, MetricsElsewhere: cfg.Server.MetricsAddr != "",
		Logger: a.logger, Now: o.Now,
		Sessions:       sessions,
		AuditRetention: cfg.Audit.Retention, Stopping: a.stopping.Load, PublicURL: cfg.Server.PublicURL,
		HomeAdminSessions: in.home.AdminSessions, Home: views.WayBack{URL: in.home.URL, Label: in.home.Label},
		Ways: in.list, PasswordForm: passwordForm(cfg, o.Modules),
	})
	return a, nil
}

// openStore opens the backend, then the guard in front of it (every call
// bounded by store.timeout), then the cache when store.cache_ttl is set.
func (a *App) openStore(ctx context.Context, now func() time.Time) error {
	db, err := openStoreLogged(ctx, a.cfg, now, a.logger)
	if err != nil {
		return err
	}
	a.closers = append(a.closers, db.Close)
	a.guard = sqlstore.NewGuard(db, a.cfg.Store.Timeout, a.logger, now)
	a.store = a.guard
	if a.cfg.Store.CacheTTL > 0 {
		a.store = storecache.New(a.guard, a.cfg.Store.CacheTTL, now)
	}
	return nil
}

// startBudget starts the one budget for the platform's rate limit, shared
// with every instance on the store (through the guard: an outage leaves
// it as it was).
func (a *App) startBudget(o Options) {
	pc := pacing.Config{Rate: a.cfg.Platform.RateLimit, Burst: a.cfg.Platform.RateBurst}
	if o.Pacing != nil {
		o.Pacing(&pc)
	}
	a.budget = pacing.New(pc, a.guard)
	budgetCtx, stopBudget := context.WithCancel(context.Background())
	go a.budget.Run(budgetCtx)
	a.closers = append(a.closers, func() error { stopBudget(); return nil })
	a.metrics.WatchPlatformBudget(func() metrics.PlatformBudget {
		st := a.budget.Stats()
		return metrics.PlatformBudget{Rate: st.Rate, Share: st.Share, Instances: st.Live, Paused: st.Paused, Waiting: st.Waiting}
	})
}

// connect makes the Partner API client (and starts the embedded emulator
// when the configuration asks for it), paced by the budget and counted by
// the metrics.
func (a *App) connect(o Options) error {
	// The embedded emulator keeps its users beside the store, so a
	// restarted demo's links keep meaning the same people.
	keepUsers := func(sc *platformsim.Config) {
		sc.UsersFile = filepath.Join(a.cfg.DataDir(), EmulatorUsersFile)
		if o.Emulator != nil {
			o.Emulator(sc)
		}
	}
	client, sim, closePlatform, err := connectPlatform(a.cfg, a.logger, keepUsers, func(co *apiclient.Options) {
		co.Hooks = apiclient.Hooks{OnRetry: a.metrics.PlatformRetry, OnAttempt: func(endpoint string, status int, d time.Duration) {
			a.metrics.PlatformAttempt(endpoint, status, d)
			if status == http.StatusTooManyRequests {
				a.rateLimited.Add(1) // for the console's provisioning job
			}
		}}
		co.Pacer = a.budget
		if o.Client != nil {
			o.Client(co)
		}
	})
	if err != nil {
		return err
	}
	a.client, a.sim = client, sim
	a.closers = append(a.closers, closePlatform)
	return nil
}

// sessionKeys reads the session keys, or generates and keeps them (and
// says so: several instances need the same ones).
func (a *App) sessionKeys() (keys, error) {
	ks, err := sessionKeys(a.cfg)
	if err != nil {
		return keys{}, err
	}
	switch {
	case ks.generated && a.cfg.Platform.BaseURL == config.Embedded:
		// The demo's own keys are expected: nothing to do about them.
		a.logger.Info("session keys generated for the demo", "file", ks.file)
	case ks.generated:
		a.logger.Warn("session keys were empty: generated new ones", "file", ks.file,
			"note", "set session.hash_key and session.block_key when running more than one instance")
	}
	return ks, nil
}

// startLine starts the line for the platform's pace: its tickets in the
// store, the exchange URLs they hold sealed under the session keys.
func (a *App) startLine(o Options, launcher *launch.Service, sessions handlers.SessionConfig) {
	a.line = waitline.New(waitline.Config{MaxWait: a.cfg.Platform.MaxWait, Patience: o.LinePatience, Logger: a.logger, Now: o.Now,
		OnLanded: a.metrics.LineLanded, OnRefused: a.metrics.LineRefused},
		launcher, a.store, a.budget, handlers.NewSealer(sessions, a.cfg.Platform.MaxWait+30*time.Minute, o.Now))
	lineCtx, stopLine := context.WithCancel(context.Background())
	go a.line.Run(lineCtx)
	a.closers = append(a.closers, func() error { stopLine(); a.line.Close(); return nil })
	a.metrics.WatchLine(a.line.Waiting)
}

// OpenStore opens the backend store.driver names (without the cache):
// every command and serve use it, so each works on either backend.
func OpenStore(ctx context.Context, cfg config.Config, now func() time.Time) (store.Store, error) {
	return openStoreLogged(ctx, cfg, now, nil)
}

// openStoreLogged is OpenStore whose migrations say what they did to
// logger (serve's log).
func openStoreLogged(ctx context.Context, cfg config.Config, now func() time.Time, logger *slog.Logger) (store.Store, error) {
	opts := []sqlstore.Option{sqlstore.WithTimeout(cfg.Store.Timeout), sqlstore.WithLogger(logger)}
	if cfg.Store.Driver == "postgres" {
		return sqlstore.OpenPostgres(ctx, cfg.Store.DSN, now, opts...)
	}
	return sqlstore.OpenSQLite(ctx, cfg.Store.DSN, now, opts...)
}

// Handler serves the bridge's routes.
func (a *App) Handler() http.Handler { return a.handler }

// Demo is the sample of that name a way in brought into the embedded demo
// (nil unless it is served).
func (a *App) Demo(name string) *wayin.Demo {
	for _, d := range a.demos {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// Store is the account store the bridge uses.
func (a *App) Store() store.Store { return a.store }

// Hasher hashes and verifies local passwords.
func (a *App) Hasher() *passhash.Hasher { return a.hasher }

// Client is the Partner API client.
func (a *App) Client() *apiclient.Client { return a.client }

// Budget is the platform's rate budget, shared with the other instances.
func (a *App) Budget() *pacing.Budget { return a.budget }

// Emulator is the embedded platform emulator; nil unless platform.base_url
// is "embedded".
func (a *App) Emulator() *platformsim.Running { return a.sim }

// Logger is the app's logger.
func (a *App) Logger() *slog.Logger { return a.logger }

// Close releases everything, last opened first.
func (a *App) Close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	a.closers = nil
	if a.stopped != nil {
		a.stopped() // after the log's last lines (its buffer is flushed by the last closer)
		a.stopped = nil
	}
	return errors.Join(errs...)
}

// newLogger writes log.format lines at log.level. Durations read as Go
// durations ("1.2ms") in both formats; slog's JSON would write
// nanosecond integers.
func newLogger(cfg config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Level)) // validated by config
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() == slog.KindDuration {
			a.Value = slog.StringValue(a.Value.Duration().String())
		}
		return a
	}}
	if cfg.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// regulationConfig is the store's form of the regulation settings.
func regulationConfig(rg config.Regulation) store.RegulationConfig {
	return store.RegulationConfig{MaxRetries: rg.MaxRetries, MaxRetriesPerIP: rg.MaxRetriesPerIP, FindTime: rg.FindTime, BanTime: rg.BanTime}
}

// NewHasher is the password hasher that pw configures, hashing at most
// concurrency passwords at once.
func NewHasher(pw config.Password, concurrency int) (*passhash.Hasher, error) {
	return passhash.NewHasher(passhash.HashParams{MemoryKiB: pw.Argon2MemoryKiB, Iterations: pw.Argon2Iterations, Parallelism: pw.Argon2Parallelism}, concurrency)
}

// connectPlatform builds the Partner API client of cfg. When the platform
// is embedded it first starts the emulator and gives the client its admin
// credential (sim is nil otherwise). closeFn releases both, the client's
// idle connections first: a dialled but unused one would hold the
// emulator's Shutdown for 5 s.
func connectPlatform(cfg config.Config, logger *slog.Logger, simTweak func(*platformsim.Config), clientTweak func(*apiclient.Options)) (
	client *apiclient.Client, sim *platformsim.Running, closeFn func() error, err error) {
	p := cfg.Platform
	creds := apiclient.Credentials{Method: apiclient.AuthMethod(p.Auth), APIKey: p.APIKey, APISecret: p.APISecret,
		SchemeHMAC: p.SchemeHMAC, SchemeSimple: p.SchemeSimple}
	baseURL := p.BaseURL
	if baseURL == config.Embedded {
		if sim, err = startEmbeddedPlatform(p, logger, simTweak); err != nil {
			return nil, nil, nil, err
		}
		baseURL = sim.URL
		admin := sim.Credentials()[0]
		creds.APIKey, creds.APISecret = admin.Key, admin.Secret
	}
	// The client signs with the real clock: the platform checks Date
	// against its own, whatever clock the rest of the app is given.
	copts := apiclient.Options{BaseURL: baseURL, Credentials: creds, Timeout: p.Timeout, Shapes: p.Shapes.Client()}
	if clientTweak != nil {
		clientTweak(&copts)
	}
	if client, err = apiclient.New(copts); err != nil {
		if sim != nil {
			sim.Close()
		}
		return nil, nil, nil, fmt.Errorf("platform client: %w", err)
	}
	closeFn = func() error {
		client.CloseIdleConnections()
		if sim != nil {
			return sim.Close()
		}
		return nil
	}
	return client, sim, closeFn, nil
}

// startEmbeddedPlatform runs the emulator in-process on a loopback port,
// with an admin credential (used by the bridge) and a member one.
func startEmbeddedPlatform(p config.Platform, logger *slog.Logger, tweak func(*platformsim.Config)) (*platformsim.Running, error) {
	sc := platformsim.Config{
		Credentials:  []platformsim.Credential{platformsim.NewCredential(true), platformsim.NewCredential(false)},
		SchemeHMAC:   p.SchemeHMAC,
		SchemeSimple: p.SchemeSimple,
		Logger:       logger.With("component", "platform-emulator"),
		Shapes:       emulatorShapes(p.Shapes),
	}
	if tweak != nil {
		tweak(&sc)
	}
	if sc.UsersFile != "" {
		if err := os.MkdirAll(filepath.Dir(sc.UsersFile), 0o700); err != nil {
			return nil, fmt.Errorf("platform emulator: %w", err)
		}
	}
	sim, err := platformsim.New(sc)
	if err != nil {
		return nil, err
	}
	return platformsim.Start(sim, p.EmbeddedAddr)
}

// emulatorShapes shapes the embedded emulator as the bridge is configured,
// so the demo works whatever platform.shapes says.
func emulatorShapes(s config.Shapes) platformsim.Shapes {
	// The emulator reads shapes with code of its own, but its type has the
	// same fields in the same order as the client's: a conversion.
	return platformsim.Shapes(s.Client())
}

// CheckPlatform makes one signed call to the configured platform (starting
// the embedded emulator for it, if that is the one configured) and returns
// the connection and the verdict, as the console's check shows them.
func CheckPlatform(ctx context.Context, cfg config.Config, logOut io.Writer) (console.Connection, console.CheckReport, error) {
	// The check's throwaway emulator takes a free port: a running demo
	// holds platform.embedded_addr, and the check must work beside it.
	cfg.Platform.EmbeddedAddr = "127.0.0.1:0"
	client, sim, closeFn, err := connectPlatform(cfg, newLogger(cfg.Log, logOut), nil, nil)
	if err != nil {
		return console.Connection{}, console.CheckReport{}, err
	}
	defer closeFn()
	c := platformView{client: client, embedded: sim != nil}
	return c.Connection(), c.Check(ctx), nil
}
