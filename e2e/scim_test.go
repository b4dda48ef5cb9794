package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/demo/platformsim"
	"github.com/ssobridge/ssobridge/store"
)

const scimToken = "e2e-scim-token-0123456789abcdef0123456789abcdef"

// withSCIM turns SCIM on, with its token from the environment.
func withSCIM(o testOptions) testOptions {
	o.yaml += "scim:\n  enabled: true\n  admin_group: Bridge Admins\n  email_domains: [example.com]\n"
	o.env = append(o.env, "SSOBRIDGE_SCIM_TOKEN="+scimToken)
	return o
}

// scimCall is one SCIM request to an instance: its status and JSON body.
func scimCall(t *testing.T, ta *testApp, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, ta.srv.URL+"/scim/v2"+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+scimToken)
	req.Header.Set("Content-Type", "application/scim+json")
	resp, err := ta.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out), "%s %s: %s", method, path, raw)
	}
	assert.Empty(t, resp.Header.Values("Set-Cookie"), "SCIM sets no cookie")
	return resp.StatusCode, out
}

func scimFilter(f string) string { return "?filter=" + url.QueryEscape(f) }

func scimUser(email, externalID string) string {
	return fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":%q,"externalId":%q,"active":true,
		"name":{"givenName":"Kim","familyName":"Lee"},"emails":[{"primary":true,"type":"work","value":%q}]}`, email, externalID, email)
}

const patchOp = `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":`

// TestSCIMAcrossInstances: two instances on PostgreSQL behind one URL, the
// identity provider's requests landing on either. An account made before
// SCIM is found by userName and taken over; deactivating it on one
// instance ends its live session on the other within a second; a user
// created on one is found by filter on the other; the same user created
// on both at once makes one account (one 201, one 409).
func TestSCIMAcrossInstances(t *testing.T) {
	a, b := instancePair(t, withSCIM(testOptions{}))
	kim := b.addAccount(t, "kim@example.com", false)
	user := b.browser(t)
	require.Equal(t, http.StatusSeeOther, user.login("kim@example.com", testPassword).status)
	require.Equal(t, http.StatusOK, user.get("/").status, "served by B (and cached there)")

	status, found := scimCall(t, a, "GET", "/Users"+scimFilter(`userName eq "KIM@example.com"`), "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, float64(1), found["totalResults"], "an account made before SCIM is found by userName")
	id := found["Resources"].([]any)[0].(map[string]any)["id"].(string)
	assert.Equal(t, fmt.Sprint(kim.ID), id)

	status, _ = scimCall(t, a, "PATCH", "/Users/"+id, patchOp+`[{"op":"Add","path":"externalId","value":"entra-kim"}]}`)
	require.Equal(t, http.StatusOK, status)
	status, got := scimCall(t, b, "GET", "/Users/"+id, "")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "entra-kim", got["externalId"], "the other instance reads the change")
	taken, err := b.store.AccountByID(context.Background(), kim.ID)
	require.NoError(t, err)
	assert.Equal(t, store.ManagedBySCIM, taken.ManagedBy, "taken over by the IdP")

	status, _ = scimCall(t, a, "PATCH", "/Users/"+id, patchOp+`[{"op":"Replace","path":"active","value":"False"}]}`)
	answered := time.Now()
	require.Equal(t, http.StatusOK, status)
	assertRefusedWithin(t, user, answered, "deactivated through SCIM on A")
	assert.NotEqual(t, http.StatusSeeOther, user.login("kim@example.com", testPassword).status, "a deactivated account cannot sign in again")
	status, _ = scimCall(t, b, "PATCH", "/Users/"+id, patchOp+`[{"op":"Replace","path":"active","value":"True"}]}`)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, http.StatusSeeOther, user.login("kim@example.com", testPassword).status, "reactivated on B: signs in again")
	status, _ = scimCall(t, a, "DELETE", "/Users/"+id, "")
	answered = time.Now()
	require.Equal(t, http.StatusNoContent, status)
	assertRefusedWithin(t, user, answered, "deleted through SCIM on A")
	status, _ = scimCall(t, b, "GET", "/Users/"+id, "")
	assert.Equal(t, http.StatusNotFound, status)

	status, created := scimCall(t, b, "POST", "/Users", scimUser("lee@example.com", "okta-lee"))
	require.Equal(t, http.StatusCreated, status)
	status, found = scimCall(t, a, "GET", "/Users"+scimFilter(`externalId eq "okta-lee"`), "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, float64(1), found["totalResults"])
	assert.Equal(t, created["id"], found["Resources"].([]any)[0].(map[string]any)["id"])

	for round := range 3 {
		email := fmt.Sprintf("both%d@example.com", round)
		statuses := make(chan int, 2)
		var wg sync.WaitGroup
		for _, ta := range []*testApp{a, b} {
			wg.Go(func() {
				s, _ := scimCall(t, ta, "POST", "/Users", scimUser(email, "x"))
				statuses <- s
			})
		}
		wg.Wait()
		close(statuses)
		var got []int
		for s := range statuses {
			got = append(got, s)
		}
		assert.ElementsMatch(t, []int{http.StatusCreated, http.StatusConflict}, got, email)
		_, total, err := a.store.ListAccounts(context.Background(), store.AccountFilter{Email: email})
		require.NoError(t, err)
		assert.Equal(t, 1, total, "one account for %s", email)
	}

	status, page := scimCall(t, b, "GET", "/Users?startIndex=2&count=2", "")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, float64(4), page["totalResults"], "lee and the three made twice (kim was deleted)")
	assert.Len(t, page["Resources"], 2)
}

