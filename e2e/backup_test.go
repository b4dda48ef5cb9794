package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// `ssobridge store backup FILE` copies a running bridge's SQLite store
// while launches go on (none refused), and a bridge started on the copy
// (the restore) lets a user who had launched before launch again as the
// same platform user; bad command lines change nothing.
func TestStoreBackupUnderLoadAndRestore(t *testing.T) {
	ta := startTestApp(t, testOptions{})
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(ta.yaml), 0o600))
	const users = 20
	browsers := make([]*browser, users)
	for i := range users {
		email := fmt.Sprintf("pupil%02d@example.com", i)
		ta.addAccount(t, email, false)
		browsers[i] = ta.browser(t)
		require.Equal(t, http.StatusSeeOther, browsers[i].login(email, testPassword).status)
		require.Equal(t, http.StatusSeeOther, browsers[i].launch().status)
	}

	var launched, refused atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, b := range browsers[:4] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if b.launch().status == http.StatusSeeOther {
					launched.Add(1)
				} else {
					refused.Add(1)
				}
			}
		}()
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	code, out, errOut := runCLI(t, "", nil, "store", "backup", backup, "--config", cfg)
	close(stop)
	wg.Wait()
	require.Equal(t, 0, code, "stdout: %s\nstderr: %s", out, errOut)
	assert.Contains(t, out, "backed up ")
	assert.Positive(t, launched.Load(), "launches went on meanwhile")
	assert.Zero(t, refused.Load(), "none refused")

	code, _, errOut = runCLI(t, "", nil, "store", "backup", backup, "--config", cfg)
	assert.Equal(t, 2, code, "bad input: exit 2, nothing changed")
	assert.Contains(t, errOut, "exists already", "never over a file")
	code, _, errOut = runCLI(t, "", nil, "store", "backup", "--config", cfg)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "name one file")
	pgCfg := filepath.Join(t.TempDir(), "pg.yaml")
	require.NoError(t, os.WriteFile(pgCfg, []byte(fmt.Sprintf("store:\n  driver: postgres\n  dsn: postgres://nobody@127.0.0.1:1/none\nsession:\n  hash_key: %s\n  block_key: %s\n", sharedHashKey, sharedBlockKey)), 0o600))
	code, _, errOut = runCLI(t, "", nil, "store", "backup", filepath.Join(t.TempDir(), "x.db"), "--config", pgCfg)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "pg_dump")

	// The restore: a bridge on the copy knows the accounts and their links.
	restored := startTestApp(t, testOptions{dsn: backup, platform: ta.sim})
	acct, err := restored.store.AccountByEmail(context.Background(), "pupil07@example.com")
	require.NoError(t, err)
	link, err := restored.store.LinkFor(context.Background(), acct.ID)
	require.NoError(t, err, "linked as before the backup")
	b := restored.browser(t)
	require.Equal(t, http.StatusSeeOther, b.login("pupil07@example.com", testPassword).status)
	require.Equal(t, http.StatusSeeOther, b.launch().status)
	assert.Len(t, ta.sim.Users("pupil07@example.com"), 1, "the same platform user, not a second")
	s, err := sqlstore.OpenSQLite(context.Background(), backup, nil)
	require.NoError(t, err)
	defer s.Close()
	got, err := s.LinkFor(context.Background(), acct.ID)
	require.NoError(t, err)
	assert.Equal(t, link.PlatformUserID, got.PlatformUserID)
}
