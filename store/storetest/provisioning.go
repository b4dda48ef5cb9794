package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testUnlinked: the accounts to provision are the enabled ones without a
// link, listed page by page by id.
func testUnlinked(t *testing.T, s store.Store) {
	ctx := context.Background()
	var ids []int64
	for i := range 5 {
		a, err := s.CreateAccount(ctx, newAccount(fmt.Sprintf("u%d@example.com", i), false))
		require.NoError(t, err)
		ids = append(ids, a.ID)
	}
	require.NoError(t, s.SaveLink(ctx, ids[1], "p1"))
	require.NoError(t, s.SetDisabled(ctx, ids[3], true))
	linked, unlinked, err := s.CountLinks(ctx)
	require.NoError(t, err)
	assert.Equal(t, [2]int{1, 3}, [2]int{linked, unlinked})

	first, err := s.UnlinkedAccounts(ctx, 0, 2)
	require.NoError(t, err)
	require.Len(t, first, 2)
	assert.Equal(t, []int64{ids[0], ids[2]}, []int64{first[0].ID, first[1].ID})
	rest, err := s.UnlinkedAccounts(ctx, first[1].ID, 2)
	require.NoError(t, err)
	require.Len(t, rest, 1)
	assert.Equal(t, ids[4], rest[0].ID)
	assert.Equal(t, "u4@example.com", rest[0].Email)
}

// provisionJob: one job runs at a time across instances; a job whose
// owner went quiet may be replaced; only its owner records progress.
func provisionJob(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	_, err := a.LatestProvisionJob(ctx)
	assert.ErrorIs(t, err, store.ErrNotFound, "no job yet")
	now := Now().Truncate(time.Millisecond)
	j := store.ProvisionJob{StartedBy: "admin@example.com", Owner: "instance-a", SeenAt: now, StartedAt: now, Total: 10}
	require.NoError(t, a.StartProvisionJob(ctx, j, now.Add(-time.Minute)))
	got, err := b.LatestProvisionJob(ctx)
	require.NoError(t, err)
	j.State = store.JobRunning
	assert.Equal(t, j, got)
	assert.ErrorIs(t, b.StartProvisionJob(ctx, store.ProvisionJob{Owner: "instance-b", SeenAt: now, StartedAt: now}, now.Add(-time.Minute)),
		store.ErrJobRunning, "one at a time")

	j.Done, j.Created, j.Existed, j.Failed, j.RateLimited, j.SeenAt = 4, 2, 1, 1, 3, now.Add(time.Second)
	require.NoError(t, a.UpdateProvisionJob(ctx, j))
	wrong := j
	wrong.Owner = "instance-b"
	assert.ErrorIs(t, b.UpdateProvisionJob(ctx, wrong), store.ErrNotFound, "not b's job")
	got, err = b.LatestProvisionJob(ctx)
	require.NoError(t, err)
	assert.Equal(t, j, got)

	// a went quiet: b may start anew, and a's late progress is refused.
	k := store.ProvisionJob{StartedBy: "other@example.com", Owner: "instance-b", SeenAt: now.Add(time.Minute), StartedAt: now.Add(time.Minute), Total: 6}
	require.NoError(t, b.StartProvisionJob(ctx, k, now.Add(30*time.Second)))
	assert.ErrorIs(t, a.UpdateProvisionJob(ctx, j), store.ErrNotFound)
	k.State, k.Done, k.Created, k.FinishedAt, k.SeenAt = store.JobDone, 6, 6, now.Add(2*time.Minute), now.Add(2*time.Minute)
	require.NoError(t, b.UpdateProvisionJob(ctx, k))
	got, err = a.LatestProvisionJob(ctx)
	require.NoError(t, err)
	assert.Equal(t, k, got)
	assert.ErrorIs(t, b.UpdateProvisionJob(ctx, k), store.ErrNotFound, "a finished job takes no more progress")
	require.NoError(t, a.StartProvisionJob(ctx, j, now.Add(-time.Hour)), "after a finished job, a new one starts")
}
