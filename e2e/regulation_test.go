package e2e

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/accounts/regulation"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParallelSignInsTestNoMoreThanTheLimit: 299 wrong passwords and the
// right one, sent at once with regulation.max_retries 5 and the default
// argon2id cost (so attempts overlap their hashing), verify at most 5
// passwords; the rest are turned away before any hashing.
func TestParallelSignInsTestNoMoreThanTheLimit(t *testing.T) {
	ta := startTestApp(t, testOptions{yaml: "regulation:\n  max_retries: 5\n  max_retries_per_ip: 1000\n",
		env: []string{"SSOBRIDGE_PASSWORD_ARGON2_MEMORY_KIB=19456", "SSOBRIDGE_PASSWORD_ARGON2_ITERATIONS=2", "SSOBRIDGE_PASSWORD_HASH_CONCURRENCY=2"}})
	ta.addAccount(t, "ada@example.com", false)
	b := ta.browser(t)
	tok := b.csrf("/login")
	before := ta.hasher.Verifications()
	counts := b.postAtOnce("/login", 300, func(i int) url.Values {
		password := "wrong password " + strings.Repeat("x", i%7)
		if i == 150 {
			password = testPassword
		}
		return url.Values{"_csrf": {tok}, "email": {"ada@example.com"}, "password": {password}}
	})
	tested := ta.hasher.Verifications() - before
	t.Logf("300 parallel sign-ins, max_retries 5: %d passwords tested, answers %v", tested, counts)
	assert.LessOrEqual(t, tested, int64(5), "no more passwords tested than the limit")
	// Turned away unhashed: busy (503) while the five are verified, banned
	// (429) once they have failed.
	refused := counts[http.StatusServiceUnavailable] + counts[http.StatusTooManyRequests]
	assert.Equal(t, 300, refused+counts[http.StatusUnauthorized]+counts[http.StatusSeeOther], "%v", counts)
	assert.GreaterOrEqual(t, refused, 295)
}

// TestBansSurviveARestart: a ban is in the store: a bridge started anew on
// the same database still refuses the email.
func TestBansSurviveARestart(t *testing.T) {
	yaml := "regulation:\n  max_retries: 3\n  max_retries_per_ip: 100\n"
	first := startTestApp(t, testOptions{yaml: yaml})
	first.addAccount(t, "ada@example.com", false)
	b := first.browser(t)
	for range 3 {
		require.Equal(t, http.StatusUnauthorized, b.login("ada@example.com", "guess").status)
	}
	require.Equal(t, http.StatusTooManyRequests, b.login("ada@example.com", testPassword).status)
	first.srv.Close()

	again := startTestApp(t, testOptions{yaml: yaml, dsn: first.dsn})
	p := again.browser(t).login("ada@example.com", testPassword)
	assert.Equal(t, http.StatusTooManyRequests, p.status, "still banned after the restart")
	assert.Contains(t, p.body, "Please try again in 15 minutes.")
}

// TestBansCommands: bans list shows what is banned; bans revoke ends a ban
// by email or IP and forgets its failures; bad input exits 2.
func TestBansCommands(t *testing.T) {
	cfg, dsn := writeConfig(t, "")
	s, err := sqlstore.OpenSQLite(context.Background(), dsn, nil)
	require.NoError(t, err)
	r := regulation.New(s, store.RegulationConfig{MaxRetries: 1, MaxRetriesPerIP: 2, FindTime: time.Minute, BanTime: time.Hour}, nil)
	for _, email := range []string{"Ada@example.com", "bob@example.com"} {
		a, _, err := r.Admit(context.Background(), email, "203.0.113.5")
		require.NoError(t, err)
		_, err = r.Fail(context.Background(), a)
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())

	code, out, stderr := runCLI(t, "", nil, "bans", "list", "--config", cfg)
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{"email  ada@example.com", "email  bob@example.com", "ip     203.0.113.5", "UNTIL (UTC)"} {
		assert.Contains(t, out, want)
	}
	code, out, _ = runCLI(t, "", nil, "bans", "revoke", "--config", cfg, "--email", "ADA@example.com")
	assert.Equal(t, 0, code)
	assert.Equal(t, "lifted the ban on email ada@example.com; its counted failed sign-ins are cleared\n", out)
	code, out, _ = runCLI(t, "", nil, "bans", "revoke", "--config", cfg, "--ip", "203.0.113.5")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "lifted the ban on IP 203.0.113.5")
	code, out, _ = runCLI(t, "", nil, "bans", "revoke", "--config", cfg, "--email", "nobody@example.com")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "no ban on email nobody@example.com")
	code, out, _ = runCLI(t, "", nil, "bans", "list", "--config", cfg)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "bob@example.com")
	assert.NotContains(t, out, "ada@example.com")

	for _, args := range [][]string{{"bans", "revoke"}, {"bans", "revoke", "--email", "  "}, {"bans", "revoke", "--email", "a@example.com", "--ip", "1.2.3.4"},
		{"bans", "revoke", "--ip", "not-an-ip"}, {"bans", "forget"}} {
		code, _, stderr := runCLI(t, "", nil, append(args, "--config", cfg)...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
	}
	code, out, _ = runCLI(t, "", nil, "bans", "list", "--config", cfg)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "bob@example.com", "bad input changed nothing")
}
