package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/fakeclock"
	"github.com/ssobridge/ssobridge/internal/syncbuf"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// fault is what a faultyStore's database does.
type fault int32

const (
	answers fault = iota
	hangs         // nothing comes back: a frozen server, a black hole
	refuses       // the connection is refused: a stopped server
	slow          // queries hang, pings answer: a slow query, not an outage
)

// faultyStore is a real SQLite store whose reads by id and pings can be
// made to fail the ways a database server away fails.
type faultyStore struct {
	*sqlstore.SQLite
	fault atomic.Int32
	calls atomic.Int64 // reads by id that reached the database
}

func (s *faultyStore) fail(ctx context.Context, ping bool) error {
	switch fault(s.fault.Load()) {
	case hangs:
		<-ctx.Done()
		return ctx.Err()
	case refuses:
		return &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	case slow:
		if !ping {
			<-ctx.Done()
			return ctx.Err()
		}
	}
	return nil
}

func (s *faultyStore) AccountByID(ctx context.Context, id int64) (store.Account, error) {
	s.calls.Add(1)
	if err := s.fail(ctx, false); err != nil {
		return store.Account{}, err
	}
	return s.SQLite.AccountByID(ctx, id)
}

func (s *faultyStore) Ping(ctx context.Context) error {
	if err := s.fail(ctx, true); err != nil {
		return err
	}
	return s.SQLite.Ping(ctx)
}

func guardFixture(t *testing.T) (*sqlstore.Guard, *faultyStore, *fakeclock.Clock, *syncbuf.Buffer, store.Account) {
	clock := fakeclock.New(time.Time{})
	inner := &faultyStore{SQLite: openSQLite(t, filepath.Join(t.TempDir(), "test.db"), clock.Now)}
	acct, err := inner.CreateAccount(t.Context(), store.NewAccount{Email: "ada@example.com", FirstName: "Ada", LastName: "Lovelace", PasswordHash: "x"})
	require.NoError(t, err)
	logs := &syncbuf.Buffer{}
	g := sqlstore.NewGuard(inner, 50*time.Millisecond, slog.New(slog.NewTextHandler(logs, nil)), clock.Now)
	return g, inner, clock, logs, acct
}

// A database that stops answering: the call that meets it returns within
// the timeout, an outage begins (one ERROR line), every later call is
// refused at once without reaching the database, and the guard's own
// pings end the outage once it answers (one line, with how long and how
// many calls were refused).
func TestGuardOutage(t *testing.T) {
	for _, f := range []fault{hangs, refuses} {
		t.Run(map[fault]string{hangs: "hangs", refuses: "refuses"}[f], func(t *testing.T) {
			g, inner, clock, logs, acct := guardFixture(t)
			ctx := t.Context()
			_, err := g.AccountByID(ctx, acct.ID)
			require.NoError(t, err)

			inner.fault.Store(int32(f))
			start := time.Now()
			_, err = g.AccountByID(ctx, acct.ID)
			assert.ErrorIs(t, err, store.ErrUnavailable)
			assert.Less(t, time.Since(start), time.Second, "bounded by the timeout (50 ms)")
			require.Eventually(t, func() bool { return !g.Stats().Up }, 5*time.Second, 5*time.Millisecond, "the ping confirms the outage")
			assert.Equal(t, 1, strings.Count(logs.String(), "level=ERROR"), logs.String())
			assert.Contains(t, logs.String(), "store unavailable")

			reached := inner.calls.Load()
			for range 5 {
				start := time.Now()
				_, err = g.AccountByID(ctx, acct.ID)
				assert.ErrorIs(t, err, store.ErrUnavailable)
				assert.Less(t, time.Since(start), 20*time.Millisecond, "refused at once")
			}
			assert.Equal(t, reached, inner.calls.Load(), "no call reached the database")

			clock.Advance(2 * time.Second) // the outage's length, on the guard's clock
			inner.fault.Store(int32(answers))
			require.Eventually(t, func() bool { return g.Stats().Up }, 5*time.Second, 5*time.Millisecond, "the guard's pings find it back")
			got, err := g.AccountByID(ctx, acct.ID)
			require.NoError(t, err)
			assert.Equal(t, acct.Email, got.Email)
			st := g.Stats()
			assert.Equal(t, int64(1), st.Outages)
			assert.GreaterOrEqual(t, st.Refused, int64(5))
			assert.Equal(t, 2*time.Second, st.Down)
			assert.Equal(t, 1, strings.Count(logs.String(), "level=ERROR"), "one ERROR line per outage")
			assert.Regexp(t, `msg="store available again" unavailable_for=2s refused_calls=[5-9]`, logs.String())
		})
	}
}

// A query that runs past the timeout while the database answers pings is
// slow, not an outage: that call fails, the next ones go through.
func TestGuardSlowQueryIsNoOutage(t *testing.T) {
	g, inner, _, logs, acct := guardFixture(t)
	inner.fault.Store(int32(slow))
	_, err := g.AccountByID(t.Context(), acct.ID)
	assert.ErrorIs(t, err, store.ErrUnavailable)
	inner.fault.Store(int32(answers))
	require.Eventually(t, func() bool {
		_, err := g.AccountByID(t.Context(), acct.ID)
		return err == nil
	}, 5*time.Second, 5*time.Millisecond)
	st := g.Stats()
	assert.True(t, st.Up)
	assert.Zero(t, st.Outages)
	assert.Equal(t, int64(1), st.Timeouts)
	assert.NotContains(t, logs.String(), "level=ERROR")
}

// The database's own answers pass through unchanged, and a caller that
// goes away says nothing about the database.
func TestGuardPassesAnswers(t *testing.T) {
	g, inner, _, _, _ := guardFixture(t)
	_, err := g.AccountByID(t.Context(), 999)
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.NotErrorIs(t, err, store.ErrUnavailable)

	inner.fault.Store(int32(hangs))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = g.AccountByID(ctx, 1)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, store.ErrUnavailable)
	assert.True(t, g.Stats().Up)
	assert.Zero(t, g.Stats().Timeouts)
}

// What counts as the database being away, and what does not.
func TestGuardClassifiesLostConnections(t *testing.T) {
	tests := []struct {
		err  error
		away bool
	}{
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{io.ErrUnexpectedEOF, true},
		{&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, true},
		{&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, true},
		{&pgconn.PgError{Code: "08006"}, true},
		{fmt.Errorf("wrapped: %w", store.ErrStoreGone), true},
		{&pgconn.PgError{Code: "23505", Message: "duplicate key"}, false},
		{store.ErrNotFound, false},
		{errors.New("syntax error"), false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.away, sqlstore.LostConnection(tt.err), "%v", tt.err)
	}
}

// BenchmarkGuard is what the guard adds to a store call (a deadline, two
// atomic loads): a read by id on SQLite, straight and through the guard.
func BenchmarkGuard(b *testing.B) {
	s, err := sqlstore.OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "bench.db"), nil)
	require.NoError(b, err)
	defer s.Close()
	acct, err := s.CreateAccount(b.Context(), store.NewAccount{Email: "ada@example.com", FirstName: "Ada", LastName: "Lovelace", PasswordHash: "x"})
	require.NoError(b, err)
	for _, bb := range []struct {
		name  string
		store store.Store
	}{{"direct", s}, {"guarded", sqlstore.NewGuard(s, time.Second, nil, nil)}} {
		b.Run(bb.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bb.store.AccountByID(ctx, acct.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
