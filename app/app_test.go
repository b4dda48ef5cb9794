package app

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/demo/samplelms"
	"github.com/ssobridge/ssobridge/handlers/console"
	"github.com/ssobridge/ssobridge/internal/syncbuf"
	"github.com/ssobridge/ssobridge/internal/version"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

// testConfig is the embedded demo with its data in a temp dir and cheap
// hashing.
func testConfig(t *testing.T, yaml string) config.Config {
	t.Helper()
	cfg, err := ParseConfig([]byte("store:\n  dsn: "+filepath.Join(t.TempDir(), "db.sqlite")+
		"\npassword:\n  argon2_memory_kib: 64\n  argon2_iterations: 1\n"+yaml), nil)
	require.NoError(t, err)
	return cfg
}

func TestSessionKeysGeneratedOnceAndKept(t *testing.T) {
	cfg := testConfig(t, "")
	k1, err := sessionKeys(cfg)
	require.NoError(t, err)
	assert.True(t, k1.generated)
	assert.Len(t, k1.hash, 32)
	assert.Len(t, k1.block, 32)
	assert.Equal(t, filepath.Join(cfg.DataDir(), SessionKeyFile), k1.file)
	st, err := os.Stat(k1.file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "only the owner reads the keys")

	k2, err := sessionKeys(cfg)
	require.NoError(t, err)
	assert.False(t, k2.generated, "kept, not generated again")
	assert.Equal(t, k1.hash, k2.hash)
	assert.Equal(t, k1.block, k2.block)

	require.NoError(t, os.WriteFile(k1.file, []byte("hash_key=zz\n"), 0o600))
	_, err = sessionKeys(cfg)
	assert.ErrorContains(t, err, "delete it")

	configured := strings.Repeat("ab", 32)
	cfg.Session.HashKey, cfg.Session.BlockKey = configured, configured
	k3, err := sessionKeys(cfg)
	require.NoError(t, err)
	assert.False(t, k3.generated)
	assert.Equal(t, byte(0xab), k3.hash[0], "configured keys win over the file")
}

func TestParseKeyFile(t *testing.T) {
	good := "hash_key=" + strings.Repeat("01", 32) + "\nblock_key=" + strings.Repeat("02", 16) + "\n"
	h, b, err := parseKeyFile(good)
	require.NoError(t, err)
	assert.Len(t, h, 32)
	assert.Len(t, b, 16)
	for name, bad := range map[string]string{
		"not hex":        "hash_key=zz\nblock_key=" + strings.Repeat("02", 16),
		"short hash key": "hash_key=0102\nblock_key=" + strings.Repeat("02", 16),
		"odd block key":  "hash_key=" + strings.Repeat("01", 32) + "\nblock_key=" + strings.Repeat("02", 20),
		"empty":          "",
	} {
		_, _, err := parseKeyFile(bad)
		assert.Error(t, err, name)
	}
}

// New wires the embedded demo: the emulator runs, the handler answers, and
// the demo account is made once and printed while it exists.
func TestNewEmbeddedDemo(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t, "")
	a, err := New(ctx, cfg, Options{LogOutput: io.Discard})
	require.NoError(t, err)
	defer a.Close()
	require.NotNil(t, a.Emulator())
	assert.Equal(t, a.Emulator().URL, a.Client().BaseURL())

	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	line, err := a.EnsureDemoAccount(ctx)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, "demo login: "+DemoEmail+" "), line)
	password := strings.Fields(line)[3]
	acct, err := a.Store().AccountByEmail(ctx, DemoEmail)
	require.NoError(t, err)
	assert.True(t, acct.Admin)
	require.NoError(t, a.Hasher().Verify(ctx, password, acct.PasswordHash), "the printed password is the account's")
	again, err := a.EnsureDemoAccount(ctx)
	require.NoError(t, err)
	assert.Equal(t, line, again, "a later start prints the same login")
	n, err := a.Store().CountAccounts(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "made once")
}

