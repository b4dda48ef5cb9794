package sqlstore

import (
	"context"
	"sync"
	"time"
)

// keyLocks is a mutex per key, held by one goroutine of this process at a
// time. LockProvisioning takes it before the store-wide lock, so launches
// in one process that wait for the same email wait here rather than each
// holding a database connection (a pool of a few would run dry).
type keyLocks struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	ch      chan struct{} // holds a token while locked
	waiters int           // holders and waiters; the entry goes when it is 0
}

// lock waits until key is free or ctx ends; unlock releases it.
func (k *keyLocks) lock(ctx context.Context, key string) (unlock func(), err error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyLock{ch: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.waiters++
	k.mu.Unlock()
	release := func() {
		k.mu.Lock()
		if l.waiters--; l.waiters == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
	return onlyOnce(func() {
		<-l.ch
		release()
	}), nil
}

// onlyOnce makes an unlock safe to call twice: a second call must not
// release a lock that another holder has taken since.
func onlyOnce(f func()) func() {
	var once sync.Once
	return func() { once.Do(f) }
}

// provisioningPoll is how often a process tries again for a provisioning
// lock that another process holds.
const provisioningPoll = 20 * time.Millisecond
