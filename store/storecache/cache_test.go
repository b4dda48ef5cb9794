package storecache

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/internal/fakeclock"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// countingStore counts the reads that reach the database and can hold one
// AccountByID until released.
type countingStore struct {
	*sqlstore.SQLite
	accountReads, linkReads atomic.Int64
	hold                    chan struct{} // when set, AccountByID reads, says so on held, then waits for hold to close
	held                    chan struct{}
}

func (s *countingStore) AccountByID(ctx context.Context, id int64) (store.Account, error) {
	s.accountReads.Add(1)
	a, err := s.SQLite.AccountByID(ctx, id)
	if s.hold != nil {
		s.held <- struct{}{}
		<-s.hold
	}
	return a, err
}

func (s *countingStore) LinkFor(ctx context.Context, id int64) (store.Link, error) {
	s.linkReads.Add(1)
	return s.SQLite.LinkFor(ctx, id)
}

func newCacheFixture(t *testing.T) (*Cache, *countingStore, *fakeclock.Clock, store.Account) {
	t.Helper()
	clk := fakeclock.New(time.Time{})
	db, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "cache.db"), clk.Now)
	require.NoError(t, err)
	inner := &countingStore{SQLite: db}
	c := New(inner, time.Second, clk.Now)
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	_, err = c.CreateAccount(ctx, newAcct("keeper@example.com", true)) // so the last-admin rule never blocks
	require.NoError(t, err)
	a, err := c.CreateAccount(ctx, newAcct("cached@example.com", false))
	require.NoError(t, err)
	require.NoError(t, c.SaveLink(ctx, a.ID, "700"))
	return c, inner, clk, a
}

func TestCacheServesRepeatReadsFromMemoryForTTL(t *testing.T) {
	c, inner, clk, a := newCacheFixture(t)
	ctx := context.Background()
	for range 5 {
		_, err := c.AccountByID(ctx, a.ID)
		require.NoError(t, err)
		_, err = c.LinkFor(ctx, a.ID)
		require.NoError(t, err)
	}
	assert.Equal(t, int64(1), inner.accountReads.Load())
	assert.Equal(t, int64(1), inner.linkReads.Load())

	// Another process disables the account behind the cache's back.
	require.NoError(t, inner.SQLite.SetDisabled(ctx, a.ID, true))
	got, _ := c.AccountByID(ctx, a.ID)
	assert.False(t, got.Disabled, "within ttl, a write by another process is not seen yet")
	clk.Advance(time.Second)
	got, _ = c.AccountByID(ctx, a.ID)
	assert.True(t, got.Disabled, "after ttl it is")
	assert.Equal(t, int64(2), inner.accountReads.Load())

	_, err := c.AccountByID(ctx, 999)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = c.AccountByID(ctx, 999)
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.Equal(t, int64(4), inner.accountReads.Load(), "misses are not kept: an account created meanwhile is found at once")
}

func TestCacheSeesEveryWriteThroughItAtOnce(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		write func(c *Cache, a store.Account) error
		check func(t *testing.T, got store.Account, link store.Link, linkErr error)
	}{
		{"disable", func(c *Cache, a store.Account) error { return c.SetDisabled(ctx, a.ID, true) },
			func(t *testing.T, got store.Account, _ store.Link, _ error) { assert.True(t, got.Disabled) }},
		{"grant admin", func(c *Cache, a store.Account) error { return c.SetAdmin(ctx, a.ID, true) },
			func(t *testing.T, got store.Account, _ store.Link, _ error) { assert.True(t, got.Admin) }},
		{"new password", func(c *Cache, a store.Account) error { return c.SetPasswordHash(ctx, a.ID, "other-hash") },
			func(t *testing.T, got store.Account, _ store.Link, _ error) {
				assert.Equal(t, "other-hash", got.PasswordHash)
			}},
		{"sign out everywhere", func(c *Cache, a store.Account) error { return c.EndSessions(ctx, a.ID) },
			func(t *testing.T, got store.Account, _ store.Link, _ error) {
				assert.Equal(t, int64(1), got.SessionEpoch)
			}},
		{"relink", func(c *Cache, a store.Account) error { return c.SaveLink(ctx, a.ID, "800") },
			func(t *testing.T, _ store.Account, l store.Link, err error) {
				require.NoError(t, err)
				assert.Equal(t, "800", l.PlatformUserID)
			}},
		{"unlink", func(c *Cache, a store.Account) error { return c.DeleteLink(ctx, a.ID, "700") },
			func(t *testing.T, _ store.Account, _ store.Link, err error) {
				assert.ErrorIs(t, err, store.ErrNotFound)
			}},
		{"launch stamps the link", func(c *Cache, a store.Account) error {
			return c.RecordLaunch(ctx, store.Event{AccountID: a.ID, Outcome: "ok", At: time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)})
		}, func(t *testing.T, _ store.Account, l store.Link, err error) {
			require.NoError(t, err)
			assert.Equal(t, time.Date(2026, 11, 22, 10, 0, 0, 123000000, time.UTC), l.LastLaunchAt)
		}},
		{"failed launch does not stamp", func(c *Cache, a store.Account) error {
			return c.RecordLaunch(ctx, store.Event{AccountID: a.ID, Outcome: "platform_unavailable"})
		}, func(t *testing.T, _ store.Account, l store.Link, err error) {
			require.NoError(t, err)
			assert.True(t, l.LastLaunchAt.IsZero())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, inner, _, a := newCacheFixture(t)
			_, err := c.AccountByID(ctx, a.ID) // prime both entries
			require.NoError(t, err)
			_, err = c.LinkFor(ctx, a.ID)
			require.NoError(t, err)
			require.NoError(t, tt.write(c, a))
			got, err := c.AccountByID(ctx, a.ID)
			require.NoError(t, err)
			l, lerr := c.LinkFor(ctx, a.ID)
			tt.check(t, got, l, lerr)
			// What the cache says is what the database says.
			want, _ := inner.SQLite.AccountByID(ctx, a.ID)
			assert.Equal(t, want, got)
			wantLink, wantErr := inner.SQLite.LinkFor(ctx, a.ID)
			assert.Equal(t, wantErr, lerr)
			assert.Equal(t, wantLink, l)
		})
	}
}

