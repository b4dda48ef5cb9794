package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/internal/logbuf"
	"github.com/ssobridge/ssobridge/lti"
	"github.com/ssobridge/ssobridge/store"
)

// LTIKeyName is where a generated LTI tool key is kept in the store.
const LTIKeyName = "lti-tool-key"

// LTIToolKey is the LTI tool's key: lti.key_file, else the key kept in
// the store (generated and kept by the first instance to start, so every
// instance publishes the same). source says which.
func LTIToolKey(ctx context.Context, cfg config.Config, st interface {
	KeptValue(ctx context.Context, name string) (string, error)
	KeepValue(ctx context.Context, name, value string) (string, error)
}) (key lti.ToolKey, source string, err error) {
	if f := cfg.LTI.KeyFile; f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			return lti.ToolKey{}, "", fmt.Errorf("lti.key_file: %w", err)
		}
		k, err := lti.ParseToolKey(data)
		if err != nil {
			return lti.ToolKey{}, "", fmt.Errorf("lti.key_file %s: %w", f, err)
		}
		return k, "lti.key_file " + f, nil
	}
	// A key is made only while the store keeps none: RSA key generation
	// would take a noticeable moment of every start.
	kept, err := st.KeptValue(ctx, LTIKeyName)
	if errors.Is(err, store.ErrNotFound) {
		var fresh []byte
		if fresh, err = lti.GenerateKeyPEM(); err != nil {
			return lti.ToolKey{}, "", err
		}
		kept, err = st.KeepValue(ctx, LTIKeyName, string(fresh))
	}
	if err != nil {
		return lti.ToolKey{}, "", fmt.Errorf("the LTI tool key in the store: %w", err)
	}
	k, err := lti.ParseToolKey([]byte(kept))
	if err != nil {
		return lti.ToolKey{}, "", fmt.Errorf("the LTI tool key kept in the store: %w", err)
	}
	return k, "generated once, kept in the store", nil
}

// LTIPlatforms are the configured platforms in lti's terms.
func LTIPlatforms(cfg config.Config) []lti.Platform {
	var out []lti.Platform
	for _, p := range cfg.LTI.Platforms {
		var origins []string
		for _, o := range p.FrameOrigins.List() {
			origins = append(origins, strings.TrimRight(o, "/"))
		}
		out = append(out, lti.Platform{Name: p.Name, Issuer: p.Issuer, ClientID: p.ClientID, DeploymentIDs: p.DeploymentIDs.List(),
			AuthURL: p.AuthURL, JWKSURL: p.JWKSURL, AdminRoles: p.AdminRoles.List(), CreateAccounts: p.CreateAccounts, FrameOrigins: origins})
	}
	return out
}

// ltiTool builds the LTI tool when lti.platforms lists any (nil, nil
// otherwise) with its public key set, and starts reading the platforms'
// key sets: the bridge starts even while one is unreadable.
func (a *App) ltiTool(ctx context.Context, o Options, st store.Store) (*lti.Tool, []byte, error) {
	if !a.cfg.LTI.Enabled() {
		return nil, nil, nil
	}
	key, source, err := LTIToolKey(ctx, a.cfg, st)
	if err != nil {
		return nil, nil, err
	}
	jwks, err := json.Marshal(key.JWKS())
	if err != nil {
		return nil, nil, err
	}
	hc := o.LTIHTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	retry := cmp.Or(o.LTIRetryEvery, 15*time.Second)
	tool := lti.New(lti.Config{Platforms: LTIPlatforms(a.cfg), HTTPClient: hc, UseOnce: st.UseOnce, Now: o.Now, RetryEvery: min(retry, 5*time.Second)})
	a.logger.Info("LTI 1.3 tool", "platforms", len(a.cfg.LTI.Platforms), "key_id", key.KeyID(), "key", source)
	a.watchLTI(tool, retry, time.Hour)
	return tool, jwks, nil
}

// watchLTI reads the platforms' key sets now and again (every retry while
// one is unreadable, every while otherwise: a platform's new key is found
// before a launch needs it), logging once when reads start failing and
// once when they work again.
func (a *App) watchLTI(tool *lti.Tool, retry, every time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go logbuf.FlushingPanics(a.flushLog, func() {
		defer close(done)
		var failing error
		for {
			rctx, rcancel := context.WithTimeout(ctx, 15*time.Second)
			err := tool.Refresh(rctx)
			rcancel()
			switch {
			case ctx.Err() != nil:
				return
			case err != nil && (failing == nil || failing.Error() != err.Error()):
				a.logger.Error("LTI: a platform's key set is unreadable: its launches get the unavailable page (or use the keys read before) until it is read", "err", err)
			case err == nil && failing != nil:
				a.logger.Info("LTI: every platform's key set read")
			}
			failing = err
			wait := every
			if err != nil {
				wait = retry
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	})
	a.closers = append(a.closers, func() error { cancel(); <-done; return nil })
}
