package app

import (
	"sync"

	"github.com/ssobridge/ssobridge/launch/provision"
	"github.com/ssobridge/ssobridge/store"
)

// aheadQueue is the background queue of accounts whose platform users are
// made ahead of their first launch (SCIM's new accounts), started at its
// first account: an instance whose modules queue none starts no workers.
type aheadQueue struct {
	start  func() *provision.Queue
	mu     sync.Mutex
	q      *provision.Queue
	closed bool
}

// Add queues acct; after Close it is dropped, as the queue drops what
// comes once it is closed.
func (a *aheadQueue) Add(acct store.Account) {
	a.mu.Lock()
	if a.q == nil && !a.closed {
		a.q = a.start()
	}
	q := a.q
	a.mu.Unlock()
	if q != nil {
		q.Add(acct)
	}
}

// Close stops the workers, if they started.
func (a *aheadQueue) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	if a.q != nil {
		a.q.Close()
	}
	return nil
}
