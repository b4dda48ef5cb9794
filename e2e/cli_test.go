package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/internal/syncbuf"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

func writeConfig(t *testing.T, body string) (path, dsn string) {
	dir := t.TempDir()
	dsn = filepath.Join(dir, "db.sqlite")
	path = filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf("store:\n  dsn: %s\npassword:\n  argon2_memory_kib: 64\n  argon2_iterations: 1\n", dsn)+body), 0o600))
	return path, dsn
}

// countAccounts counts the accounts in the SQLite store at dsn.
func countAccounts(t *testing.T, dsn string) int {
	t.Helper()
	s, err := sqlstore.OpenSQLite(context.Background(), dsn, nil)
	require.NoError(t, err)
	defer s.Close()
	n, err := s.CountAccounts(context.Background())
	require.NoError(t, err)
	return n
}

func TestUserAdd(t *testing.T) {
	cfg, dsn := writeConfig(t, "")
	count := func() int { return countAccounts(t, dsn) }
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stderr string
	}{
		{"invalid email", "long enough pw\n", []string{"--email", "not-an-email", "--first-name", "A", "--last-name", "B"}, 2, "not an e-mail address"},
		{"missing name", "long enough pw\n", []string{"--email", "a@example.com", "--last-name", "B"}, 2, "--first-name required"},
		{"no flags", "long enough pw\n", nil, 2, "user add: --email, --first-name, --last-name required"},
		{"invalid UTF-8 name", "long enough pw\n", []string{"--email", "a@example.com", "--first-name", "A\xffda", "--last-name", "B"}, 2, "the first name is not valid UTF-8 text"},
		{"control character in name", "long enough pw\n", []string{"--email", "a@example.com", "--first-name", "A", "--last-name", "B\x07"}, 2, "the last name holds a control character"},
		{"empty password", "", []string{"--email", "a@example.com", "--first-name", "A", "--last-name", "B"}, 2, "empty password"},
		{"short password", "short\n", []string{"--email", "a@example.com", "--first-name", "A", "--last-name", "B"}, 2, "at least 8"},
		{"spaces password", "          \n", []string{"--email", "a@example.com", "--first-name", "A", "--last-name", "B"}, 2, "only spaces"},
		{"common password", "Baseball1\n", []string{"--email", "a@example.com", "--first-name", "A", "--last-name", "B"}, 2, "most common"},
		{"unknown flag", "x\n", []string{"--emial", "a@example.com"}, 2, "no flag --emial; did you mean --email?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.stdin, nil, append([]string{"user", "add", "--config", cfg}, tt.args...)...)
			assert.Equal(t, tt.code, code)
			assert.Contains(t, stderr, tt.stderr)
		})
	}
	assert.Equal(t, 0, count(), "bad input wrote nothing")

	code, out, stderr := runCLI(t, "long enough pw\n", nil, "user", "add", "--config", cfg, "--email", "root@example.com", "--first-name", "Root", "--last-name", "Admin", "--admin")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "created admin account root@example.com")
	assert.NotContains(t, out+stderr, "long enough pw", "the password is never echoed")

	code, _, stderr = runCLI(t, "long enough pw\n", nil, "user", "add", "--config", cfg, "--email", "ROOT@example.com", "--first-name", "R", "--last-name", "A")
	assert.Equal(t, 2, code, "a duplicate email is bad input")
	assert.Contains(t, stderr, "an account with email ROOT@example.com exists already: nothing was written")
	assert.Equal(t, 1, count())

	code, _, stderr = runCLI(t, "", nil, "user", "remove")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "the sub-commands are 'user add' and 'user invite'")
	code, _, _ = runCLI(t, "", nil, "frobnicate")
	assert.Equal(t, 2, code)
}