// With a real platform configured, no emulator starts and no demo account
// is made.
func TestNewWithPlatform(t *testing.T) {
	cred := platformsim.Credential{Key: "k", Secret: "s", Admin: true}
	sim, err := platformsim.New(platformsim.Config{Credentials: []platformsim.Credential{cred}})
	require.NoError(t, err)
	srv := httptest.NewServer(sim)
	defer srv.Close()
	cfg := testConfig(t, "platform:\n  base_url: "+srv.URL+"\n  api_key: k\n  api_secret: s\n")
	a, err := New(context.Background(), cfg, Options{LogOutput: io.Discard})
	require.NoError(t, err)
	defer a.Close()
	assert.Nil(t, a.Emulator())
	line, err := a.EnsureDemoAccount(context.Background())
	require.NoError(t, err)
	assert.Empty(t, line)
}

// A store that cannot be opened fails New, naming the cause.
func TestNewFailsOnBadStore(t *testing.T) {
	cfg := testConfig(t, "")
	blocker := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	cfg.Store.DSN = filepath.Join(blocker, "db.sqlite") // a file where a folder must be
	_, err := New(context.Background(), cfg, Options{LogOutput: io.Discard})
	assert.Error(t, err)
}

// The console adapter: page numbers translated to the platform's, users
// and totals carried over, every failing verdict with advice in the
// configuration's words and never the secret.
func TestConsole(t *testing.T) {
	cred := platformsim.Credential{Key: "console-key", Secret: "console-secret", Admin: true}
	sim, err := platformsim.New(platformsim.Config{Credentials: []platformsim.Credential{cred}})
	require.NoError(t, err)
	srv := httptest.NewServer(sim)
	defer srv.Close()
	for i := range 3 {
		_, err := sim.AddUser("P", string(rune('a'+i)), string(rune('a'+i))+"@example.com")
		require.NoError(t, err)
	}
	client, err := apiclient.New(apiclient.Options{BaseURL: srv.URL, Credentials: apiclient.Credentials{Method: apiclient.AuthHMAC, APIKey: cred.Key, APISecret: cred.Secret}})
	require.NoError(t, err)
	c := platformView{client: client}
	ctx := context.Background()

	assert.Equal(t, console.Connection{BaseURL: srv.URL, ExchangeURL: srv.URL + "/api/5/login-token/login/{token}", Method: "hmac", Scheme: "SVC", KeyID: "console-key"}, c.Connection())
	first, err := c.ListUsers(ctx, "", 1, 2)
	require.NoError(t, err)
	assert.Equal(t, 3, first.Total)
	require.Len(t, first.Users, 2)
	second, err := c.ListUsers(ctx, "", 2, 2)
	require.NoError(t, err)
	require.Len(t, second.Users, 1, "page 2 (1-based) is the platform's page 1")
	assert.NotContains(t, []string{first.Users[0].ID, first.Users[1].ID}, second.Users[0].ID)

	ok := c.Check(ctx)
	assert.True(t, ok.OK())
	assert.Equal(t, "ok", ok.Verdict)
	assert.Empty(t, ok.Advice)
	assert.Equal(t, "in step with this server's", ok.Clock)

	sim.InjectFault(platformsim.EndpointListUsers, platformsim.Fault{Status: 403})
	bad := c.Check(ctx)
	assert.False(t, bad.OK())
	assert.Equal(t, "forbidden", bad.Verdict)
	assert.Contains(t, strings.Join(bad.Advice, " "), "admin of the Instance")
	sim.ClearFaults()

	for _, v := range []apiclient.Verdict{apiclient.VerdictClockSkew, apiclient.VerdictCredentials, apiclient.VerdictForbidden,
		apiclient.VerdictNotFound, apiclient.VerdictRateLimited, apiclient.VerdictServerError, apiclient.VerdictTimeout,
		apiclient.VerdictDNS, apiclient.VerdictTLS, apiclient.VerdictUnreachable, apiclient.VerdictUnexpected} {
		advice := strings.Join(checkAdvice(v, client.Signer()), " ")
		assert.NotEmpty(t, advice, v)
		assert.NotContains(t, advice, "console-secret", v)
	}
	assert.Contains(t, strings.Join(checkAdvice(apiclient.VerdictCredentials, client.Signer()), " "), "SSOBRIDGE_PLATFORM_API_SECRET")
	assert.Contains(t, strings.Join(checkAdvice(apiclient.VerdictNotFound, client.Signer()), " "), "platform.base_url")
}

