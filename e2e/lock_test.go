package e2e

import (
	"context"
	"database/sql"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLaunchesUnderAnExternalWriteLock: while another connection holds
// the database's write lock for 7 s (longer than the store's 5 s busy
// timeout), launches answer within the bound, each with its 303 or a 503
// page (busy, or back in a moment: nothing lost), never a 500; afterwards
// every launch that answered 303 has its audit row, and no outage was
// declared (the database answered pings throughout).
func TestLaunchesUnderAnExternalWriteLock(t *testing.T) {
	t.Parallel() // mostly waiting (on a slow platform, on a lock): overlaps the other
	ta := startTestApp(t, testOptions{})
	ta.addAccount(t, "ada@example.com", false)
	b := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, b.login("ada@example.com", testPassword).status)
	tok := b.csrf("/")
	launched := 0
	require.Equal(t, http.StatusSeeOther, b.post("/launch", url.Values{"_csrf": {tok}}).status) // links the account
	launched++
	// Five sessions (five devices), each with a launch of its own: one
	// session holds one place in the line.
	sessions := make([]*browser, 5)
	for i := range sessions {
		sessions[i] = ta.browser(t)
		require.Equal(t, http.StatusSeeOther, sessions[i].login("ada@example.com", testPassword).status)
	}

	locker, err := sql.Open("sqlite", "file:"+ta.dsn+"?_txlock=immediate")
	require.NoError(t, err)
	defer locker.Close()
	lock, err := locker.BeginTx(context.Background(), nil)
	require.NoError(t, err)
	_, err = lock.Exec("INSERT INTO audit_log (at, kind, outcome) VALUES (0, 'admin', 'lock')") // holds the write lock
	require.NoError(t, err)
	locked := time.Now()
	released := make(chan error, 1)
	time.AfterFunc(7*time.Second, func() { released <- lock.Rollback() })

	type answer struct {
		status int
		body   string
		took   time.Duration
	}
	answers := make(chan answer, 5)
	var wg sync.WaitGroup
	for _, s := range sessions {
		tok := s.csrf("/")
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			p := s.post("/launch", url.Values{"_csrf": {tok}})
			answers <- answer{p.status, p.body, time.Since(start)}
		}()
	}
	wg.Wait()
	close(answers)
	answered := time.Since(locked)
	require.NoError(t, <-released)
	counts := map[int]int{}
	for a := range answers {
		counts[a.status]++
		switch a.status {
		case http.StatusSeeOther:
			launched++
		case http.StatusServiceUnavailable:
			// The busy page when SQLite's busy timeout ran out; the "back in
			// a moment" page when the write could not join the writer's
			// queue within store.timeout (2 s).
			assert.Regexp(t, `data-class="(busy|store-unavailable)"`, a.body)
			assert.Contains(t, a.body, "Nothing was lost")
		default:
			t.Errorf("status %d under the lock: %s", a.status, a.body)
		}
		assert.Less(t, a.took, 7*time.Second, "answered while the lock was held: waiting is bounded by the busy timeout")
	}
	t.Logf("under a 7 s write lock: answers %v, all within %s", counts, answered.Round(time.Millisecond))
	assert.NotContains(t, ta.logs.String(), "store unavailable", "a lock is not an outage")
	require.Equal(t, http.StatusSeeOther, b.post("/launch", url.Values{"_csrf": {tok}}).status, "the lock gone, launches work")
	launched++

	_, rows, err := ta.store.ListEvents(context.Background(), store.AuditFilter{Kind: store.KindLaunch, Outcome: "ok"})
	require.NoError(t, err)
	assert.Equal(t, launched, rows, "every launch answered 303 has its audit row")
}