func TestCheckCommand(t *testing.T) {
	admin := platformsim.Credential{Key: "admin-key", Secret: "admin-secret", Admin: true}
	member := platformsim.Credential{Key: "member-key", Secret: "member-secret"}
	sim, err := platformsim.New(platformsim.Config{Credentials: []platformsim.Credential{admin, member}})
	require.NoError(t, err)
	running, err := platformsim.Start(sim, "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { running.Close() })
	cfg, _ := writeConfig(t, "platform:\n  base_url: "+running.URL+"\n")

	env := func(key, secret string) []string {
		return []string{"SSOBRIDGE_PLATFORM_API_KEY=" + key, "SSOBRIDGE_PLATFORM_API_SECRET=" + secret}
	}
	tests := []struct {
		name    string
		env     []string
		offset  time.Duration
		code    int
		verdict string
		mention string // a regular expression
	}{
		{"ok", env("admin-key", "admin-secret"), 0, 0, "OK", "admin of the Instance"},
		{"member credential", env("member-key", "member-secret"), 0, 1, "FORBIDDEN", "not an admin of the Instance"},
		{"wrong secret", env("admin-key", "wrong-secret"), 0, 1, "CREDENTIALS", "the API secret, not the API key"},
		// The offset is read from the Date header, to the second, against
		// this side's clock: a slow answer on a loaded machine adds one.
		{"platform clock 10 min ahead", env("admin-key", "admin-secret"), 10 * time.Minute, 1, "CLOCK_SKEW", `(9m59s|10m0s|10m1s) ahead of`},
		{"simple method", append(env("", "admin-secret"), "SSOBRIDGE_PLATFORM_AUTH=simple"), 0, 0, "OK", "simple"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim.SetClockOffset(tt.offset)
			code, out, stderr := runCLI(t, "", tt.env, "check", "--config", cfg)
			assert.Equal(t, tt.code, code, stderr)
			assert.Contains(t, out, "verdict:   "+tt.verdict)
			assert.Regexp(t, tt.mention, out)
			assert.NotContains(t, out+stderr, "admin-secret", "the secret is never printed")
		})
	}
	sim.SetClockOffset(0)

	wrongURL, _ := writeConfig(t, "platform:\n  base_url: "+running.URL+"/nested\n")
	code, out, _ := runCLI(t, "", env("admin-key", "admin-secret"), "check", "--config", wrongURL)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "NOT_FOUND")
	assert.Contains(t, out, "without /api/5")

	code, out, _ = runCLI(t, "", nil, "check", "--config", cfg)
	assert.Equal(t, 2, code, "config without secret: bad input")
	assert.Empty(t, out)
}

func TestCheckEmbedded(t *testing.T) {
	// A running demo holds platform.embedded_addr: the check's throwaway
	// emulator takes another port.
	demo, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer demo.Close()
	cfg, _ := writeConfig(t, "platform:\n  embedded_addr: "+demo.Addr().String()+"\n")
	code, out, stderr := runCLI(t, "", nil, "check", "--config", cfg)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "platform:  a built-in emulator started for this check at http://127.0.0.1:")
	assert.Contains(t, out, "not the one a running demo serves")
	assert.Contains(t, out, "verdict:   OK (a throwaway built-in emulator, not the real platform)")
	assert.Contains(t, out, "To check the real platform, set platform.base_url (SSOBRIDGE_PLATFORM_BASE_URL)")
	assert.Contains(t, out, "ways in:   who may arrive as whom")
	assert.Contains(t, out, "portal: accounts of portal.example; creates accounts: true; grants no admin", "the sample portal is trusted for its domain")

	lms, _ := writeConfig(t, `lti:
  platforms:
    - name: Open LMS
      issuer: https://lms.example
      client_id: "1"
      deployment_ids: ["d"]
      auth_url: http://127.0.0.1:1/auth
      jwks_url: http://127.0.0.1:1/jwks
      admin_roles: [Administrator]
`)
	_, out, _ = runCLI(t, "", nil, "check", "--config", lms)
	assert.Contains(t, out, "LTI: Open LMS: OPEN: only the accounts it made or linked (set lti.platforms[0].email_domains to let it reach existing accounts of your domains); creates accounts: true; grants and removes the admin role")
}