// The demo login is printed only while it is true; otherwise the line
// says why none is printed.
func TestDemoLoginOnlyWhileTrue(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, a *App, id int64)
		want   string // the line, "" for the login itself
	}{
		{"unchanged", func(*testing.T, *App, int64) {}, ""},
		{"password changed", func(t *testing.T, a *App, id int64) {
			hash, err := a.Hasher().Hash(t.Context(), "set by an admin")
			require.NoError(t, err)
			require.NoError(t, a.Store().SetPasswordHash(t.Context(), id, hash))
		}, "no demo login printed: the password of demo@example.com was changed after it was generated"},
		{"disabled", func(t *testing.T, a *App, id int64) {
			_, err := a.Store().CreateAccount(t.Context(), store.NewAccount{Email: "other@example.com", FirstName: "O", LastName: "A", PasswordHash: "h", Admin: true})
			require.NoError(t, err)
			require.NoError(t, a.Store().SetDisabled(t.Context(), id, true))
		}, "no demo login printed: demo@example.com is disabled"},
		{"saved login lost", func(t *testing.T, a *App, _ int64) {
			require.NoError(t, os.Remove(filepath.Join(a.cfg.DataDir(), demoLoginFile)))
		}, "no demo login printed: demo@example.com exists, but its generated password is no longer known"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			a, err := New(ctx, testConfig(t, ""), Options{LogOutput: io.Discard})
			require.NoError(t, err)
			defer a.Close()
			first, err := a.EnsureDemoAccount(ctx)
			require.NoError(t, err)
			demo, err := a.Store().AccountByEmail(ctx, DemoEmail)
			require.NoError(t, err)
			tt.change(t, a, demo.ID)
			line, err := a.EnsureDemoAccount(ctx)
			require.NoError(t, err)
			if tt.want == "" {
				assert.Equal(t, first, line)
				return
			}
			assert.True(t, strings.HasPrefix(line, tt.want), line)
			assert.NotContains(t, line, strings.Fields(first)[3], "never the stale password")
			again, err := a.EnsureDemoAccount(ctx)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(again, "no demo login printed"), "still not printed: %s", again)
		})
	}
}

// A store that holds accounts but no demo account gets no demo account,
// and the line says why.
func TestNoDemoLoginForAStoreWithOtherAccounts(t *testing.T) {
	ctx := context.Background()
	a, err := New(ctx, testConfig(t, ""), Options{LogOutput: io.Discard})
	require.NoError(t, err)
	defer a.Close()
	_, err = a.Store().CreateAccount(ctx, store.NewAccount{Email: "ada@example.com", FirstName: "Ada", LastName: "L", PasswordHash: "h", Admin: true})
	require.NoError(t, err)
	line, err := a.EnsureDemoAccount(ctx)
	require.NoError(t, err)
	assert.Equal(t, "no demo login printed: the store holds 1 account and none is demo@example.com; sign in with one of them, or start with an empty data folder", line)
	_, err = a.Store().AccountByEmail(ctx, DemoEmail)
	assert.ErrorIs(t, err, store.ErrNotFound, "no demo account made")
}

// Durations read as Go durations in both log formats.
func TestLoggerWritesDurationsAsDurations(t *testing.T) {
	for format, want := range map[string]string{"json": `"duration":"1.5ms"`, "text": "duration=1.5ms"} {
		var buf strings.Builder
		newLogger(config.Log{Level: "info", Format: format}, &buf).Info("x", "duration", 1500*time.Microsecond)
		assert.Contains(t, buf.String(), want, format)
	}
}