// A read that began before a write and ends after it must not be kept: it
// would serve the pre-write account (say, not yet disabled) for a whole ttl.
func TestCacheDropsAReadThatRacedAWrite(t *testing.T) {
	c, inner, _, a := newCacheFixture(t)
	ctx := context.Background()
	inner.hold, inner.held = make(chan struct{}), make(chan struct{}, 4)
	done := make(chan store.Account)
	go func() {
		got, _ := c.AccountByID(ctx, a.ID)
		done <- got
	}()
	<-inner.held // the read has the enabled account and waits
	require.NoError(t, c.SetDisabled(ctx, a.ID, true))
	close(inner.hold)
	stale := <-done
	assert.False(t, stale.Disabled, "the raced read itself returns what it read")
	got, err := c.AccountByID(ctx, a.ID)
	require.NoError(t, err)
	assert.True(t, got.Disabled, "but it was not kept")
}

func TestCacheForgetsIdleAccounts(t *testing.T) {
	c, _, clk, a := newCacheFixture(t)
	ctx := context.Background()
	_, err := c.AccountByID(ctx, a.ID)
	require.NoError(t, err)
	_, err = c.LinkFor(ctx, a.ID)
	require.NoError(t, err)
	clk.Advance(2 * time.Second)
	_, err = c.AccountByID(ctx, 1) // any fill after a ttl sweeps
	require.NoError(t, err)
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.Len(t, c.accounts, 1, "only the account read in the last ttl is held")
	assert.Empty(t, c.links)
}

// FreshAccountByID reads past a fresh entry (a write by another process
// within the ttl) and keeps what it read.
func TestCacheFreshReadGoesPastTheCache(t *testing.T) {
	c, inner, _, a := newCacheFixture(t)
	ctx := context.Background()
	_, err := c.AccountByID(ctx, a.ID)
	require.NoError(t, err)
	require.NoError(t, inner.SQLite.EndSessions(ctx, a.ID)) // another process, past this cache
	stale, err := c.AccountByID(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, a.SessionEpoch, stale.SessionEpoch, "within the ttl the cache serves what it read")
	fresh, err := c.FreshAccountByID(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, a.SessionEpoch+1, fresh.SessionEpoch)
	reads := inner.accountReads.Load()
	kept, err := c.AccountByID(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, fresh, kept, "the fresh read is kept")
	assert.Equal(t, reads, inner.accountReads.Load())
}

// A session's last-seen time, read through the cache, is the one its
// touch wrote (the refresh is decided from it), without a read of the
// database.
func TestCacheSeesItsOwnTouch(t *testing.T) {
	c, _, clk, a := newCacheFixture(t)
	ctx := context.Background()
	_, id := accounts.NewSessionToken()
	at := clk.Now().Truncate(time.Millisecond)
	require.NoError(t, c.CreateSession(ctx, store.Session{ID: id, AccountID: a.ID, CreatedAt: at, LastSeenAt: at}))
	_, err := c.SessionByID(ctx, id) // cached
	require.NoError(t, err)
	later := at.Add(90 * time.Second)
	wrote, err := c.TouchSession(ctx, id, later, later.Add(-time.Minute))
	require.NoError(t, err)
	require.True(t, wrote)
	got, err := c.SessionByID(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, later, got.LastSeenAt)
	want, err := c.Store.SessionByID(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, want.LastSeenAt, got.LastSeenAt, "as the database says")
}

func newAcct(email string, admin bool) store.NewAccount {
	return store.NewAccount{Email: email, FirstName: "First", LastName: "Last", PasswordHash: "$argon2id$x", Admin: admin}
}
