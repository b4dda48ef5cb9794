package storecache

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssobridge/ssobridge/store"
)

// Cache is a Store that keeps the two reads every request and launch make
// (an account by id for the session check, the account's link) in memory:
// those two queries were a seventh of the process's CPU under load.
//
// Within the process it is exact: every write through the Cache drops what
// it changes before returning, and a read that raced with a write is not
// kept. Writes by other processes sharing the database (a second instance,
// `ssobridge user add`, a hand edit) are seen within ttl, and on PostgreSQL
// as soon as their change notice arrives (ChangeNotifier). Only a link's
// LastLaunchAt can lag inside the process, by one launch for at most ttl,
// when a launch's stamp lands while the same link is being read.
//
// The Cache embeds the store it wraps and overrides only what it caches
// and the writes that change it; everything else passes through.
// TestEveryStoreMethodIsClassified lists each passing method with the
// reason it may, so a new write method cannot slip past the invalidation
// unnoticed.
type Cache struct {
	store.Store // the store in front of which it sits
	ttl         time.Duration
	now         func() time.Time

	// caughtUp is when (unix ns) every change committed before it had been
	// applied here, as the store's ChangeNotifier last said; 0: never.
	caughtUp atomic.Int64
	notified bool // the store is a ChangeNotifier

	mu        sync.Mutex
	gen       uint64 // raised by every invalidation: fills that began before it are dropped
	accounts  map[int64]cached[store.Account]
	links     map[int64]cached[store.Link]
	sessions  map[string]cached[store.Session]
	lastSweep time.Time
}

type cached[T any] struct {
	v  T
	at time.Time // when the read that filled it began
}

// ChangeNotifier is a store that tells of changes other processes commit
// (Postgres, through LISTEN/NOTIFY): see Postgres.OnChange for the notices
// and what caughtUp promises.
type ChangeNotifier interface {
	OnChange(changed func(change string), caughtUp func(time.Time))
}

// changeNotifier finds the ChangeNotifier in s, or under the stores it
// wraps (a Guard).
func changeNotifier(s store.Store) (ChangeNotifier, bool) {
	for {
		if n, ok := s.(ChangeNotifier); ok {
			return n, true
		}
		u, ok := s.(interface{ Unwrap() store.Store })
		if !ok {
			return nil, false
		}
		s = u.Unwrap()
	}
}

// notifiedHold bounds how long an entry lives while change notices keep it
// exact (memory: the maps hold what was read in this time).
const notifiedHold = time.Minute

// New wraps inner; entries live for ttl (> 0). now is the clock (nil:
// time.Now). When inner is a ChangeNotifier, a change committed by any
// instance drops its entries at once, and an entry is served past ttl (up
// to notifiedHold) only while the notices are known to be caught up to
// within ttl: whatever happens to the notices, nothing is served more than
// ttl after another instance changed it. On PostgreSQL that took the cache
// refills, most of the database's work per returning launch, down from
// three reads per active account per ttl.
func New(inner store.Store, ttl time.Duration, now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	c := &Cache{Store: inner, ttl: ttl, now: now, accounts: map[int64]cached[store.Account]{}, links: map[int64]cached[store.Link]{},
		sessions: map[string]cached[store.Session]{}, lastSweep: now()}
	if n, ok := changeNotifier(inner); ok {
		c.notified = true
		n.OnChange(c.changed, func(t time.Time) { c.caughtUp.Store(t.UnixNano()) })
	}
	return c
}

// fresh reports whether an entry filled at `at` may be served at now.
func (c *Cache) fresh(at, now time.Time) bool {
	age := now.Sub(at)
	if age < c.ttl {
		return true
	}
	// Every change committed before caughtUp has dropped its entries, so
	// what is still here is at most now-caughtUp out of date.
	return c.notified && age < notifiedHold && now.Sub(time.Unix(0, c.caughtUp.Load())) < c.ttl
}

// hold is how long an entry may stay in the maps.
func (c *Cache) hold() time.Duration {
	if c.notified {
		return max(c.ttl, notifiedHold)
	}
	return c.ttl
}

