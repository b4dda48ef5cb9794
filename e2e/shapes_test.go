package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/demo/platformsim"
)

// shapedPlatform starts an emulator shaped by the file (its {port}
// replaced by the emulator's port) and returns it with the bridge's
// platform.shapes lines for the same file.
func shapedPlatform(t *testing.T, file string) (*platformsim.Running, string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	require.NoError(t, err)
	port := freePort(t)
	text := strings.ReplaceAll(string(data), "{port}", fmt.Sprint(port))
	path := filepath.Join(t.TempDir(), file)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	shapes, err := platformsim.LoadShapes(path)
	require.NoError(t, err)
	sim, err := platformsim.New(platformsim.Config{Credentials: []platformsim.Credential{platformsim.NewCredential(true)}, Shapes: shapes})
	require.NoError(t, err)
	run, err := platformsim.Start(sim, fmt.Sprintf("127.0.0.1:%d", port))
	require.NoError(t, err)
	t.Cleanup(func() { run.Close() })
	var bridge strings.Builder
	bridge.WriteString("  shapes:\n")
	for _, line := range strings.Split(text, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			bridge.WriteString("    " + line + "\n")
		}
	}
	return run, bridge.String()
}

// The whole flow against platforms shaped otherwise in every open part: a
// new user looked up over several pages and created, a returning user, a
// deep link, a 409 race, a stale link; and `check` against them.
func TestFlowUnderOtherShapes(t *testing.T) {
	for _, tc := range []struct {
		file     string
		deepLink bool // the token request carries the landing path
		exchange string
	}{
		{"shapes-nested.yaml", true, "http://localhost:%d/sso/exchange/"},
		{"shapes-bare-array.yaml", false, "http://127.0.0.1:%d/api/5/exchange/"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			sim, shapesYAML := shapedPlatform(t, tc.file)
			ta := startTestApp(t, testOptions{platform: sim, platformYAML: shapesYAML})
			port := strings.TrimPrefix(sim.URL, "http://127.0.0.1:")
			exchangePrefix := fmt.Sprintf(tc.exchange, mustAtoi(t, port))

			// Decoys that the substring lookup finds first: several pages of them.
			for i := range 7 {
				_, err := sim.AddUser("D", "Ecoy", fmt.Sprintf("ada@example.com.d%d.test", i))
				require.NoError(t, err)
			}
			ta.addAccount(t, "ada@example.com", false)
			b := ta.browser(t)
			require.Equal(t, http.StatusSeeOther, b.login("ada@example.com", testPassword).status)

			ta.calls()
			first := b.launch()
			require.Equal(t, http.StatusSeeOther, first.status, first.body)
			assert.True(t, strings.HasPrefix(first.header.Get("Location"), exchangePrefix), "the configured exchange URL: %s", first.header.Get("Location"))
			calls := ta.calls()
			assert.Greater(t, calls["list_users"], 2, "the lookup walked several pages")
			assert.Equal(t, 1, calls["create_user"], "then created the user")
			path, editor := b.follow(t, ta, first)
			assert.Equal(t, "/editor", path)
			assert.Contains(t, editor, "Signed in as Ada Lovelace")
			require.Len(t, sim.Users("ada@example.com"), 1)

			ta.calls()
			again := b.launch()
			require.Equal(t, http.StatusSeeOther, again.status)
			assert.Equal(t, map[string]int{"issue_token": 1}, ta.calls(), "a returning user: one call")

			deep := b.get("/open?return_to=" + url.QueryEscape("/editor/projects/42"))
			path, _ = b.follow(t, ta, deep)
			if tc.deepLink {
				assert.Equal(t, "/editor/projects/42", path, "the landing path went where the shapes say")
			} else {
				assert.Equal(t, "/editor", path, "no body: the platform's landing page")
			}

			// A 409 race: someone else creates the user between the lookup and the create.
			ta.addAccount(t, "grace@example.com", false)
			g := ta.browser(t)
			require.Equal(t, http.StatusSeeOther, g.login("grace@example.com", testPassword).status)
			sim.InjectFault(platformsim.EndpointCreateUser, platformsim.Fault{Ghost: true, Status: http.StatusConflict, Times: 1})
			r := g.launch()
			require.Equal(t, http.StatusSeeOther, r.status, r.body)
			_, editor = g.follow(t, ta, r)
			assert.Contains(t, editor, "grace@example.com")
			assert.Len(t, sim.Users("grace@example.com"), 1, "no duplicate")

			// A stale link: the platform user is gone; the bridge makes a new one.
			for _, u := range sim.Users("ada@example.com") {
				sim.DeleteUser(u.ID)
			}
			ta.calls()
			r = b.launch()
			require.Equal(t, http.StatusSeeOther, r.status, r.body)
			assert.Equal(t, 2, ta.calls()[platformsim.EndpointIssueToken], "a 404 on the old link, then a token for the new user")
			_, editor = b.follow(t, ta, r)
			assert.Contains(t, editor, "Signed in as Ada Lovelace")
			assert.Len(t, sim.Users("ada@example.com"), 1)
		})
	}
}

