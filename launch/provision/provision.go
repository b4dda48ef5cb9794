// Package provision links accounts to their platform users ahead of their
// first launch (the night before a first morning of term), so that each
// launch is then a single platform call. It runs the launch's own
// check-then-create under the store's provisioning lease, at background
// priority in the platform budget (users' launches go first), several
// accounts at a time. A run that is stopped and started again does not
// repeat what it did: linked accounts are skipped, and a platform user
// created just before the stop is found, not created again.
package provision

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/launch/pacing"
	"github.com/ssobridge/ssobridge/store"
)

// Provisioner links one account (launch.Service).
type Provisioner interface {
	Provision(ctx context.Context, acct store.Account) (launch.Provisioned, error)
}

// Outcome is what provisioning did for one account.
type Outcome string

// Outcomes.
const (
	Created Outcome = "created"        // the platform user was created, and linked
	Existed Outcome = "existed"        // the platform user existed, and is linked now
	Linked  Outcome = "already linked" // nothing to do
	Failed  Outcome = "failed"
)

// Row is one account's result.
type Row struct {
	Email          string
	Outcome        Outcome
	PlatformUserID string
	Reason         string // Failed: why (never a secret)
	Calls          int    // platform calls it made
}

// Tally counts a run's rows.
type Tally struct {
	Total, Done                      int
	Created, Existed, Linked, Failed int
}

// Add counts r.
func (t *Tally) Add(r Row) {
	t.Done++
	switch r.Outcome {
	case Created:
		t.Created++
	case Existed:
		t.Existed++
	case Linked:
		t.Linked++
	default:
		t.Failed++
	}
}

// DefaultWorkers is how many accounts are provisioned at a time: enough to
// keep the budget's share busy across the platform's latency; the budget,
// not this, sets the pace.
const DefaultWorkers = 8

// Run provisions accts, workers at a time, and calls onRow (from one
// goroutine at a time) with each account's result. It stops early when
// ctx ends: the accounts not reached get no row.
func Run(ctx context.Context, p Provisioner, accts []store.Account, workers int, onRow func(Row)) {
	if workers <= 0 {
		workers = DefaultWorkers
	}
	// Below every user's launch in the platform budget's line.
	ctx = pacing.WithPriority(ctx, pacing.Priority{Background: true, Since: time.Now()})
	next := make(chan store.Account)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(workers, max(1, len(accts))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := range next {
				r := One(ctx, p, a)
				if ctx.Err() != nil && r.Outcome == Failed {
					return // stopped, not failed: it is done next run
				}
				mu.Lock()
				onRow(r)
				mu.Unlock()
			}
		}()
	}
feed:
	for _, a := range accts {
		select {
		case next <- a:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
}

// One provisions one account.
func One(ctx context.Context, p Provisioner, a store.Account) Row {
	res, err := p.Provision(ctx, a)
	r := Row{Email: a.Email, PlatformUserID: res.PlatformUserID, Calls: res.PlatformCalls}
	switch {
	case err != nil:
		r.Outcome, r.Reason = Failed, reason(err)
	case res.Path == launch.PathReturning:
		r.Outcome = Linked
	case res.Path == launch.PathCreated:
		r.Outcome = Created
	default:
		r.Outcome = Existed
	}
	return r
}

// reason says why an account failed, as the report shows it: the
// outcome class and the error.
func reason(err error) string {
	if errors.Is(err, launch.ErrAccountDisabled) {
		return "the account is disabled"
	}
	return launch.Classify(err) + ": " + err.Error()
}
