package app

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/launch/provision"
	"github.com/ssobridge/ssobridge/store"
)

type countingProvisioner struct{ n atomic.Int32 }

func (p *countingProvisioner) Provision(context.Context, store.Account) (launch.Provisioned, error) {
	p.n.Add(1)
	return launch.Provisioned{}, nil
}

// The queue of accounts provisioned ahead starts its workers at its first
// account only; closed, it takes none and starts nothing.
func TestAheadQueueStartsAtItsFirstAccount(t *testing.T) {
	var started atomic.Int32
	p := &countingProvisioner{}
	start := func() *provision.Queue { started.Add(1); return provision.NewQueue(p, 1, nil) }

	idle := &aheadQueue{start: start}
	assert.NoError(t, idle.Close())
	idle.Add(store.Account{ID: 1, Email: "a@school.example"})
	assert.Zero(t, started.Load(), "no account before Close: no workers, none after")

	used := &aheadQueue{start: start}
	used.Add(store.Account{ID: 2, Email: "b@school.example"})
	used.Add(store.Account{ID: 3, Email: "c@school.example"})
	assert.Equal(t, int32(1), started.Load(), "started once, at the first account")
	assert.NoError(t, used.Close())
}