// `check` reads the first page through the configured shapes and names
// the key that does not fit a platform shaped otherwise; with the right
// shapes it is OK. A shape key that cannot work stops the start, named.
func TestCheckNamesTheShapeKey(t *testing.T) {
	sim, shapesYAML := shapedPlatform(t, "shapes-nested.yaml")
	_, err := sim.AddUser("Ada", "L", "ada@example.com")
	require.NoError(t, err)
	cred := sim.Credentials()[0]
	env := []string{"SSOBRIDGE_PLATFORM_API_KEY=" + cred.Key, "SSOBRIDGE_PLATFORM_API_SECRET=" + cred.Secret}
	base := "platform:\n  base_url: " + sim.URL + "\n"
	for _, tc := range []struct {
		name, shapes string
		code         int
		mention      []string
	}{
		{"the right shapes", shapesYAML, 0, []string{"verdict:   OK"}},
		{"default shapes", "", 1, []string{"verdict:   NOT_FOUND", "platform.shapes.users_path"}},
		{"items elsewhere", strings.Replace(shapesYAML, "list_items: data.users", "list_items: content", 1), 1,
			[]string{"platform.shapes.list_items", "no array at `content`", "the answer has an array at `data.users`"}},
		{"id elsewhere", strings.Replace(shapesYAML, "user_id: id", "user_id: userId", 1), 1,
			[]string{"platform.shapes.user_id", "no id (string or number) at `userId`", "`id`"}},
		{"page count elsewhere", strings.Replace(shapesYAML, "list_total_pages: data.paging.pages", "list_total_pages: totalPages", 1), 1,
			[]string{"platform.shapes.list_total_pages", "`data.paging.pages`"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := writeConfig(t, base+tc.shapes)
			code, out, stderr := runCLI(t, "", env, "check", "--config", cfg)
			assert.Equal(t, tc.code, code, stderr)
			for _, m := range tc.mention {
				assert.Contains(t, out, m)
			}
		})
	}

	for key, value := range map[string]string{"FIRST_PAGE": "2", "TOKEN_PATH": "/login-token", "LIST_ITEMS": "data..users", "EXCHANGE_URL": "/relative/{token}", "TOKEN_METHOD": "DELETE"} {
		cfg, _ := writeConfig(t, base)
		code, _, stderr := runCLI(t, "", append(env, "SSOBRIDGE_PLATFORM_SHAPES_"+key+"="+value), "check", "--config", cfg)
		assert.NotEqual(t, 0, code, key)
		assert.Contains(t, stderr, "platform.shapes."+strings.ToLower(key), "the message names the key")
	}
}

func mustAtoi(t *testing.T, s string) int {
	var n int
	_, err := fmt.Sscan(s, &n)
	require.NoError(t, err)
	return n
}