func TestServeRejectsBadConfig(t *testing.T) {
	cfg, _ := writeConfig(t, "server:\n  adress: x\n")
	code, _, stderr := runCLI(t, "", nil, "serve", "--config", cfg)
	assert.Equal(t, 2, code, "bad input: exit 2")
	assert.Contains(t, stderr, "server.adress")
	assert.Contains(t, stderr, "did you mean server.addr?")
	good, _ := writeConfig(t, "")
	code, _, stderr = runCLI(t, "", []string{"SSOBRIDGE_PLATFORM_SECRET=1"}, "--config", good)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "did you mean SSOBRIDGE_PLATFORM_API_SECRET?")
	for _, cmd := range [][]string{{"check"}, {"user", "invite", "--email", "a@example.com"}, {"bans", "list"}, {"portal-link", "--email", "a@example.com"}} {
		code, _, stderr = runCLI(t, "", nil, append(cmd, "--config", cfg)...)
		assert.Equal(t, 2, code, "%v: a bad configuration is bad input", cmd)
		assert.Contains(t, stderr, "server.adress")
	}
}

// The demo prints its login, stops cleanly on an interrupt, and a second
// start prints the same login.
func TestServeDemoPrintsLoginAndStops(t *testing.T) {
	cfg, _ := writeConfig(t, "server:\n  addr: 127.0.0.1:0\n")
	cmd, out, errOut := startCLI(t, nil, "--config", cfg)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "demo login: demo@example.com ") }, 30*time.Second, 20*time.Millisecond)
	lines := strings.Split(out.String(), "\n")
	assert.True(t, strings.HasPrefix(lines[0], "ssobridge listening on http://127.0.0.1:"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "demo login: demo@example.com "), "the login beside the URL: %q", lines[1])
	// Written after the login: waited for, not read at once.
	assert.True(t, strings.HasPrefix(waitForURL(t, out, `platform emulator \(embedded\) at (\S+)`), "http://127.0.0.1:"))
	assert.Equal(t, 0, stop(t, cmd), errOut.String())
	assert.Contains(t, errOut.String(), `level=INFO msg="session keys generated for the demo"`, "the demo's own keys are expected")
	assert.NotContains(t, errOut.String(), "level=WARN", "a fresh demo starts without a warning")
	assert.Contains(t, errOut.String(), "shutting down")
	assert.True(t, strings.HasSuffix(out.String(), "ssobridge stopped\n"), "the last line says it stopped: %q", out.String())

	cmd, out2, _ := startCLI(t, nil, "--config", cfg)
	require.Eventually(t, func() bool { return strings.Contains(out2.String(), "demo login:") }, 30*time.Second, 20*time.Millisecond)
	assert.Equal(t, 0, stop(t, cmd))
	line := func(s string) string {
		s = s[strings.Index(s, "demo login:"):]
		return s[:strings.IndexByte(s, '\n')]
	}
	assert.Equal(t, line(out.String()), line(out2.String()))
}

func TestPlatformSimCommand(t *testing.T) {
	cmd, out, errOut := startCLI(t, nil, "platform-sim", "--addr", "127.0.0.1:0", "--api-key", "k1", "--api-secret", "s1", "--rate-limit", "100")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "member credential") }, 30*time.Second, 10*time.Millisecond)
	assert.Contains(t, out.String(), "admin credential:  key=k1 secret=s1")
	base := strings.Fields(out.String())[3] // "platform emulator at <url> ..."
	// A call signed by hand in the simple method is accepted.
	req, _ := http.NewRequest("GET", base+"/api/5/public/users", nil)
	req.Header.Set("Authorization", "SVCSIMPLE s1")
	resp, err := http.DefaultTransport.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 0, stop(t, cmd))
	assert.NotContains(t, errOut.String(), "s1\"", "the log does not repeat the secret")

	for _, bad := range [][]string{{"--rate-limit", "-1"}, {"--latency", "-1s"}, {"--latency", "2m"}} {
		code, _, stderr := runCLI(t, "", nil, append([]string{"platform-sim"}, bad...)...)
		assert.Equal(t, 2, code, bad)
		assert.Contains(t, stderr, bad[0], bad)
	}
}