// TestSCIMProvisionsAtThePlatformsPace: users the IdP creates get their
// platform users in the background, through the shared budget under a
// rate-limited platform: all linked, almost no 429, no duplicate; the
// first launch of one of them then makes one platform call.
func TestSCIMProvisionsAtThePlatformsPace(t *testing.T) {
	const users = 30
	sim := sharedPlatform(t, func(c *platformsim.Config) { c.RateLimit, c.RateBurst = morningRate, morningRate })
	ta := startTestApp(t, withSCIM(testOptions{platform: sim, realPacing: true, platformYAML: fmt.Sprintf("  rate_limit: %d\n", morningRate)}))
	sim.Server.ResetCalls()
	start := time.Now()
	for i := range users {
		status, _ := scimCall(t, ta, "POST", "/Users", scimUser(fmt.Sprintf("pace%03d@example.com", i), fmt.Sprint(i)))
		require.Equal(t, http.StatusCreated, status)
	}
	created := time.Since(start)
	deadline := time.Now().Add(30 * time.Second)
	var linked int
	for time.Now().Before(deadline) {
		var err error
		linked, _, err = ta.store.CountLinks(context.Background())
		require.NoError(t, err)
		if linked == users {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(start)
	calls, limited := platformCalls(sim)
	t.Logf("%d users created over SCIM in %.2f s; all linked %.1f s after the first; %d platform calls, %d answered 429", users, created.Seconds(), took.Seconds(), calls, limited)
	require.Equal(t, users, linked, "every user the IdP created has its platform user")
	assert.LessOrEqual(t, float64(limited), 0.05*float64(calls), "at most 5%% of the calls meet a 429")
	assertNoDuplicates(t, sim, users, "pace")

	acct, err := ta.store.AccountByEmail(context.Background(), "pace007@example.com")
	require.NoError(t, err)
	hash, err := ta.hasher.Hash(context.Background(), testPassword)
	require.NoError(t, err)
	require.NoError(t, ta.store.SetPasswordHash(context.Background(), acct.ID, hash))
	br := ta.browser(t)
	require.Equal(t, http.StatusSeeOther, br.login("pace007@example.com", testPassword).status)
	sim.Server.ResetCalls()
	require.Equal(t, http.StatusSeeOther, br.launch().status)
	calls, _ = platformCalls(sim)
	assert.Equal(t, 1, calls, "the first launch asks only for its token")
}

// `ssobridge check` with SCIM says what to enter at the IdP; a base URL
// that is not https fails it (exit 1); a short token is bad configuration
// (exit 2) and is never printed.
func TestCheckSCIM(t *testing.T) {
	token := strings.Repeat("t", 40)
	cfg, _ := writeConfig(t, "server:\n  public_url: https://sso.partner.example\nscim:\n  enabled: true\n  admin_group: Bridge Admins\n")
	code, out, stderr := runCLI(t, "", []string{"SSOBRIDGE_SCIM_TOKEN=" + token}, "check", "--config", cfg)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "at the IdP, enter: base URL https://sso.partner.example/scim/v2, bearer token: the one in SSOBRIDGE_SCIM_TOKEN (1 token(s))")
	assert.Contains(t, out, `partner admins: members of the group "Bridge Admins"; platform users made ahead: true`)
	assert.Contains(t, out, "verdict:   SCIM OK")
	assert.NotContains(t, out+stderr, token)

	// On loopback, a trial: OK, and it says a real IdP needs https.
	plain, _ := writeConfig(t, "scim:\n  enabled: true\n")
	code, out, _ = runCLI(t, "", []string{"SSOBRIDGE_SCIM_TOKEN=" + token}, "check", "--config", plain)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "verdict:   SCIM OK (loopback: only an IdP on this machine reaches http://127.0.0.1:8080/scim/v2")
	for _, server := range []string{"server:\n  addr: :8080\n", "server:\n  public_url: http://sso.partner.example\n"} {
		public, _ := writeConfig(t, server+"scim:\n  enabled: true\n")
		code, out, _ = runCLI(t, "", []string{"SSOBRIDGE_SCIM_TOKEN=" + token}, "check", "--config", public)
		assert.Equal(t, 1, code, server)
		assert.Contains(t, out, "verdict:   SCIM NOT READY", "plain http a real IdP would reach: %s", server)
	}

	code, _, stderr = runCLI(t, "", []string{"SSOBRIDGE_SCIM_TOKEN=short-secret"}, "check", "--config", plain)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "scim.token: token 1 is 12 characters")
	assert.NotContains(t, stderr, "short-secret")
}