// changed drops what a change notice names ("*": everything).
func (c *Cache) changed(change string) {
	kind, key, _ := strings.Cut(change, ":")
	id, _ := strconv.ParseInt(key, 10, 64)
	switch kind {
	case "a":
		_ = c.dropAccountAfterWrite(id, nil)
	case "l":
		_ = dropAfterWrite(c, c.links, id, nil)
	case "s":
		_ = dropAfterWrite(c, c.sessions, key, nil)
	default:
		c.mu.Lock()
		c.gen++
		clear(c.accounts)
		clear(c.links)
		clear(c.sessions)
		c.mu.Unlock()
	}
}

// lookup serves id from m while fresh (unless past is set), else loads it
// and keeps it unless an invalidation happened meanwhile. Errors
// (ErrNotFound included) are not kept.
func lookup[K comparable, T any](c *Cache, m map[K]cached[T], id K, past bool, load func() (T, error)) (T, error) {
	now := c.now()
	c.mu.Lock()
	if e, ok := m[id]; ok && !past && c.fresh(e.at, now) {
		c.mu.Unlock()
		return e.v, nil
	}
	gen := c.gen
	c.mu.Unlock()
	v, err := load()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if c.gen == gen {
		m[id] = cached[T]{v: v, at: now}
		c.sweepLocked(now)
	}
	c.mu.Unlock()
	return v, nil
}

// sweepLocked drops expired entries once per hold, so the maps hold only
// what was read in the last hold.
func (c *Cache) sweepLocked(now time.Time) {
	hold := c.hold()
	if now.Sub(c.lastSweep) < hold {
		return
	}
	c.lastSweep = now
	sweep(c.accounts, now, hold)
	sweep(c.links, now, hold)
	sweep(c.sessions, now, hold)
}

func sweep[K comparable, T any](m map[K]cached[T], now time.Time, hold time.Duration) {
	for id, e := range m {
		if now.Sub(e.at) >= hold {
			delete(m, id)
		}
	}
}

// dropAfterWrite drops id from m once its write has returned (whatever the
// outcome), so that no fill begun before it is kept, and passes the write's
// error on.
func dropAfterWrite[K comparable, T any](c *Cache, m map[K]cached[T], id K, err error) error {
	c.mu.Lock()
	c.gen++
	delete(m, id)
	c.mu.Unlock()
	return err
}

// AccountByID serves the account from memory while fresh.
func (c *Cache) AccountByID(ctx context.Context, id int64) (store.Account, error) {
	return lookup(c, c.accounts, id, false, func() (store.Account, error) { return c.Store.AccountByID(ctx, id) })
}

// FreshAccountByID reads past the cache (another instance may have changed
// the account within the ttl) and keeps what it read.
func (c *Cache) FreshAccountByID(ctx context.Context, id int64) (store.Account, error) {
	return lookup(c, c.accounts, id, true, func() (store.Account, error) { return c.Store.AccountByID(ctx, id) })
}

// LinkFor serves the link from memory while fresh.
func (c *Cache) LinkFor(ctx context.Context, accountID int64) (store.Link, error) {
	return lookup(c, c.links, accountID, false, func() (store.Link, error) { return c.Store.LinkFor(ctx, accountID) })
}

// dropAccountAfterWrite drops the account and its sessions once a write
// that ends them has returned.
func (c *Cache) dropAccountAfterWrite(id int64, err error) error {
	c.mu.Lock()
	for sid, e := range c.sessions {
		if e.v.AccountID == id {
			delete(c.sessions, sid)
		}
	}
	c.mu.Unlock()
	return dropAfterWrite(c, c.accounts, id, err)
}

// DeleteAccount writes through and drops the account and its sessions.
func (c *Cache) DeleteAccount(ctx context.Context, id int64) error {
	return c.dropAccountAfterWrite(id, c.Store.DeleteAccount(ctx, id))
}

// SetDisabled writes through and drops the account and its sessions.
func (c *Cache) SetDisabled(ctx context.Context, id int64, disabled bool) error {
	return c.dropAccountAfterWrite(id, c.Store.SetDisabled(ctx, id, disabled))
}

// UpdateAccount writes through and drops the account and its sessions
// (a disabled account's sessions end).
func (c *Cache) UpdateAccount(ctx context.Context, id int64, u store.AccountUpdate) (store.Account, error) {
	a, err := c.Store.UpdateAccount(ctx, id, u)
	return a, c.dropAccountAfterWrite(id, err)
}