// TestHelpAndVersion: the help lists every command and the configuration
// rules; every command has its own --help; version names the revision.
func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		code, out, stderr := runCLI(t, "", nil, args...)
		assert.Equal(t, 0, code, stderr)
		for _, want := range []string{"serve", "user add", "check", "platform-sim", "version",
			"  portal-link    print a signed portal handoff URL (/sso/jwt) for trying it out\n  bans list", // a module's command, in its place
			"SSOBRIDGE_PLATFORM_API_SECRET", "./config.yaml", "--help"} {
			assert.Contains(t, out, want, args)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--help"}, "usage: ssobridge serve [--config FILE]"},
		{[]string{"user", "add", "--help"}, "usage: ssobridge user add --email E"},
		{[]string{"user", "--help"}, "usage: ssobridge user add --email E"},
		{[]string{"check", "--help"}, "usage: ssobridge check [--config FILE]"},
		{[]string{"platform-sim", "--help"}, "usage: ssobridge platform-sim"},
		{[]string{"bans", "--help"}, "usage: ssobridge bans list"},
		{[]string{"bans", "revoke", "--help"}, "usage: ssobridge bans revoke (--email E | --ip IP)"},
	} {
		code, out, stderr := runCLI(t, "", nil, tt.args...)
		assert.Equal(t, 0, code, "%v: %s", tt.args, stderr)
		assert.True(t, strings.HasPrefix(out, tt.want), "%v: %q", tt.args, out)
		assert.Contains(t, out, "flags:\n  -", tt.args)
	}
	code, _, stderr := runCLI(t, "", nil, "check", "--nope")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "see 'ssobridge check --help'")

	git := exec.Command("git", "rev-parse", "HEAD")
	git.Dir = ".."
	head, err := git.Output()
	require.NoError(t, err, "the tests run in a git checkout")
	for _, arg := range []string{"version", "--version"} {
		code, out, _ := runCLI(t, "", nil, arg)
		assert.Equal(t, 0, code)
		assert.Regexp(t, `^ssobridge \S+, commit `+strings.TrimSpace(string(head))+`( with uncommitted changes)?, built `, out)
	}
}

// With log.format json every line the bridge writes, start-up lines
// included, is a JSON object, and durations read as Go durations ("1.2ms"),
// not nanosecond integers.
func TestJSONLogsAreJSONThroughout(t *testing.T) {
	cfg, _ := writeConfig(t, "server:\n  addr: 127.0.0.1:0\n")
	cmd, out, errOut := startCLI(t, []string{"SSOBRIDGE_LOG_FORMAT=json"}, "--config", cfg)
	var base string
	require.Eventually(t, func() bool {
		for _, line := range strings.Split(out.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["url"] != nil && m["msg"] == "ssobridge listening" {
				base = m["url"].(string)
			}
		}
		return base != "" && strings.Contains(out.String(), "demo login")
	}, 30*time.Second, 20*time.Millisecond, "stdout: %s", out.String())
	resp, err := http.Get(base + "/login")
	require.NoError(t, err)
	resp.Body.Close()
	require.Eventually(t, func() bool { return strings.Contains(errOut.String(), `"path":"/login"`) }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, 0, stop(t, cmd))

	durations := 0
	for name, text := range map[string]string{"stdout": out.String(), "stderr": errOut.String()} {
		for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &m), "%s line is not JSON: %q", name, line)
			for k, v := range m {
				if k == "duration" || k == "retention" || strings.HasSuffix(k, "_timeout") {
					durations++
					s, ok := v.(string)
					require.True(t, ok, "%s: %s is %v, not a duration string", name, k, v)
					_, err := time.ParseDuration(s)
					assert.NoError(t, err, "%s: %s=%q", name, k, s)
				}
			}
		}
	}
	assert.Positive(t, durations, "the request log carried a duration")
}

// Two `user add` started together on a fresh data folder both succeed:
// migrations run under a lock on SQLite too (before, the second failed
// with "table accounts already exists" in 3 of 5 tries).
func TestUserAddTwiceAtOnceOnAFreshStore(t *testing.T) {
	for round := range 3 {
		cfg, dsn := writeConfig(t, "")
		// Prepared here, run at once below (no assertion in the goroutines).
		var cmds []*exec.Cmd
		var outs []*bytes.Buffer
		for i := range 2 {
			cmd := command(t, t.Context(), nil, "user", "add", "--config", cfg,
				"--email", fmt.Sprintf("u%d-%d@example.com", round, i), "--first-name", "U", "--last-name", "V")
			var out bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(testPassword+"\n"), &out, &out
			cmds, outs = append(cmds, cmd), append(outs, &out)
		}
		errs := make([]error, 2)
		done := make(chan struct{})
		for i, cmd := range cmds {
			go func() { errs[i] = cmd.Run(); done <- struct{}{} }()
		}
		<-done
		<-done
		for i := range 2 {
			assert.NoError(t, errs[i], "round %d, command %d: %s", round, i, outs[i])
		}
		s, err := sqlstore.OpenSQLite(context.Background(), dsn, nil)
		require.NoError(t, err)
		n, err := s.CountAccounts(context.Background())
		s.Close()
		require.NoError(t, err)
		assert.Equal(t, 2, n)
	}
}

