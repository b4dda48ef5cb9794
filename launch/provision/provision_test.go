package provision_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/launch/pacing"
	"github.com/ssobridge/ssobridge/launch/provision"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// fakeProvisioner answers by email: "c…" created, "e…" existed, "l…"
// linked already, "f…" failed; it records the priority it was called at.
type fakeProvisioner struct {
	mu         sync.Mutex
	background bool
	calls      atomic.Int32
	block      chan struct{} // when set, each call waits for it (or ctx)
}

func (p *fakeProvisioner) Provision(ctx context.Context, a store.Account) (launch.Provisioned, error) {
	p.calls.Add(1)
	pr, _ := pacing.PriorityOf(ctx)
	p.mu.Lock()
	p.background = pr.Background
	p.mu.Unlock()
	if p.block != nil {
		select {
		case <-p.block:
		case <-ctx.Done():
			return launch.Provisioned{}, ctx.Err()
		}
	}
	switch a.Email[0] {
	case 'c':
		return launch.Provisioned{PlatformUserID: "u-" + a.Email, Path: launch.PathCreated, PlatformCalls: 2}, nil
	case 'e':
		return launch.Provisioned{PlatformUserID: "u-" + a.Email, Path: launch.PathFound, PlatformCalls: 1}, nil
	case 'l':
		return launch.Provisioned{PlatformUserID: "u-" + a.Email, Path: launch.PathReturning}, nil
	}
	return launch.Provisioned{}, errors.New("the platform said no")
}

func accts(emails ...string) []store.Account {
	var out []store.Account
	for i, e := range emails {
		out = append(out, store.Account{ID: int64(i + 1), Email: e})
	}
	return out
}

// Every account gets its row with its outcome, at background priority.
func TestRunOutcomes(t *testing.T) {
	p := &fakeProvisioner{}
	var rows []provision.Row
	var tally provision.Tally
	provision.Run(t.Context(), p, accts("c1@x", "e1@x", "l1@x", "f1@x", "c2@x"), 3, func(r provision.Row) {
		rows = append(rows, r)
		tally.Add(r)
	})
	assert.Len(t, rows, 5)
	assert.Equal(t, provision.Tally{Done: 5, Created: 2, Existed: 1, Linked: 1, Failed: 1}, tally)
	for _, r := range rows {
		if r.Email == "f1@x" {
			assert.Equal(t, provision.Failed, r.Outcome)
			assert.Contains(t, r.Reason, "the platform said no")
		}
	}
	assert.True(t, p.background, "below users' launches")
}

// A run stopped midway reports only what it finished; the rest is for
// the next run (not "failed").
func TestRunStopped(t *testing.T) {
	p := &fakeProvisioner{block: make(chan struct{})}
	ctx, cancel := context.WithCancel(t.Context())
	var rows []provision.Row
	done := make(chan struct{})
	go func() {
		provision.Run(ctx, p, accts("c1@x", "c2@x", "c3@x", "c4@x"), 2, func(r provision.Row) { rows = append(rows, r) })
		close(done)
	}()
	require.Eventually(t, func() bool { return p.calls.Load() == 2 }, 5*time.Second, time.Millisecond)
	cancel()
	<-done
	assert.Empty(t, rows, "stopped, not failed")
	assert.Equal(t, int32(2), p.calls.Load(), "the others were not started")
}

// The console's job: one at a time across the instances, its progress
// and end in the store.
func TestJobs(t *testing.T) {
	s, err := sqlstore.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "jobs.db"), nil)
	require.NoError(t, err)
	defer s.Close()
	for i := range 5 {
		_, err := s.CreateAccount(t.Context(), store.NewAccount{Email: fmt.Sprintf("c%d@example.com", i), FirstName: "A", LastName: "B", PasswordHash: passhash.NoPassword})
		require.NoError(t, err)
	}
	p := &fakeProvisioner{block: make(chan struct{})}
	var limited atomic.Int64
	limited.Store(7) // 429s before the job: not its
	a := provision.NewJobs(s, p, slog.New(slog.DiscardHandler), nil, limited.Load)
	b := provision.NewJobs(s, p, slog.New(slog.DiscardHandler), nil, nil)
	defer b.Close()
	require.NoError(t, a.Start(t.Context(), "root@example.com"))
	assert.ErrorIs(t, b.Start(t.Context(), "other@example.com"), store.ErrJobRunning, "one at a time, across instances")
	j, err := b.Latest(t.Context())
	require.NoError(t, err)
	assert.Equal(t, store.JobRunning, j.State)
	assert.Equal(t, 5, j.Total)

	limited.Add(3) // met while it runs
	close(p.block)
	require.Eventually(t, func() bool {
		j, err = b.Latest(t.Context())
		return err == nil && j.State == store.JobDone
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, 5, j.Done)
	assert.Equal(t, 5, j.Created)
	assert.Equal(t, 3, j.RateLimited, "the 429s met while it ran")
	a.Close()
	require.NoError(t, b.Start(t.Context(), "other@example.com"), "after it ended, another may start")
}