// The emulator's shape file takes the keys of platform.shapes, no more and
// no fewer, and the embedded emulator gets the configured shapes.
func TestEmulatorShapesHaveTheConfigKeys(t *testing.T) {
	var keys []string
	for _, k := range config.Keys(wayin.Sections(Modules())...) {
		if rest, ok := strings.CutPrefix(k, "platform.shapes."); ok {
			keys = append(keys, rest)
		}
	}
	var tags []string
	st := reflect.TypeOf(platformsim.Shapes{})
	for i := range st.NumField() {
		tags = append(tags, st.Field(i).Tag.Get("yaml"))
	}
	assert.ElementsMatch(t, keys, tags)
	assert.Len(t, keys, 16)

	cfg := testConfig(t, "platform:\n  shapes:\n    list_items: data.users\n    list_total_pages: \"\"\n    first_page: 1\n")
	s := emulatorShapes(cfg.Platform.Shapes)
	assert.Equal(t, "data.users", s.ListItems)
	assert.Equal(t, "-", s.ListTotalPages)
	assert.Equal(t, 1, s.FirstPage)
}

// The start line says where this process listens and, when it differs,
// the public URL: two instances behind one proxy tell themselves apart.
func TestStartLineNamesTheListenerAndThePublicURL(t *testing.T) {
	for _, public := range []string{"", "https://sso.partner.example"} {
		cfg := testConfig(t, "")
		cfg.Server.PublicURL = public
		a, err := New(context.Background(), cfg, Options{LogOutput: io.Discard})
		require.NoError(t, err)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		out := &syncbuf.Buffer{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Serve(ctx, ln, out) }()
		local := "http://" + ln.Addr().String()
		ver := "version " + version.Get().Short()
		want := "ssobridge listening on " + local + " (" + ver + ")\n"
		if public != "" {
			want = "ssobridge listening on " + local + " (public URL " + public + ", " + ver + ")\n"
		}
		// The start prints the demo login beside the URL: stop once it is out.
		require.Eventually(t, func() bool { return strings.Contains(out.String(), "demo login") }, 10*time.Second, 5*time.Millisecond)
		assert.True(t, strings.HasPrefix(out.String(), want), "%q", out.String())
		cancel()
		require.NoError(t, <-done)
		a.Close()
	}
}

// A WARN or ERROR line is written at once, after the lines gathered
// before it (in order); INFO lines wait for the flush interval.
func TestUrgentLinesAreWrittenAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	read := func() string { b, _ := os.ReadFile(path); return string(b) }
	a, err := New(context.Background(), testConfig(t, ""), Options{LogOutput: f})
	require.NoError(t, err)
	defer a.Close()
	a.flushLog() // nothing from New is left gathered
	start := len(read())

	a.logger.Info("gathered line")
	assert.NotContains(t, read()[start:], "gathered line", "INFO waits")
	a.logger.Warn("warning line")
	got := read()[start:]
	require.Contains(t, got, "warning line", "WARN is written at once")
	assert.Less(t, strings.Index(got, "gathered line"), strings.Index(got, "warning line"), "with what was gathered before it, in order")
	a.logger.With("k", "v").Error("error line")
	assert.Contains(t, read(), `msg="error line" k=v`, "ERROR too, through a derived logger")
}

// The hourly prune drops the tickets of waiting launches nobody came back
// for, once expired, and keeps the others.
func TestPruneDropsExpiredTickets(t *testing.T) {
	a, err := New(context.Background(), testConfig(t, ""), Options{LogOutput: io.Discard})
	require.NoError(t, err)
	defer a.Close()
	ctx := context.Background()
	acct, err := a.Store().CreateAccount(ctx, store.NewAccount{Email: "p@example.com", FirstName: "P", LastName: "Q", PasswordHash: passhash.NoPassword})
	require.NoError(t, err)
	now := time.Now().Truncate(time.Millisecond)
	for id, expires := range map[string]time.Time{"expired": now.Add(-time.Minute), "fresh": now.Add(time.Hour)} {
		require.NoError(t, a.Store().CreateTicket(ctx, store.Ticket{ID: id, AccountID: acct.ID, ArrivedAt: now, ETA: now, Owner: "x", SeenAt: now, ExpiresAt: expires}))
	}
	a.prunePass(ctx, now)
	_, err = a.Store().TicketByID(ctx, "expired")
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = a.Store().TicketByID(ctx, "fresh")
	assert.NoError(t, err)
}