// platform-sim --shapes answers in the file's shapes; a file it cannot
// use stops it with exit 2, naming the problem.
func TestPlatformSimShapes(t *testing.T) {
	file, err := filepath.Abs(filepath.Join("testdata", "shapes-bare-array.yaml"))
	require.NoError(t, err)
	cmd, out, _ := startCLI(t, nil, "platform-sim", "--addr", "127.0.0.1:0", "--api-key", "k1", "--api-secret", "s1", "--shapes", file)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "member credential") }, 30*time.Second, 10*time.Millisecond)
	base := strings.Fields(out.String())[3]
	get := func(path string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "SVCSIMPLE s1")
		resp, err := http.DefaultTransport.RoundTrip(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := get("/api/5/people?search=x&offset_page=1&limit=3")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "[]", strings.TrimSpace(body), "a bare array")
	status, _ = get("/api/5/public/users")
	assert.Equal(t, http.StatusNotFound, status, "not at the default path")
	assert.Equal(t, 0, stop(t, cmd))

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("list_itemz: data\n"), 0o600))
	code, _, stderr := runCLI(t, "", nil, "platform-sim", "--shapes", bad)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "list_itemz")
}

// The bridge's binary does not carry the load tool: it is a program of
// its own, and `ssobridge bench` says where it went.
func TestLoadToolIsAProgramOfItsOwn(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/ssobridge/ssobridge").Output()
	require.NoError(t, err)
	assert.NotContains(t, string(out), "github.com/ssobridge/ssobridge/loadtest")
	out, err = exec.Command("go", "list", "-deps", "github.com/ssobridge/ssobridge/cmd/ssobridge-bench").Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "github.com/ssobridge/ssobridge/loadtest")
	code, _, stderr := runCLI(t, "", nil, "bench")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "go run ./cmd/ssobridge-bench")
}

// On the embedded demo, `provision` has no platform of its own to work
// on: it refuses before doing anything (a throwaway emulator's ids would
// link the demo's accounts to other people's platform users).
func TestProvisionRefusesTheEmbeddedDemo(t *testing.T) {
	cfg, dsn := writeConfig(t, "")
	roll := filepath.Join(t.TempDir(), "roll.csv")
	require.NoError(t, os.WriteFile(roll, []byte("alan@example.com,Alan,Turing\nkat@example.com,Katherine,Johnson\n"), 0o600))
	for _, args := range [][]string{{"--csv", roll}, {"--all"}} {
		code, out, stderr := runCLI(t, "", nil, append([]string{"provision", "--config", cfg}, args...)...)
		assert.Equal(t, 2, code, stderr)
		assert.Empty(t, out)
		assert.Contains(t, stderr, `platform.base_url is "embedded"`)
		assert.Contains(t, stderr, "Nothing was done")
		assert.Contains(t, stderr, "Provisioning page")
		assert.Contains(t, stderr, "SSOBRIDGE_PLATFORM_BASE_URL")
	}
	assert.Zero(t, countAccounts(t, dsn), "no account added")
	_, err := os.Stat(strings.TrimSuffix(roll, ".csv") + ".report.csv")
	assert.ErrorIs(t, err, os.ErrNotExist, "no report written")
}