// A misconfigured IdP (a wrong token) bans its IP: the log says why each
// request was refused and when the ban started, the right token then gets
// a 401 that says until when, the console's Sign-in bans page lists the
// SCIM client and lifts the ban, and the right token is served again.
func TestSCIMTokenBanSeenAndLifted(t *testing.T) {
	ta := startTestApp(t, withSCIM(testOptions{}))
	admin := ta.addAccount(t, "root@example.com", true)
	call := func(token string) (int, string) {
		req, err := http.NewRequest("GET", ta.srv.URL+"/scim/v2/Users", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := ta.srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	for range 5 { // regulation.max_retries
		status, _ := call("a-token-from-last-year-0123456789abcdef")
		require.Equal(t, http.StatusUnauthorized, status)
	}
	status, body := call(scimToken)
	assert.Equal(t, http.StatusUnauthorized, status, "banned, even with the right token")
	assert.Contains(t, body, "or this client is banned until ")
	logs := ta.logs.String()
	assert.Contains(t, logs, `msg="scim: request refused: wrong bearer token (not scim.token_file's or SSOBRIDGE_SCIM_TOKEN's)" ip=127.0.0.1`)
	assert.Contains(t, logs, `msg="scim: client IP banned after repeated wrong tokens: every SCIM request from it is refused until the ban ends" ip=127.0.0.1`)
	assert.NotContains(t, logs, "a-token-from-last-year", "never the token")

	b := ta.browser(t)
	b.login(admin.Email, testPassword)
	page := b.get("/admin/bans")
	require.Equal(t, http.StatusOK, page.status)
	assert.Contains(t, page.body, "SCIM client")
	assert.Contains(t, page.body, "Wrong SCIM bearer tokens from this IP")
	lift := b.post("/admin/bans/lift", url.Values{"_csrf": {b.csrf("/admin/bans")}, "kind": {store.BanEmail}, "value": {store.SCIMTokenAddress("127.0.0.1")}})
	require.Equal(t, http.StatusOK, lift.status, lift.body)
	assert.Contains(t, lift.body, "Lifted the ban on scim client 127.0.0.1")
	status, body = call(scimToken)
	assert.Equal(t, http.StatusOK, status, body)
}
