package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/handlers"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/platformsim"
)

// app is the wired bridge.
type app struct {
	cfg      config.Config
	logger   *slog.Logger
	store    accounts.Store // the SQLite store, behind the cache when store.cache_ttl > 0
	hasher   *accounts.Hasher
	client   *apiclient.Client
	sim      *platformsim.Running // nil unless the platform is embedded
	echo     *echo.Echo
	handlers *handlers.Handlers
	closers  []func() error
}

// appOptions let tests and the load tool adjust the wiring.
type appOptions struct {
	logOut    io.Writer        // default stderr
	now       func() time.Time // default time.Now
	simConfig func(*platformsim.Config)
	// clientOptions adjusts the Partner API client (e.g. no retry sleeps).
	clientOptions func(*apiclient.Options)
}

func newLogger(cfg config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Level)) // validated by config
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// buildApp wires every piece from cfg. Close releases them.
func buildApp(ctx context.Context, cfg config.Config, o appOptions) (_ *app, err error) {
	if o.logOut == nil {
		o.logOut = os.Stderr
	}
	if o.now == nil {
		o.now = time.Now
	}
	a := &app{cfg: cfg, logger: newLogger(cfg.Log, o.logOut)}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()

	db, err := accounts.OpenSQLite(ctx, cfg.Store.DSN, o.now)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, db.Close)
	a.store = db
	if cfg.Store.CacheTTL > 0 {
		a.store = accounts.NewCache(db, cfg.Store.CacheTTL, o.now)
	}

	a.hasher, err = newHasher(cfg.Password, cfg.Password.HashConcurrency)
	if err != nil {
		return nil, err
	}

	metrics := handlers.NewMetrics()
	var closePlatform func() error
	a.client, a.sim, closePlatform, err = connectPlatform(cfg, a.logger, o.simConfig, func(co *apiclient.Options) {
		co.Hooks = apiclient.Hooks{OnAttempt: metrics.PlatformAttempt, OnRetry: metrics.PlatformRetry}
		if o.clientOptions != nil {
			o.clientOptions(co)
		}
	})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, closePlatform)

	hashKey, blockKey, generated, err := cfg.SessionKeys()
	if err != nil {
		return nil, err
	}
	if generated {
		a.logger.Warn("session keys were empty: generated new ones", "file", filepath.Join(cfg.DataDir(), config.SessionKeyFile),
			"note", "set session.hash_key and session.block_key when running more than one instance")
	}

	rg := cfg.Regulation
	regulator := accounts.NewRegulator(accounts.RegulationConfig{MaxRetries: rg.MaxRetries, MaxRetriesPerIP: rg.MaxRetriesPerIP,
		FindTime: rg.FindTime, BanTime: rg.BanTime}, o.now)
	launcher := launch.New(a.client, a.store, launch.Options{Logger: a.logger, Now: o.now, OnDone: metrics.Launch})
	a.echo, a.handlers = handlers.New(handlers.Deps{
		Store: a.store, Hasher: a.hasher, Regulator: regulator, TrustProxyHeaders: cfg.Server.TrustProxyHeaders, Launcher: launcher, Metrics: metrics, Logger: a.logger, Now: o.now,
		Sessions: handlers.SessionConfig{HashKey: hashKey, BlockKey: blockKey, MaxAge: cfg.Session.MaxAge,
			IdleTimeout: cfg.Session.IdleTimeout, Secure: cfg.Secure()},
		Platform: a.client, PlatformEmbedded: a.sim != nil, AuditRetention: cfg.Audit.Retention,
	})
	return a, nil
}

// newHasher builds the password hasher from the configuration.
func newHasher(pw config.Password, concurrency int) (*accounts.Hasher, error) {
	return accounts.NewHasher(accounts.HashParams{MemoryKiB: pw.Argon2MemoryKiB, Iterations: pw.Argon2Iterations, Parallelism: pw.Argon2Parallelism}, concurrency)
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
	copts := apiclient.Options{BaseURL: baseURL, Credentials: creds, Timeout: p.Timeout}
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
	}
	if tweak != nil {
		tweak(&sc)
	}
	sim, err := platformsim.New(sc)
	if err != nil {
		return nil, err
	}
	return platformsim.Start(sim, p.EmbeddedAddr)
}

// Close releases everything, last opened first.
func (a *app) Close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	a.closers = nil
	return errors.Join(errs...)
}

// publicURL is how browsers reach the bridge.
func publicURL(cfg config.Config, listenAddr string) string {
	if cfg.Server.PublicURL != "" {
		return strings.TrimRight(cfg.Server.PublicURL, "/")
	}
	host, port, _ := net.SplitHostPort(listenAddr)
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// demoLoginFile keeps the demo account's password in the data directory,
// so every start of the demo can print it again.
const demoLoginFile = "demo-login.txt"

const demoEmail = "demo@example.com"

// ensureDemoAccount creates an admin demo account when the store is empty
// (embedded demo only) and returns the line to print, or "".
func (a *app) ensureDemoAccount(ctx context.Context) (string, error) {
	if a.sim == nil {
		return "", nil
	}
	path := filepath.Join(a.cfg.DataDir(), demoLoginFile)
	n, err := a.store.CountAccounts(ctx)
	if err != nil {
		return "", err
	}
	if n > 0 {
		// Print the saved demo login again while that account still exists.
		data, err := os.ReadFile(path)
		if err != nil {
			return "", nil
		}
		line := strings.TrimSpace(string(data))
		if _, err := a.store.AccountByEmail(ctx, demoEmail); err != nil {
			return "", nil
		}
		return line, nil
	}
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	password := base64.RawURLEncoding.EncodeToString(b)
	hash, err := a.hasher.Hash(ctx, password)
	if err != nil {
		return "", err
	}
	if _, err := a.store.CreateAccount(ctx, accounts.NewAccount{Email: demoEmail, FirstName: "Demo", LastName: "User", PasswordHash: hash, Admin: true}); err != nil {
		return "", err
	}
	line := "demo login: " + demoEmail + " " + password
	if err := os.WriteFile(path, []byte(line+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("save demo login: %w", err)
	}
	return line, nil
}