// `provision` refuses a bad command line or file with exit 2 and changes
// nothing; --dry-run says what it would do and does nothing.
func TestProvisionCommandInput(t *testing.T) {
	sim := morningPlatform(t)
	cred := sim.Credentials()[0]
	cfg, dsn := writeConfig(t, fmt.Sprintf("platform:\n  base_url: %s\n  api_key: %s\n  api_secret: %s\n  rate_limit: 20\n", sim.URL, cred.Key, cred.Secret))
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("email,firstName,lastName\nok@example.com,Ok,Fine\nnot-an-address,A,B\nshort@example.com,Only\n"), 0o600))
	good := filepath.Join(dir, "good.csv")
	require.NoError(t, os.WriteFile(good, []byte("a@example.com,A,One\nb@example.com,B,Two\n"), 0o600))
	count := func() int { return countAccounts(t, dsn) }
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"neither --csv nor --all", nil, "give either --csv FILE or --all"},
		{"both", []string{"--csv", good, "--all"}, "give either --csv FILE or --all"},
		{"no such file", []string{"--csv", filepath.Join(dir, "nope.csv")}, "no such file"},
		{"bad rows", []string{"--csv", bad}, "row 3"},
		{"workers", []string{"--all", "--workers", "0"}, "--workers 0 is out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", nil, append([]string{"provision", "--config", cfg}, tc.args...)...)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
	_, _, stderr := runCLI(t, "", nil, "provision", "--config", cfg, "--csv", bad)
	assert.Contains(t, stderr, "row 4", "every problem, by row")
	assert.Zero(t, count(), "nothing added")

	// Counted as English counts (CLDR: one, other), as the pages do.
	single := filepath.Join(dir, "single.csv")
	require.NoError(t, os.WriteFile(single, []byte("email,firstName,lastName\nsolo@example.com,So,Lo\n"), 0o600))
	code, out, stderr := runCLI(t, "", nil, "provision", "--config", cfg, "--csv", single, "--dry-run")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "1 account to provision (0 already linked); of them 1 local account to add first (without a password); about 2 platform calls")

	code, out, stderr = runCLI(t, "", nil, "provision", "--config", cfg, "--csv", good, "--dry-run")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "2 accounts to provision (0 already linked); of them 2 local accounts to add first")
	assert.Contains(t, out, "dry run: nothing was done")
	assert.Zero(t, count())
	assert.Empty(t, sim.Server.Users("a@example.com"))

	code, out, stderr = runCLI(t, "", nil, "provision", "--config", cfg, "--csv", good)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "created 2, existed 0, already linked 0, failed 0")
	assert.Contains(t, out, "provision: 2/2", "plain progress lines when not at a terminal")
	firstPath := reportOf(t, out)
	assert.Regexp(t, `^good\.report-\d{8}-\d{6}(-\d+)?\.csv$`, filepath.Base(firstPath), "beside the roll, the run's time in its name")
	report, err := os.ReadFile(firstPath)
	require.NoError(t, err)
	assert.Contains(t, string(report), "email,outcome,platform_user_id,reason\n")
	assert.Contains(t, string(report), "a@example.com,created,")
	code, out, _ = runCLI(t, "", nil, "provision", "--config", cfg, "--csv", good)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "0 accounts to provision (2 already linked)", "nothing repeated")
	assert.Contains(t, out, "created 0, existed 0, already linked 2, failed 0", "the summary agrees with the plan")
	// The second run (a no-op) wrote its own report: the first, with who
	// got which platform user, is intact.
	assert.NotEqual(t, firstPath, reportOf(t, out))
	again, err := os.ReadFile(firstPath)
	require.NoError(t, err)
	assert.Equal(t, string(report), string(again), "the first report is kept")
	// A --report the admin names is never overwritten either.
	code, out, stderr = runCLI(t, "", nil, "provision", "--config", cfg, "--csv", good, "--report", firstPath)
	assert.Equal(t, 2, code, out)
	assert.Contains(t, stderr, "exists; nothing was done. A report is never overwritten")
	again, err = os.ReadFile(firstPath)
	require.NoError(t, err)
	assert.Equal(t, string(report), string(again))

	// A spreadsheet's "CSV UTF-8" (a byte-order mark, no header line) for a
	// person who has an account: nothing new, no second platform user.
	bom := filepath.Join(dir, "bom.csv")
	require.NoError(t, os.WriteFile(bom, []byte("\ufeffa@example.com,A,One\n"), 0o600))
	code, out, stderr = runCLI(t, "", nil, "provision", "--config", cfg, "--csv", bom)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "0 accounts to provision (1 already linked)")
	assert.Contains(t, out, "already linked 1,")
	assert.Equal(t, 2, count(), "no second account")
	assert.Len(t, sim.Server.Users("a@example.com"), 1)

	// Addresses a spreadsheet would run as formulas go into the report
	// inert.
	formulas := filepath.Join(dir, "formulas.csv")
	require.NoError(t, os.WriteFile(formulas, []byte("=1+2@example.com,F,One\n+cmd@example.com,F,Two\n-x@example.com,F,Three\n"), 0o600))
	code, out, stderr = runCLI(t, "", nil, "provision", "--config", cfg, "--csv", formulas)
	require.Equal(t, 0, code, stderr)
	report, err = os.ReadFile(reportOf(t, out))
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(report)), "\n")[1:] {
		assert.True(t, strings.HasPrefix(line, "'"), "an inert cell: %q", line)
	}
	assert.Contains(t, string(report), "'=1+2@example.com,created,")
}