// Retention deletes batch after batch, each going on where the last
// stopped, until the young events at the log's end (youngStretch of them
// in a row); a failed batch ends the pass with what was deleted so far.
func TestPruneInBatches(t *testing.T) {
	// The log as ids run: old, a chunk of young rows (a clock that ran
	// ahead), old again, then the young tail.
	const young, old = false, true
	var rows []bool
	for _, run := range []struct {
		n   int
		old bool
	}{{2*pruneBatch + 1234, old}, {pruneBatch + 10, young}, {3 * pruneBatch, old}, {youngStretch + 3*pruneBatch, young}} {
		for range run.n {
			rows = append(rows, run.old)
		}
	}
	var calls []int
	var afters []int64
	n, err := pruneInBatches(t.Context(), 25*time.Millisecond, func(_ context.Context, after int64, limit int) (int64, int64, error) {
		calls, afters = append(calls, limit), append(afters, after)
		end := min(int(after)+limit, len(rows))
		var d int64
		for _, o := range rows[after:end] {
			if o {
				d++
			}
		}
		if end == len(rows) {
			return d, 0, nil
		}
		return d, int64(end), nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(5*pruneBatch+1234), n, "every old row, the ones after the young chunk too")
	for _, c := range calls {
		assert.LessOrEqual(t, c, pruneBatch, "bounded statements")
	}
	assert.Equal(t, int64(0), afters[0])
	assert.Less(t, int(afters[len(afters)-1]), len(rows)-pruneBatch, "it stopped in the young tail, not at its end")

	boom := errors.New("store away")
	first := true
	n, err = pruneInBatches(t.Context(), 25*time.Millisecond, func(context.Context, int64, int) (int64, int64, error) {
		if first {
			first = false
			return pruneBatch, pruneBatch, nil
		}
		return 0, 0, boom
	})
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, int64(pruneBatch), n)

	// The walk reached the last event: done, even after a full chunk.
	n, err = pruneInBatches(t.Context(), 25*time.Millisecond, func(context.Context, int64, int) (int64, int64, error) { return pruneBatch, 0, nil })
	require.NoError(t, err)
	assert.Equal(t, int64(pruneBatch), n)
}

// countingPrune counts the chunks of a session prune and their size.
type countingPrune struct {
	s      store.Store
	chunks int
}

func (c *countingPrune) PruneSessions(ctx context.Context, before time.Time, after string, limit int) (int64, string, error) {
	c.chunks++
	return c.s.PruneSessions(ctx, before, after, limit)
}

// The idle-session prune walks every session once, pruneBatch at a time,
// and deletes the idle ones only.
func TestPruneSessionsWalksTheTable(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "db"), nil)
	require.NoError(t, err)
	defer st.Close()
	idle := 2*pruneBatch + 17
	require.NoError(t, sqlstore.FillStore(ctx, st, sqlstore.Fill{Accounts: 10, Sessions: idle, SeenWithin: time.Hour,
		Now: now.Add(-48 * time.Hour), PasswordHash: passhash.NoPassword}))
	acct, err := st.AccountByEmail(ctx, "fill-0000001@fill.example")
	require.NoError(t, err)
	_, fresh := accounts.NewSessionToken()
	require.NoError(t, st.CreateSession(ctx, store.Session{ID: fresh, AccountID: acct.ID, CreatedAt: now, LastSeenAt: now}))
	c := &countingPrune{s: st}
	n, err := pruneSessions(ctx, c, now.Add(-2*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, int64(idle), n)
	assert.Equal(t, 3, c.chunks, "10,018 sessions, 5,000 a chunk")
	_, err = st.SessionByID(ctx, fresh)
	assert.NoError(t, err, "a session in use stays")
}

