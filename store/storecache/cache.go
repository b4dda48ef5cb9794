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
// Every Store method is written out rather than embedded, so a new write
// method cannot slip past the invalidation unnoticed.
type Cache struct {
	inner store.Store
	ttl   time.Duration
	now   func() time.Time

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

// NewCache wraps inner; entries live for ttl (> 0). now is the clock (nil:
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
	c := &Cache{inner: inner, ttl: ttl, now: now, accounts: map[int64]cached[store.Account]{}, links: map[int64]cached[store.Link]{},
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
	return lookup(c, c.accounts, id, false, func() (store.Account, error) { return c.inner.AccountByID(ctx, id) })
}

// FreshAccountByID reads past the cache (another instance may have changed
// the account within the ttl) and keeps what it read.
func (c *Cache) FreshAccountByID(ctx context.Context, id int64) (store.Account, error) {
	return lookup(c, c.accounts, id, true, func() (store.Account, error) { return c.inner.AccountByID(ctx, id) })
}

// LinkFor serves the link from memory while fresh.
func (c *Cache) LinkFor(ctx context.Context, accountID int64) (store.Link, error) {
	return lookup(c, c.links, accountID, false, func() (store.Link, error) { return c.inner.LinkFor(ctx, accountID) })
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
	return c.dropAccountAfterWrite(id, c.inner.DeleteAccount(ctx, id))
}

// SetDisabled writes through and drops the account and its sessions.
func (c *Cache) SetDisabled(ctx context.Context, id int64, disabled bool) error {
	return c.dropAccountAfterWrite(id, c.inner.SetDisabled(ctx, id, disabled))
}

// SetAdmin writes through and drops the account.
func (c *Cache) SetAdmin(ctx context.Context, id int64, admin bool) error {
	return dropAfterWrite(c, c.accounts, id, c.inner.SetAdmin(ctx, id, admin))
}

// SetPasswordHash writes through and drops the account and its sessions.
func (c *Cache) SetPasswordHash(ctx context.Context, id int64, hash string) error {
	return c.dropAccountAfterWrite(id, c.inner.SetPasswordHash(ctx, id, hash))
}

// EndSessions writes through and drops the account and its sessions, so
// they end on their next request.
func (c *Cache) EndSessions(ctx context.Context, id int64) error {
	return c.dropAccountAfterWrite(id, c.inner.EndSessions(ctx, id))
}

// SessionByID serves the session from memory while fresh: every request
// reads it.
func (c *Cache) SessionByID(ctx context.Context, id string) (store.Session, error) {
	return lookup(c, c.sessions, id, false, func() (store.Session, error) { return c.inner.SessionByID(ctx, id) })
}

// EndSession writes through and drops the session.
func (c *Cache) EndSession(ctx context.Context, accountID int64, id string) error {
	return dropAfterWrite(c, c.sessions, id, c.inner.EndSession(ctx, accountID, id))
}

// PruneSessions writes through and drops every cached session (the pruned
// ones are not known here).
func (c *Cache) PruneSessions(ctx context.Context, before time.Time, limit int) (int64, error) {
	n, err := c.inner.PruneSessions(ctx, before, limit)
	c.mu.Lock()
	c.gen++
	clear(c.sessions)
	c.mu.Unlock()
	return n, err
}

// SaveLink writes through and drops the link.
func (c *Cache) SaveLink(ctx context.Context, accountID int64, platformUserID string) error {
	return dropAfterWrite(c, c.links, accountID, c.inner.SaveLink(ctx, accountID, platformUserID))
}

// DeleteLink writes through and drops the link.
func (c *Cache) DeleteLink(ctx context.Context, accountID int64, platformUserID string) error {
	return dropAfterWrite(c, c.links, accountID, c.inner.DeleteLink(ctx, accountID, platformUserID))
}

// RecordLaunch writes through and moves a cached link's LastLaunchAt to the
// launch's time, as the store does, instead of dropping the link that the
// next launch needs.
func (c *Cache) RecordLaunch(ctx context.Context, e store.Event) error {
	if e.At.IsZero() {
		e.At = c.now()
	}
	if err := c.inner.RecordLaunch(ctx, e); err != nil {
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

// The rest passes through: new accounts are not cached yet, and sign-in
// (AccountByEmail) always reads the stored password hash.

// CreateAccount passes through.
func (c *Cache) CreateAccount(ctx context.Context, n store.NewAccount) (store.Account, error) {
	return c.inner.CreateAccount(ctx, n)
}

// CreateAccounts passes through.
func (c *Cache) CreateAccounts(ctx context.Context, ns []store.NewAccount) error {
	return c.inner.CreateAccounts(ctx, ns)
}

// AccountByEmail passes through.
func (c *Cache) AccountByEmail(ctx context.Context, email string) (store.Account, error) {
	return c.inner.AccountByEmail(ctx, email)
}

// ListAccounts passes through.
func (c *Cache) ListAccounts(ctx context.Context, f store.AccountFilter) ([]store.Account, int, error) {
	return c.inner.ListAccounts(ctx, f)
}

// CountAccounts passes through.
func (c *Cache) CountAccounts(ctx context.Context) (int, error) { return c.inner.CountAccounts(ctx) }

// CreateSession passes through: a new session is read from the store the
// first time, on this instance as on any other.
func (c *Cache) CreateSession(ctx context.Context, s store.Session) error {
	return c.inner.CreateSession(ctx, s)
}

// TouchSession writes through and moves a cached session's last-seen time
// too: the session's refresh is decided from it (at most one write a
// minute), so it must not see the time before its own write. Nothing is
// invalidated: a fill racing the write keeps an older time at worst, which
// costs one more touch, not a wrong answer.
func (c *Cache) TouchSession(ctx context.Context, id string, at time.Time) error {
	if err := c.inner.TouchSession(ctx, id, at); err != nil {
		return err
	}
	c.mu.Lock()
	if e, ok := c.sessions[id]; ok {
		e.v.LastSeenAt = at
		c.sessions[id] = e
	}
	c.mu.Unlock()
	return nil
}

// ListSessions passes through (the console shows the store's truth).
func (c *Cache) ListSessions(ctx context.Context, accountID int64) ([]store.Session, error) {
	return c.inner.ListSessions(ctx, accountID)
}

// UseOnce passes through: single-use ids are never served from memory.
func (c *Cache) UseOnce(ctx context.Context, kind, id string, until time.Time) error {
	return c.inner.UseOnce(ctx, kind, id, until)
}

// PruneUsedIDs passes through.
func (c *Cache) PruneUsedIDs(ctx context.Context, before time.Time) (int64, error) {
	return c.inner.PruneUsedIDs(ctx, before)
}

// CreatePasswordLink passes through.
func (c *Cache) CreatePasswordLink(ctx context.Context, accountID int64, id string, expires time.Time) error {
	return c.inner.CreatePasswordLink(ctx, accountID, id, expires)
}

// PasswordLink passes through.
func (c *Cache) PasswordLink(ctx context.Context, id string, now time.Time) (int64, error) {
	return c.inner.PasswordLink(ctx, id, now)
}

// TakePasswordLink passes through.
func (c *Cache) TakePasswordLink(ctx context.Context, id string, now time.Time) (int64, error) {
	return c.inner.TakePasswordLink(ctx, id, now)
}

// LockProvisioning passes through: the lock is the store's.
func (c *Cache) LockProvisioning(ctx context.Context, email string) (func(), error) {
	return c.inner.LockProvisioning(ctx, email)
}

// ListLinks passes through.
func (c *Cache) ListLinks(ctx context.Context, platformUserIDs []string) (map[string]int64, error) {
	return c.inner.ListLinks(ctx, platformUserIDs)
}

// Record passes through.
func (c *Cache) Record(ctx context.Context, e store.Event) error { return c.inner.Record(ctx, e) }

// ListEvents passes through.
func (c *Cache) ListEvents(ctx context.Context, f store.AuditFilter) ([]store.Event, int, error) {
	return c.inner.ListEvents(ctx, f)
}

// PruneEvents passes through.
func (c *Cache) PruneEvents(ctx context.Context, before time.Time, limit int) (int64, error) {
	return c.inner.PruneEvents(ctx, before, limit)
}

// AdmitSignIn and the other regulation methods pass through: regulation
// must never be served from memory.
func (c *Cache) AdmitSignIn(ctx context.Context, a store.SignIn, r store.RegulationConfig) (int64, time.Time, error) {
	return c.inner.AdmitSignIn(ctx, a, r)
}

// FailSignIn passes through.
func (c *Cache) FailSignIn(ctx context.Context, id int64, r store.RegulationConfig, now time.Time) (bool, error) {
	return c.inner.FailSignIn(ctx, id, r, now)
}

// SucceedSignIn passes through.
func (c *Cache) SucceedSignIn(ctx context.Context, id int64) error {
	return c.inner.SucceedSignIn(ctx, id)
}

// ListBans passes through.
func (c *Cache) ListBans(ctx context.Context, now time.Time) ([]store.Ban, error) {
	return c.inner.ListBans(ctx, now)
}

// LiftBans passes through.
func (c *Cache) LiftBans(ctx context.Context, email, ip string) (int, error) {
	return c.inner.LiftBans(ctx, email, ip)
}

// PruneSignIns passes through.
func (c *Cache) PruneSignIns(ctx context.Context, before time.Time) (int64, error) {
	return c.inner.PruneSignIns(ctx, before)
}

// PlatformHeartbeat passes through: nothing of it is cached.
func (c *Cache) PlatformHeartbeat(ctx context.Context, pc store.PlatformCaller, now time.Time, window time.Duration) (store.PlatformCallers, error) {
	return c.inner.PlatformHeartbeat(ctx, pc, now, window)
}

// The line's tickets and the provisioning job pass through: nothing of
// them is cached.

// CreateTicket passes through.
func (c *Cache) CreateTicket(ctx context.Context, t store.Ticket) error {
	return c.inner.CreateTicket(ctx, t)
}

// TicketByID passes through.
func (c *Cache) TicketByID(ctx context.Context, id string) (store.Ticket, error) {
	return c.inner.TicketByID(ctx, id)
}

// ClaimTicket passes through.
func (c *Cache) ClaimTicket(ctx context.Context, id, owner string, staleBefore, now time.Time) error {
	return c.inner.ClaimTicket(ctx, id, owner, staleBefore, now)
}

// FinishTicket passes through.
func (c *Cache) FinishTicket(ctx context.Context, id, owner, state, sealed, failure string) error {
	return c.inner.FinishTicket(ctx, id, owner, state, sealed, failure)
}

// TakeTicket passes through.
func (c *Cache) TakeTicket(ctx context.Context, id string, accountID int64) (store.Ticket, error) {
	return c.inner.TakeTicket(ctx, id, accountID)
}

// KeepTickets passes through.
func (c *Cache) KeepTickets(ctx context.Context, owner string, now time.Time) error {
	return c.inner.KeepTickets(ctx, owner, now)
}

// PruneTickets passes through.
func (c *Cache) PruneTickets(ctx context.Context, before time.Time) (int64, error) {
	return c.inner.PruneTickets(ctx, before)
}

// StartProvisionJob passes through.
func (c *Cache) StartProvisionJob(ctx context.Context, j store.ProvisionJob, staleBefore time.Time) error {
	return c.inner.StartProvisionJob(ctx, j, staleBefore)
}

// UpdateProvisionJob passes through.
func (c *Cache) UpdateProvisionJob(ctx context.Context, j store.ProvisionJob) error {
	return c.inner.UpdateProvisionJob(ctx, j)
}

// UnlinkedAccounts reads the database: a provisioning run must not skip
// an account another instance unlinked a moment ago.
func (c *Cache) UnlinkedAccounts(ctx context.Context, afterID int64, limit int) ([]store.Account, error) {
	return c.inner.UnlinkedAccounts(ctx, afterID, limit)
}

// CountLinks passes through.
func (c *Cache) CountLinks(ctx context.Context) (linked, unlinked int, err error) {
	return c.inner.CountLinks(ctx)
}

// LatestProvisionJob passes through.
func (c *Cache) LatestProvisionJob(ctx context.Context) (store.ProvisionJob, error) {
	return c.inner.LatestProvisionJob(ctx)
}

// PausePlatform passes through.
func (c *Cache) PausePlatform(ctx context.Context, until time.Time) error {
	return c.inner.PausePlatform(ctx, until)
}

// Ping passes through.
func (c *Cache) Ping(ctx context.Context) error { return c.inner.Ping(ctx) }

// Close closes the inner store.
func (c *Cache) Close() error { return c.inner.Close() }

var _ store.Store = (*Cache)(nil)
