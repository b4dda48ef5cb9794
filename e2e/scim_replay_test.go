package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/demo/platformsim"
)

// The requests Entra ID and Okta send, as github.com/elimity-com/scim's
// maintainers captured them from each vendor's documented provisioning
// sequence (its internal/idp_test/testdata, read from the module cache at
// the version go.mod pins): requests this project did not write, replayed
// against two instances on PostgreSQL, alternating between them. Their ids
// are the capture's: each sequence maps them to the ids this bridge gave.

// capture is one recorded exchange.
type capture struct {
	Method     string          `json:"method"`
	Path       string          `json:"path"`
	Request    json.RawMessage `json:"request"`
	Response   map[string]any  `json:"response"`
	StatusCode int             `json:"statusCode"`
}

// captures is where the module keeps them.
func capturesDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/elimity-com/scim").Output()
	require.NoError(t, err, "go list the SCIM module (its source is in the module cache once the project builds)")
	dir := filepath.Join(strings.TrimSpace(string(out)), "internal", "idp_test", "testdata")
	_, err = os.Stat(dir)
	require.NoError(t, err, "the module's captured IdP requests")
	return dir
}

// replayStep replays one capture; check looks at the answer (right
// after it came).
type replayStep struct {
	file  string
	check func(t *testing.T, got map[string]any, want capture)
}

// replay plays a sequence, request i on instance i%2, rewriting the
// capture's ids (ids: capture's -> ours, grown as creates answer) and
// asserting the capture's status.
func replay(t *testing.T, apps []*testApp, dir string, ids map[string]string, steps []replayStep) {
	t.Helper()
	for i, st := range steps {
		raw, err := os.ReadFile(filepath.Join(dir, st.file))
		require.NoError(t, err)
		var c capture
		require.NoError(t, json.Unmarshal(raw, &c))
		path, body := c.Path, string(c.Request)
		if body == "null" {
			body = ""
		}
		for from, to := range ids {
			path, body = strings.ReplaceAll(path, from, to), strings.ReplaceAll(body, from, to)
		}
		status, got := scimCall(t, apps[i%len(apps)], c.Method, path, body)
		require.Equal(t, c.StatusCode, status, "%s: %s %s: %v", st.file, c.Method, path, got)
		if c.Method == "POST" {
			ids[c.Response["id"].(string)] = got["id"].(string)
		}
		if st.check != nil {
			st.check(t, got, c)
		}
	}
}

func field(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		o, _ := v.(map[string]any)
		v = o[p]
	}
	return v
}