// What a newcomer meets first at the command line: a busy port says how to
// choose another and creates nothing; a missing or broken --config file is
// bad input (exit 2) naming the file; a mistyped command gets its nearest
// name; a bad flag's message is not followed by an unrelated hint.
func TestCommandLineFirstSteps(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	cmd := command(t, t.Context(), []string{"SSOBRIDGE_SERVER_ADDR=" + busy.Addr().String()})
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.ExitCode())
	assert.Contains(t, stderr.String(), "the port is in use")
	assert.Contains(t, stderr.String(), "SSOBRIDGE_SERVER_ADDR=127.0.0.1:8081 go run .")
	_, err = os.Stat(filepath.Join(cmd.Dir, "data"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a busy port creates no data folder")

	broken := filepath.Join(t.TempDir(), "broken.yaml")
	require.NoError(t, os.WriteFile(broken, []byte("server: [\n"), 0o600))
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"a missing --config file", []string{"--config", missing}, []string{"config: " + missing + ": no such file or directory"}},
		{"a missing --config file, another command", []string{"check", "--config", missing}, []string{missing}},
		{"invalid YAML names the file", []string{"--config", broken}, []string{"config: " + broken + ": line 1"}},
		{"a mistyped command", []string{"serv"}, []string{`unknown command "serv"; did you mean 'serve'?`, "ssobridge help"}},
		{"another mistyped command", []string{"provison"}, []string{"did you mean 'provision'?"}},
		{"a mistyped command of a module", []string{"portal-lnk"}, []string{"did you mean 'portal-link'?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runCLI(t, "", nil, tc.args...)
			assert.Equal(t, 2, code, "bad input: exit 2")
			assert.Empty(t, out)
			for _, w := range tc.want {
				assert.Contains(t, stderr, w)
			}
			assert.NotContains(t, stderr, "(file)")
		})
	}
	code, _, stderr2 := runCLI(t, "", nil, "provision", "--workers", "0", "--all")
	assert.Equal(t, 2, code)
	assert.NotContains(t, stderr2, "ssobridge help", "an input error is not followed by an unrelated hint")
}

// reportOf is the report a provision run says it wrote.
func reportOf(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^report: (.+)$`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	return m[1]
}

// On SIGTERM the final line on one terminal (stdout and stderr together)
// is "ssobridge stopped", after every log line of the stop, in text and
// in JSON.
func TestServeSaysStoppedLast(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			cfg, _ := writeConfig(t, "server:\n  addr: 127.0.0.1:0\nlog:\n  format: "+format+"\n")
			cmd := command(t, t.Context(), nil, "--config", cfg)
			both := &syncbuf.Buffer{}
			cmd.Stdout, cmd.Stderr = both, both
			require.NoError(t, cmd.Start())
			require.Eventually(t, func() bool { return strings.Contains(both.String(), "demo login") }, 30*time.Second, 20*time.Millisecond)
			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
			require.NoError(t, cmd.Wait())
			lines := strings.Split(strings.TrimSpace(both.String()), "\n")
			last := lines[len(lines)-1]
			assert.Contains(t, both.String(), "shutting down")
			if format == "text" {
				assert.Equal(t, "ssobridge stopped", last, both.String())
			} else {
				assert.Contains(t, last, `"msg":"ssobridge stopped"`, both.String())
			}
		})
	}
}