// A batch that held the writer long is followed by a smaller one, a quick
// one by a larger one, within bounds; SQLite's statements hold its one
// writer for less than PostgreSQL's.
func TestNextBatch(t *testing.T) {
	hold := pruneHoldFor("sqlite")
	assert.Less(t, hold, pruneHoldFor("postgres"), "SQLite's writer is every launch's")
	for _, tc := range []struct {
		limit int
		took  time.Duration
		want  int
	}{
		{pruneBatch, 2*hold + time.Millisecond, pruneBatch / 2},
		{pruneBatch, hold, pruneBatch},
		{pruneBatch, time.Millisecond / 2, pruneBatch},
		{1000, time.Millisecond / 2, 2000},
		{1000, hold, 1000},
		{300, time.Second, pruneMinBatch},
	} {
		assert.Equal(t, tc.want, nextBatch(tc.limit, tc.took, hold), "%d rows in %s", tc.limit, tc.took)
	}
}

// A few fresh rows (and one stamped in the future) before millions of
// old ones no longer stop retention: a pass deletes every expired event
// whatever the order of ids, logs the future one once, and keeps the
// young ones.
func TestRetentionIsNotStoppedByYoungRowsBeforeOldOnes(t *testing.T) {
	var logs syncbuf.Buffer
	a, err := New(context.Background(), testConfig(t, "audit:\n  retention: 24h\n"), Options{LogOutput: &logs})
	require.NoError(t, err)
	defer a.Close()
	ctx := context.Background()
	now := time.Now()
	old, fresh, future := now.Add(-48*time.Hour), now.Add(-time.Hour), now.Add(30*24*time.Hour)
	var evs []store.Event
	stamp := func(n int, at time.Time) {
		for range n {
			evs = append(evs, store.Event{Kind: store.KindLogin, Outcome: "ok", At: at})
		}
	}
	stamp(pruneBatch, old)
	stamp(3, fresh)
	stamp(1, future)
	stamp(3*pruneBatch+7, old)
	stamp(100, fresh) // the log's young tail
	for _, e := range evs {
		require.NoError(t, a.Store().Record(ctx, e))
	}
	a.prunePass(ctx, now)
	_, total, err := a.Store().ListEvents(ctx, store.AuditFilter{Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, 3+1+100, total, "every old event went; the young and the future one stay")
	a.prunePass(ctx, now)
	a.flushLog()
	assert.Equal(t, 1, strings.Count(logs.String(), "audit events stamped in the future"), "logged once")
}

// The embedded demo serves a sample LMS and registers it; serve warns when
// LTI is on over plain http beyond loopback, and not on loopback.
func TestSampleLMSAndPlainHTTPWarning(t *testing.T) {
	var logs syncbuf.Buffer
	a, err := New(context.Background(), testConfig(t, ""), Options{LogOutput: &logs})
	require.NoError(t, err)
	demo := a.Demo("sample LMS")
	require.NotNil(t, demo, "the demo's sample LMS")
	lms := demo.Double.(*samplelms.Running)
	platforms := config.Settings(a.cfg, lti.Section()).Platforms
	require.Len(t, platforms, 1)
	assert.Equal(t, lti.SampleLMSName, platforms[0].Name)
	assert.Equal(t, lms.AuthURL(), platforms[0].AuthURL)
	resp, err := http.Get(platforms[0].JWKSURL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	a.Close()
	assert.NotContains(t, logs.String(), "level=WARN")

	var warned syncbuf.Buffer
	b, err := New(context.Background(), testConfig(t, "server:\n  public_url: http://sso.partner.example\n"), Options{LogOutput: &warned})
	require.NoError(t, err)
	b.Close()
	assert.Contains(t, warned.String(), `level=WARN msg="LTI launches will fail: the bridge is served over plain http at http://sso.partner.example`)

	// A configuration that lists an LMS gets no sample.
	c, err := New(context.Background(), testConfig(t, "lti:\n  platforms:\n    - {name: Canvas, issuer: \"https://canvas.example\", client_id: \"1\", deployment_ids: [d], auth_url: \"https://canvas.example/auth\", jwks_url: \"https://canvas.example/jwks\"}\n"), Options{LogOutput: io.Discard})
	require.NoError(t, err)
	defer c.Close()
	assert.Nil(t, c.Demo("sample LMS"))
}