func TestSCIMReplaysEntraIDAndOkta(t *testing.T) {
	sim := sharedPlatform(t, nil)
	a, b := instancePair(t, withSCIM(testOptions{platform: sim}))
	apps := []*testApp{a, b}
	dir := capturesDir(t)

	t.Run("Entra ID", func(t *testing.T) {
		// The captures name the user and the group by several ids, and
		// the filtered userName by another name than the created one.
		ids := map[string]string{}
		total := func(n float64) func(t *testing.T, got map[string]any, _ capture) {
			return func(t *testing.T, got map[string]any, _ capture) { assert.Equal(t, n, got["totalResults"]) }
		}
		replay(t, apps, filepath.Join(dir, "azuread"), ids, []replayStep{
			{"get_user_query_0.json", total(0)},
			{"create_user.json", func(t *testing.T, got map[string]any, _ capture) {
				for _, alias := range []string{"5d48a0a8e9f04aa38008", "6764549bef60420686bc", "f648f8d5ea4e4cd38e9c"} {
					ids[alias] = got["id"].(string)
				}
				ids["Test_User_dfeef4c5-5681-4387-b016-bdf221e82081"] = "Test_User_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com"
				assert.Equal(t, "Test_User_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com", got["userName"], "a userName that is no address: the work email is")
				assert.Equal(t, "familyName", field(got, "name", "familyName"))
			}},
			{"get_user_resp.json", func(t *testing.T, got map[string]any, _ capture) { assert.Equal(t, true, got["active"]) }},
			{"get_user_query_resp.json", total(1)},
			{"update_user.json", func(t *testing.T, got map[string]any, want capture) {
				assert.Equal(t, want.Response["userName"], got["userName"])
				assert.Equal(t, field(want.Response, "name", "familyName"), field(got, "name", "familyName"))
				assert.Equal(t, false, got["active"])
			}},
			{"create_group.json", func(t *testing.T, got map[string]any, _ capture) {
				ids["40734ae655284ad3abcc"], ids["fa2ce26709934589afc5"] = got["id"].(string), got["id"].(string)
			}},
			{"get_group.json", func(t *testing.T, got map[string]any, _ capture) { assert.Equal(t, "displayName", got["displayName"]) }},
			{"get_group_dn.json", total(1)},
			{"update_group.json", func(t *testing.T, got map[string]any, want capture) {
				assert.Equal(t, want.Response["displayName"], got["displayName"])
				assert.Empty(t, got["members"], "added, then removed")
			}},
		})
	})

	t.Run("Okta", func(t *testing.T) {
		// The membership capture names a second user: one of ours.
		status, other := scimCall(t, b, "POST", "/Users", scimUser("second.user@okta.local", "okta-2"))
		require.Equal(t, http.StatusCreated, status)
		ids := map[string]string{"89bb1940-b905-4575-9e7f-6f887cfb368e": other["id"].(string)}
		var user *browser
		replay(t, apps, filepath.Join(dir, "okta"), ids, []replayStep{
			{"user_exists.json", func(t *testing.T, got map[string]any, _ capture) { assert.Equal(t, float64(0), got["totalResults"]) }},
			{"create_user.json", nil},
			{"retrieve_user.json", func(t *testing.T, got map[string]any, _ capture) {
				assert.Equal(t, "test.user@okta.local", got["userName"])
				user = firstLaunch(t, a, b, sim, "test.user@okta.local")
			}},
			{"user_exists.json", func(t *testing.T, got map[string]any, _ capture) { assert.Equal(t, float64(1), got["totalResults"]) }},
			{"update_user.json", func(t *testing.T, got map[string]any, want capture) {
				assert.Equal(t, field(want.Response, "name", "givenName"), field(got, "name", "givenName"))
			}},
			{"update_user_patch.json", func(t *testing.T, got map[string]any, _ capture) {
				answered := time.Now()
				assert.Equal(t, false, got["active"])
				assertRefusedWithin(t, user, answered, "deactivated by Okta's PATCH")
			}},
			{"create_group.json", nil},
			{"retrieve_group.json", func(t *testing.T, got map[string]any, _ capture) { assert.Equal(t, "Test SCIMv2", got["displayName"]) }},
			{"update_group_name.json", nil},
			{"update_group_membership.json", func(t *testing.T, got map[string]any, _ capture) {
				var members []string
				for _, m := range got["members"].([]any) {
					members = append(members, m.(map[string]any)["value"].(string))
				}
				assert.ElementsMatch(t, []string{ids["23a35c27-23d3-4c03-b4c5-6443c09e7173"], ids["89bb1940-b905-4575-9e7f-6f887cfb368e"]}, members,
					"removed (never a member), added, then the members replaced by both")
			}},
		})
	})
	acct, err := a.store.AccountByEmail(t.Context(), "test.user@okta.local")
	require.NoError(t, err)
	assert.True(t, acct.Disabled, "deactivated by Okta's PATCH")
	assert.Equal(t, "Another", acct.FirstName, "renamed by Okta's PUT")
}

// firstLaunch waits for the background provisioning of email's platform
// user, signs the user in on b (a password set for the test: SCIM makes
// accounts without one) and checks that the first launch makes one
// platform call; the browser stays signed in.
func firstLaunch(t *testing.T, a, b *testApp, sim *platformsim.Running, email string) *browser {
	t.Helper()
	acct, err := a.store.AccountByEmail(t.Context(), email)
	require.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := a.store.LinkFor(t.Context(), acct.ID); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the platform user of %s was not made in the background within 10 s", email)
		time.Sleep(20 * time.Millisecond)
	}
	hash, err := b.hasher.Hash(t.Context(), testPassword)
	require.NoError(t, err)
	require.NoError(t, b.store.SetPasswordHash(t.Context(), acct.ID, hash))
	br := b.browser(t)
	require.Equal(t, http.StatusSeeOther, br.login(email, testPassword).status)
	sim.Server.ResetCalls()
	require.Equal(t, http.StatusSeeOther, br.launch().status)
	calls, _ := platformCalls(sim)
	assert.Equal(t, 1, calls, "a created user's first launch makes one platform call")
	return br
}
