package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// A backup taken while writers go on is a database of its own, whole
// (integrity_check ok) and as of one moment: it holds every account made
// before it began and none made after it ended; the bridge opens it as
// its store. A backup is never written over a file.
func TestBackupWhileWritersGoOn(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := sqlstore.OpenSQLite(ctx, filepath.Join(dir, "live.db"), nil)
	require.NoError(t, err)
	defer s.Close()
	for i := range 200 {
		_, err := s.CreateAccount(ctx, store.NewAccount{Email: fmt.Sprintf("before%03d@example.com", i), FirstName: "B", LastName: "F", PasswordHash: "$argon2id$x"})
		require.NoError(t, err)
	}

	var made atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 { // writers under way throughout the backup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.CreateAccount(ctx, store.NewAccount{Email: fmt.Sprintf("during%d-%d@example.com", w, i), FirstName: "D", LastName: "U", PasswordHash: "$argon2id$x"}); err == nil {
					made.Add(1)
				}
				_ = s.Record(ctx, store.Event{Kind: store.KindLaunch, Outcome: "ok", Detail: "during the backup"})
			}
		}()
	}
	require.Eventually(t, func() bool { return made.Load() >= 50 }, 10*time.Second, time.Millisecond, "the writers are under way")
	startMade := made.Load()
	backup := filepath.Join(dir, "backup.db")
	require.NoError(t, s.Backup(ctx, backup))
	endMade := made.Load()
	close(stop)
	wg.Wait()

	fi, err := os.Stat(backup)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "readable by its owner only: it holds secrets")
	db, err := sql.Open("sqlite", backup)
	require.NoError(t, err)
	var check string
	require.NoError(t, db.QueryRow("PRAGMA integrity_check").Scan(&check))
	require.NoError(t, db.Close())
	assert.Equal(t, "ok", check)

	restored, err := sqlstore.OpenSQLite(ctx, backup, nil)
	require.NoError(t, err, "the bridge opens the backup as its store")
	defer restored.Close()
	_, total, err := restored.ListAccounts(ctx, store.AccountFilter{Limit: 1})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, int64(total), 200+startMade, "every account made before the backup began")
	assert.LessOrEqual(t, int64(total), 200+endMade, "none made after it ended")
	_, err = restored.AccountByEmail(ctx, "before199@example.com")
	assert.NoError(t, err)

	err = s.Backup(ctx, backup)
	assert.ErrorIs(t, err, sqlstore.ErrBackupExists, "never over a file")
	err = s.Backup(ctx, filepath.Join(dir, "no-such-folder", "b.db"))
	assert.Error(t, err)
}
