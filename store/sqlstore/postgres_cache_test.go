package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/pgtest"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/storecache"
)

// While the change notices are caught up, the cache serves past its TTL
// (no refill reads); once they stop (the LISTEN connection is killed), it
// reads the database again within the TTL, so nothing changed behind its
// back is served for longer. The change here bypasses the store, so no
// notice tells of it: only the bound can.
func TestCacheServesPastTTLOnlyWhileNoticesAreCaughtUp(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	inner, err := OpenPostgres(ctx, dsn, nil)
	require.NoError(t, err)
	c := storecache.New(inner, time.Second, nil) // the default; pings (250 ms) keep the notices caught up to well within it
	defer c.Close()
	a, err := c.CreateAccount(ctx, store.NewAccount{Email: "ttl@example.com", FirstName: "Old", LastName: "Name", PasswordHash: "h"})
	require.NoError(t, err)
	_, err = c.AccountByID(ctx, a.ID)
	require.NoError(t, err)

	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "UPDATE accounts SET first_name = 'New' WHERE id = $1", a.ID)
	require.NoError(t, err)
	name := func() string { got, _ := c.AccountByID(ctx, a.ID); return got.FirstName }
	assert.Never(t, func() bool { return name() != "Old" }, 1500*time.Millisecond, 20*time.Millisecond,
		"caught up: served from memory past the 1 s TTL")

	pid := inner.listenerPID.Load()
	require.NotZero(t, pid)
	_, err = conn.Exec(ctx, "SELECT pg_terminate_backend($1)", int32(pid))
	require.NoError(t, err)
	start := time.Now()
	require.Eventually(t, func() bool { return name() == "New" }, 1100*time.Millisecond, 5*time.Millisecond, "notices stopped: read again within the TTL")
	t.Logf("notices stopped: the database read again after %s (TTL 1 s, ping every %s)", time.Since(start).Round(time.Millisecond), listenerPing)
}
