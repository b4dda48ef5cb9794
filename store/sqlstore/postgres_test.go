package sqlstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/pgtest"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// TestPostgresFollowAdminGroupWaitsForAChangeInFlight: a follow that runs
// while a change to the admin group is still uncommitted (another
// instance's SCIM request) waits for it and decides by the membership it
// committed, not by the one before it.
func TestPostgresFollowAdminGroupWaitsForAChangeInFlight(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s := openPostgres(t, dsn, nil)
	_, err := s.CreateAccount(ctx, store.NewAccount{Email: "boss@example.com", FirstName: "B", LastName: "S", PasswordHash: "h", Admin: true})
	require.NoError(t, err)
	ada, err := s.CreateAccount(ctx, store.NewAccount{Email: "ada@example.com", FirstName: "Ada", LastName: "L", PasswordHash: "h", Admin: true})
	require.NoError(t, err)
	_, err = s.CreateGroup(ctx, store.Group{ID: "g", DisplayName: "Bridge Admins", Members: []int64{ada.ID}})
	require.NoError(t, err)

	other, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer other.Close(ctx)
	watcher, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer watcher.Close(ctx)
	tx, err := other.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	// As UpdateGroup does: the group's row locked, then its members changed.
	_, err = tx.Exec(ctx, "SELECT id FROM scim_groups WHERE id = 'g' FOR UPDATE")
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "DELETE FROM scim_group_members WHERE group_id = 'g' AND account_id = $1", ada.ID)
	require.NoError(t, err)

	type result struct {
		changed bool
		err     error
	}
	done := make(chan result, 1)
	go func() {
		changed, err := s.FollowAdminGroup(ctx, ada.ID, "Bridge Admins")
		done <- result{changed, err}
	}()
	require.Eventually(t, func() bool {
		var waiting int
		require.NoError(t, watcher.QueryRow(ctx,
			"SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", other.PgConn().PID()).Scan(&waiting))
		return waiting > 0
	}, 5*time.Second, 5*time.Millisecond, "the follow waits for the group's lock")
	select {
	case r := <-done:
		t.Fatalf("the follow did not wait for the change in flight: %+v", r)
	default:
	}
	require.NoError(t, tx.Commit(ctx))
	r := <-done
	require.NoError(t, r.err)
	assert.True(t, r.changed)
	got, err := s.AccountByID(ctx, ada.ID)
	require.NoError(t, err)
	assert.False(t, got.Admin, "she left the group: the role went with the committed change")
}

// TestPostgresFillLeavesTheStoreVacuumed: a filled PostgreSQL store is
// vacuumed and analyzed, as autovacuum leaves a store that grew over a
// year, so a benchmark does not measure the bulk load's first reads.
func TestPostgresFillLeavesTheStoreVacuumed(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s := openPostgres(t, dsn, nil)
	require.NoError(t, sqlstore.FillStore(ctx, s, sqlstore.Fill{Accounts: 20, Sessions: 30, Events: 500, Span: 24 * time.Hour,
		SeenWithin: time.Hour, Now: time.Now(), PasswordHash: "!"}))
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT relname FROM pg_stat_user_tables
		WHERE schemaname = current_schema() AND relname IN ('accounts', 'links', 'sessions', 'audit_log')
		AND last_vacuum IS NOT NULL AND last_analyze IS NOT NULL ORDER BY relname`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	assert.Equal(t, []string{"accounts", "audit_log", "links", "sessions"}, tables)
}

// Admins deactivated, disabled, demoted and deleted at once (an IdP's
// sweep, two consoles): every change locks the admins in one order (by
// id) and a deadlock PostgreSQL still reports is retried, so none fails
// with anything but ErrLastAdmin, and one admin always stays.
func TestPostgresConcurrentAdminRemovalsNeverDeadlock(t *testing.T) {
	ctx := context.Background()
	s := openPostgres(t, pgtest.DSN(t), nil)
	const rounds, admins = 20, 4
	for round := range rounds {
		var ids []int64
		for i := range admins {
			a, err := s.CreateAccount(ctx, store.NewAccount{Email: fmt.Sprintf("admin%d-%d@example.com", round, i), FirstName: "A", LastName: "D", PasswordHash: "h", Admin: true})
			require.NoError(t, err)
			ids = append(ids, a.ID)
		}
		if round > 0 {
			// The admins of the rounds before are gone: only this round's count.
			prev, _, err := s.ListAccounts(ctx, store.AccountFilter{Search: fmt.Sprintf("admin%d-", round-1)})
			require.NoError(t, err)
			for _, a := range prev {
				if a.Admin && !a.Disabled {
					require.NoError(t, s.SetAdmin(ctx, a.ID, false))
				}
			}
		}
		var wg sync.WaitGroup
		errs := make([]error, len(ids))
		for i, id := range ids {
			wg.Go(func() {
				switch i % 4 {
				case 0, 1:
					_, errs[i] = s.UpdateAccount(ctx, id, store.AccountUpdate{Disabled: new(true)})
				case 2:
					errs[i] = s.SetDisabled(ctx, id, true)
				default:
					errs[i] = s.SetAdmin(ctx, id, false)
				}
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				require.ErrorIs(t, err, store.ErrLastAdmin, "round %d, change %d", round, i)
			}
		}
		left := 0
		for _, id := range ids {
			a, err := s.AccountByID(ctx, id)
			require.NoError(t, err)
			if a.Admin && !a.Disabled {
				left++
			}
		}
		require.Equal(t, 1, left, "round %d: one admin stays", round)
	}
}
