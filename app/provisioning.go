package app

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/launch/pacing"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// Provisioning is what `ssobridge provision` runs on: the store, the
// platform client paced as a background caller of the shared budget (it
// takes a small share while users wait on any instance), and the launch
// service's provisioning.
type Provisioning struct {
	Store   store.Store
	Service *launch.Service
	Budget  *pacing.Budget

	rateLimited atomic.Int64
	closers     []func() error
}

// RateLimited is how many 429s the platform answered so far.
func (p *Provisioning) RateLimited() int64 { return p.rateLimited.Load() }

// NewProvisioning opens what a provisioning run needs; Close releases it.
func NewProvisioning(ctx context.Context, cfg config.Config, logOut io.Writer) (*Provisioning, error) {
	logger := newLogger(cfg.Log, logOut)
	p := &Provisioning{}
	db, err := OpenStore(ctx, cfg, nil)
	if err != nil {
		return nil, err
	}
	guard := sqlstore.NewGuard(db, cfg.Store.Timeout, logger, nil)
	p.Store = guard
	p.closers = append(p.closers, guard.Close)
	p.Budget = pacing.New(pacing.Config{Rate: cfg.Platform.RateLimit, Burst: cfg.Platform.RateBurst, Background: true}, guard)
	bctx, stop := context.WithCancel(context.Background())
	go p.Budget.Run(bctx)
	p.closers = append(p.closers, func() error { stop(); return nil })
	client, _, closePlatform, err := connectPlatform(cfg, logger, nil, func(o *apiclient.Options) {
		o.Pacer = p.Budget
		o.Hooks.OnAttempt = func(_ string, status int, _ time.Duration) {
			if status == 429 {
				p.rateLimited.Add(1)
			}
		}
	})
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("platform: %w", err)
	}
	p.closers = append(p.closers, closePlatform)
	p.Service = launch.New(client, p.Store, launch.Options{Logger: logger})
	return p, nil
}

// Close releases everything, last opened first.
func (p *Provisioning) Close() error {
	var first error
	for i := len(p.closers) - 1; i >= 0; i-- {
		if err := p.closers[i](); err != nil && first == nil {
			first = err
		}
	}
	p.closers = nil
	return first
}