// SetAdmin writes through and drops the account.
func (c *Cache) SetAdmin(ctx context.Context, id int64, admin bool) error {
	return dropAfterWrite(c, c.accounts, id, c.Store.SetAdmin(ctx, id, admin))
}

// FollowAdminGroup writes through and drops the account (its admin role
// may have changed).
func (c *Cache) FollowAdminGroup(ctx context.Context, id int64, group string) (bool, error) {
	changed, err := c.Store.FollowAdminGroup(ctx, id, group)
	return changed, dropAfterWrite(c, c.accounts, id, err)
}

// SetPasswordHash writes through and drops the account and its sessions.
func (c *Cache) SetPasswordHash(ctx context.Context, id int64, hash string) error {
	return c.dropAccountAfterWrite(id, c.Store.SetPasswordHash(ctx, id, hash))
}

// EndSessions writes through and drops the account and its sessions, so
// they end on their next request.
func (c *Cache) EndSessions(ctx context.Context, id int64) error {
	return c.dropAccountAfterWrite(id, c.Store.EndSessions(ctx, id))
}

// SessionByID serves the session from memory while fresh: every request
// reads it.
func (c *Cache) SessionByID(ctx context.Context, id string) (store.Session, error) {
	return lookup(c, c.sessions, id, false, func() (store.Session, error) { return c.Store.SessionByID(ctx, id) })
}

// EndSession writes through and drops the session.
func (c *Cache) EndSession(ctx context.Context, accountID int64, id string) error {
	return dropAfterWrite(c, c.sessions, id, c.Store.EndSession(ctx, accountID, id))
}

// PruneSessions writes through and, when it deleted any, drops every
// cached session (the pruned ones are not known here).
func (c *Cache) PruneSessions(ctx context.Context, before time.Time, after string, limit int) (int64, string, error) {
	n, next, err := c.Store.PruneSessions(ctx, before, after, limit)
	if n > 0 || err != nil {
		c.mu.Lock()
		c.gen++
		clear(c.sessions)
		c.mu.Unlock()
	}
	return n, next, err
}

// SaveLink writes through and drops the link.
func (c *Cache) SaveLink(ctx context.Context, accountID int64, platformUserID string) error {
	return dropAfterWrite(c, c.links, accountID, c.Store.SaveLink(ctx, accountID, platformUserID))
}

// DeleteLink writes through and drops the link.
func (c *Cache) DeleteLink(ctx context.Context, accountID int64, platformUserID string) error {
	return dropAfterWrite(c, c.links, accountID, c.Store.DeleteLink(ctx, accountID, platformUserID))
}

// RecordLaunch writes through and moves a cached link's LastLaunchAt to the
// launch's time, as the store does, instead of dropping the link that the
// next launch needs.
func (c *Cache) RecordLaunch(ctx context.Context, e store.Event) error {
	if e.At.IsZero() {
		e.At = c.now()
	}
	if err := c.Store.RecordLaunch(ctx, e); err != nil {
		return err
	}
	if e.Outcome == "ok" && e.AccountID != 0 {
		at := time.UnixMilli(e.At.UnixMilli()).UTC() // as the store keeps it
		c.mu.Lock()
		if l, ok := c.links[e.AccountID]; ok && store.LaunchStampDue(l.v.LastLaunchAt, at) {
			l.v.LastLaunchAt = at
			c.links[e.AccountID] = l
		}
		c.mu.Unlock()
	}
	return nil
}

// TouchSession writes through and moves a cached session's last-seen time
// too: the session's refresh is decided from it (at most one write a
// minute), so it must not see the time before its own write. Nothing is
// invalidated: a fill racing the write keeps an older time at worst, which
// costs one more touch, not a wrong answer.
func (c *Cache) TouchSession(ctx context.Context, id string, at, seenBefore time.Time) (bool, error) {
	wrote, err := c.Store.TouchSession(ctx, id, at, seenBefore)
	if err != nil {
		return false, err
	}
	// Written here or by another request a moment ago: either way the
	// stored time is recent, and the copy must stop asking.
	c.mu.Lock()
	if e, ok := c.sessions[id]; ok {
		e.v.LastSeenAt = at
		c.sessions[id] = e
	}
	c.mu.Unlock()
	return wrote, nil
}

var _ store.Store = (*Cache)(nil)
