package commands

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/demo/platformsim"
)

// PlatformSimCmd is `ssobridge platform-sim`: the emulator standalone,
// until ctx ends.
func PlatformSimCmd(ctx context.Context, env cli.Env, args []string) error {
	cmd := cli.Command{Name: "platform-sim", Synopsis: "[--addr A] [flags]",
		Summary: "Run the platform emulator on its own (for developing against a running bridge); it prints its\ncredentials and runs until interrupted."}
	fs := env.Flags(cmd)
	addr := fs.String("addr", "127.0.0.1:9090", "listen address")
	key := fs.String("api-key", "", "admin credential key (default: random)")
	secret := fs.String("api-secret", "", "admin credential secret (default: random)")
	mkey := fs.String("member-api-key", "", "member (non-admin) credential key (default: random)")
	msecret := fs.String("member-api-secret", "", "member credential secret (default: random)")
	rateLimit := fs.Float64("rate-limit", 0, "requests per second per credential (0 = off)")
	ttl := fs.Duration("token-ttl", platformsim.DefaultTokenTTL, "login token lifetime")
	skew := fs.Duration("skew", platformsim.DefaultSkew, "accepted distance of a request's Date from the platform clock")
	offset := fs.Duration("clock-offset", 0, "move the platform clock (e.g. 10m) to try clock-skew handling")
	schemeHMAC := fs.String("scheme-hmac", platformsim.DefaultSchemeHMAC, "HMAC scheme name")
	schemeSimple := fs.String("scheme-simple", platformsim.DefaultSchemeSimple, "simple scheme name")
	control := fs.Bool("control", false, "expose the JSON control endpoint under /_sim/ (faults, latency, clock, call counts)")
	latency := fs.Duration("latency", 0, "delay every answer by this much (e.g. 20ms, a platform far away)")
	racy := fs.Bool("racy-create", false, "create users as a platform whose duplicate check races: look up, pause 50 ms, insert without a unique check")
	shapesFile := fs.String("shapes", "", "answer in these shapes: a YAML file of the platform.shapes keys (at its top level or under platform.shapes); docs/platform-shapes.md")
	if err := env.Parse(fs, cmd, args); err != nil {
		return err
	}
	if *rateLimit < 0 || *ttl <= 0 || *skew <= 0 || *latency < 0 || *latency > time.Minute {
		return cli.UsageError("platform-sim: --rate-limit must be >= 0, --token-ttl and --skew > 0, --latency 0..1m")
	}
	admin, member := platformsim.NewCredential(true), platformsim.NewCredential(false)
	for _, kv := range []struct{ dst, src *string }{{&admin.Key, key}, {&admin.Secret, secret}, {&member.Key, mkey}, {&member.Secret, msecret}} {
		if *kv.src != "" {
			*kv.dst = *kv.src
		}
	}
	var shapes platformsim.Shapes
	if *shapesFile != "" {
		var err error
		if shapes, err = platformsim.LoadShapes(*shapesFile); err != nil {
			return cli.UsageError("platform-sim: --shapes: " + err.Error())
		}
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sim, err := platformsim.New(platformsim.Config{Credentials: []platformsim.Credential{admin, member}, RateLimit: *rateLimit,
		TokenTTL: *ttl, Skew: *skew, SchemeHMAC: *schemeHMAC, SchemeSimple: *schemeSimple, Control: *control, RacyCreate: *racy, Logger: logger,
		Shapes: shapes})
	if err != nil {
		return err
	}
	sim.SetClockOffset(*offset)
	sim.SetLatency("", *latency)
	run, err := platformsim.Start(sim, *addr)
	if err != nil {
		return err
	}
	defer run.Close()
	// The credentials are printed once, here, for the developer starting it.
	fmt.Fprintf(env.Stdout, "platform emulator at %s (API under %s/api/5)\n", run.URL, run.URL)
	fmt.Fprintf(env.Stdout, "admin credential:  key=%s secret=%s\n", admin.Key, admin.Secret)
	fmt.Fprintf(env.Stdout, "member credential: key=%s secret=%s (not an Instance admin: 403)\n", member.Key, member.Secret)
	<-ctx.Done()
	return nil
}
