package scim_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/accounts/regulation"
	"github.com/ssobridge/ssobridge/internal/syncbuf"
	"github.com/ssobridge/ssobridge/scim"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

const token = "0123456789abcdef0123456789abcdef-scim-test-token"

// env is a SCIM service provider on a real SQLite store, served over
// HTTP under /scim as the bridge mounts it.
type env struct {
	t       testing.TB
	h       http.Handler
	st      store.Store
	url     string
	created chan store.Account
	ended   chan int64
	dsn     string
	logs    *syncbuf.Buffer
}

func setup(t testing.TB, adminGroup string) *env {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "ssobridge.db")
	db, err := sqlstore.OpenSQLite(context.Background(), dsn, nil)
	require.NoError(t, err)
	st := sqlstore.NewGuard(db, 300*time.Millisecond, nil, nil)
	t.Cleanup(func() { _ = db.Close() })
	e := &env{t: t, st: st, created: make(chan store.Account, 100), ended: make(chan int64, 100), dsn: dsn, logs: &syncbuf.Buffer{}}
	dir := &accounts.Directory{Store: st, AdminGroup: adminGroup,
		Created: func(a store.Account) { e.created <- a }, Ended: func(id int64) { e.ended <- id }}
	reg := regulation.New(st, store.RegulationConfig{MaxRetries: 3, MaxRetriesPerIP: 50, FindTime: time.Minute, BanTime: time.Minute}, nil)
	h, err := scim.New(scim.Config{Directory: dir, Tokens: []string{token}, Regulator: reg, BaseURL: "http://bridge.test/scim/v2",
		ClientIP: func(r *http.Request) string { return r.Header.Get("X-Test-IP") }, Logger: slog.New(slog.NewTextHandler(e.logs, nil))})
	require.NoError(t, err)
	e.h = h
	srv := httptest.NewServer(http.StripPrefix("/scim", h))
	t.Cleanup(srv.Close)
	e.url = srv.URL + "/scim/v2"
	return e
}

// answer is a response: its status, headers and JSON body.
type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (e *env) do(method, path, body string, hdr ...string) answer {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/scim+json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if len(raw) > 0 {
		require.NoError(e.t, json.Unmarshal(raw, &a.body), "a JSON body: %s", raw)
	}
	return a
}

func (a answer) str(key string) string { s, _ := a.body[key].(string); return s }

func (a answer) total() int { n, _ := a.body["totalResults"].(float64); return int(n) }

func (a answer) resources() []map[string]any {
	var out []map[string]any
	list, _ := a.body["Resources"].([]any)
	for _, r := range list {
		out = append(out, r.(map[string]any))
	}
	return out
}

// scimError asserts a SCIM error body of status (and scimType, if any).
func (a answer) scimError(t *testing.T, status int, scimType string) {
	t.Helper()
	require.Equal(t, status, a.status, a.raw)
	assert.Contains(t, a.body["schemas"], "urn:ietf:params:scim:api:messages:2.0:Error", a.raw)
	assert.Equal(t, fmt.Sprint(status), fmt.Sprint(a.body["status"]), a.raw)
	if scimType != "" {
		assert.Equal(t, scimType, a.str("scimType"), a.raw)
	}
}

func filterQuery(f string) string { return "?filter=" + url.QueryEscape(f) }

// entraUser is the POST Entra ID's provisioning service sends.
func entraUser(userName, externalID string) string {
	return fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
		"externalId":%q,"userName":%q,"active":true,
		"emails":[{"primary":true,"type":"work","value":%q}],
		"meta":{"resourceType":"User"},
		"name":{"formatted":"Ada Lovelace","familyName":"Lovelace","givenName":"Ada"},
		"roles":[],
		"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"Maths","employeeNumber":"42"}}`, externalID, userName, userName)
}

// TestEntraIDSequence plays Entra ID's documented order: filter on
// userName (none), create, read, filter again, PATCH with paths
// (Replace, capitalised), deactivate with the string "False", reactivate
// with "True", delete.
func TestEntraIDSequence(t *testing.T) {
	e := setup(t, "")
	a := e.do("GET", "/Users"+filterQuery(`userName eq "ada@contoso.example"`), "")
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.Equal(t, 0, a.total())

	a = e.do("POST", "/Users", entraUser("ada@contoso.example", "entra-1"))
	require.Equal(t, http.StatusCreated, a.status, a.raw)
	id := a.str("id")
	require.NotEmpty(t, id)
	assert.Equal(t, "ada@contoso.example", a.str("userName"))
	assert.Equal(t, "entra-1", a.str("externalId"))
	assert.Equal(t, true, a.body["active"])
	assert.Equal(t, "http://bridge.test/scim/v2/Users/"+id, a.body["meta"].(map[string]any)["location"])
	acct := <-e.created
	assert.Equal(t, "ada@contoso.example", acct.Email, "the background provisioning is told of the new account")
	stored, err := e.st.AccountByEmail(context.Background(), "ada@contoso.example")
	require.NoError(t, err)
	assert.Equal(t, store.ManagedBySCIM, stored.ManagedBy)
	assert.Equal(t, passhash.NoPassword, stored.PasswordHash, "no password: the IdP's sign-in is the way in")
	assert.Equal(t, "Ada", stored.FirstName)

	a = e.do("GET", "/Users/"+id, "")
	require.Equal(t, http.StatusOK, a.status)
	assert.Equal(t, "Lovelace", a.body["name"].(map[string]any)["familyName"])

	for _, f := range []string{`userName eq "ADA@contoso.example"`, `externalId eq "entra-1"`, `emails[type eq "work"].value eq "ada@contoso.example"`,
		`id eq "` + id + `" and userName eq "ada@contoso.example"`} {
		a = e.do("GET", "/Users"+filterQuery(f), "")
		require.Equal(t, http.StatusOK, a.status, a.raw)
		require.Equal(t, 1, a.total(), f)
		assert.Equal(t, id, a.resources()[0]["id"], f)
	}

	a = e.do("GET", "/Users"+filterQuery(`id eq "`+id+`" and externalId eq "other"`), "")
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.Equal(t, 0, a.total(), "every condition holds, not the id alone")

	a = e.do("PATCH", "/Users/"+id, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
		{"op":"Replace","path":"emails[type eq \"work\"].value","value":"ada.l@contoso.example"},
		{"op":"Replace","path":"name.familyName","value":"King"},
		{"op":"Add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department","value":"Computing"}]}`)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.Equal(t, "ada.l@contoso.example", a.str("userName"), "a changed work email is the account's new address")
	assert.Equal(t, "King", a.body["name"].(map[string]any)["familyName"])

	a = e.do("PATCH", "/Users/"+id, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"active","value":"False"}]}`)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.Equal(t, false, a.body["active"])
	assert.Equal(t, stored.ID, <-e.ended, "the launches in flight are told to stop")
	stored, err = e.st.AccountByID(context.Background(), stored.ID)
	require.NoError(t, err)
	assert.True(t, stored.Disabled)

	a = e.do("PATCH", "/Users/"+id, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"active","value":"True"}]}`)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.Equal(t, true, a.body["active"])

	a = e.do("DELETE", "/Users/"+id, "")
	require.Equal(t, http.StatusNoContent, a.status, a.raw)
	_, err = e.st.AccountByID(context.Background(), stored.ID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	gone := e.do("GET", "/Users/"+id, "")
	gone.scimError(t, http.StatusNotFound, "")
	assert.Contains(t, gone.str("detail"), "/scim/v2/Users/"+id, "the path the IdP called, /scim included")
}

// TestOktaSequence plays Okta's: filter with paging, create, PUT of the
// whole user on a change, deactivation by PATCH without a path, and by
// PUT with active false.
func TestOktaSequence(t *testing.T) {
	e := setup(t, "")
	a := e.do("GET", "/Users"+filterQuery(`userName eq "grace@okta.example"`)+"&startIndex=1&count=100", "")
	require.Equal(t, http.StatusOK, a.status)
	assert.Equal(t, 0, a.total())
	user := `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"grace@okta.example",
		"name":{"givenName":"Grace","familyName":"Hopper"},"emails":[{"primary":true,"value":"grace@okta.example","type":"work"}],
		"displayName":"Grace Hopper","locale":"en-US","externalId":"00u1","groups":[],"password":"ignored-1!","active":true}`
	a = e.do("POST", "/Users", user)
	require.Equal(t, http.StatusCreated, a.status, a.raw)
	id := a.str("id")
	stored, err := e.st.AccountByEmail(context.Background(), "grace@okta.example")
	require.NoError(t, err)
	assert.Equal(t, passhash.NoPassword, stored.PasswordHash, "a password the IdP sends is not taken")

	a = e.do("PUT", "/Users/"+id, strings.Replace(user, `"familyName":"Hopper"`, `"familyName":"Murray Hopper"`, 1))
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.Equal(t, "Murray Hopper", a.body["name"].(map[string]any)["familyName"])

	a = e.do("PATCH", "/Users/"+id, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"active":false}}]}`)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.Equal(t, false, a.body["active"])
	a = e.do("PUT", "/Users/"+id, user)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.Equal(t, true, a.body["active"], "PUT with active true restores it")
	a = e.do("PUT", "/Users/"+id, strings.Replace(user, `"active":true`, `"active":false`, 1))
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.Equal(t, false, a.body["active"])
	stored, err = e.st.AccountByID(context.Background(), stored.ID)
	require.NoError(t, err)
	assert.True(t, stored.Disabled)
}

// TestCreatedInactive: a user created with active false gets a disabled
// account and no platform user ahead.
func TestCreatedInactive(t *testing.T) {
	e := setup(t, "")
	a := e.do("POST", "/Users", strings.Replace(entraUser("off@example.com", "x"), `"active":true`, `"active":"False"`, 1))
	require.Equal(t, http.StatusCreated, a.status, a.raw)
	assert.Equal(t, false, a.body["active"])
	stored, err := e.st.AccountByEmail(context.Background(), "off@example.com")
	require.NoError(t, err)
	assert.True(t, stored.Disabled)
	assert.Empty(t, e.created, "no platform user is made for an inactive user")
}

// TestPaging: startIndex and count page through the users by address,
// with the total; count=0 gives the total only.
func TestPaging(t *testing.T) {
	e := setup(t, "")
	for i := range 5 {
		require.Equal(t, http.StatusCreated, e.do("POST", "/Users", entraUser(fmt.Sprintf("u%d@example.com", i), fmt.Sprint(i))).status)
	}
	var seen []string
	for start := 1; start <= 5; start += 2 {
		a := e.do("GET", fmt.Sprintf("/Users?startIndex=%d&count=2", start), "")
		require.Equal(t, http.StatusOK, a.status, a.raw)
		assert.Equal(t, 5, a.total())
		for _, r := range a.resources() {
			seen = append(seen, r["userName"].(string))
		}
	}
	assert.Equal(t, []string{"u0@example.com", "u1@example.com", "u2@example.com", "u3@example.com", "u4@example.com"}, seen)
	a := e.do("GET", "/Users?count=0", "")
	require.Equal(t, http.StatusOK, a.status)
	assert.Equal(t, 5, a.total())
	assert.Empty(t, a.resources())
}

// TestRefusals: what a client gets wrong is a SCIM error, never a 500,
// and changes nothing.
func TestRefusals(t *testing.T) {
	e := setup(t, "")
	a := e.do("POST", "/Users", entraUser("ada@example.com", "x"))
	require.Equal(t, http.StatusCreated, a.status)
	id := a.str("id")
	require.Equal(t, http.StatusCreated, e.do("POST", "/Users", entraUser("grace@example.com", "y")).status)
	patch := func(ops string) string {
		return `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":` + ops + `}`
	}
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		scimType                 string
	}{
		{"the same address again", "POST", "/Users", entraUser("ADA@example.com", "z"), http.StatusConflict, "uniqueness"},
		{"an address another account has", "PATCH", "/Users/" + id, patch(`[{"op":"replace","path":"userName","value":"grace@example.com"}]`), http.StatusConflict, "uniqueness"},
		{"no address", "POST", "/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"not-an-address"}`, http.StatusBadRequest, "invalidValue"},
		{"no userName", "POST", "/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"emails":[{"value":"x@example.com"}]}`, http.StatusBadRequest, "invalidValue"},
		{"not JSON", "POST", "/Users", `{"userName":`, http.StatusBadRequest, "invalidSyntax"},
		{"an unsupported filter", "GET", "/Users" + filterQuery(`name.givenName sw "A"`), "", http.StatusBadRequest, "invalidFilter"},
		{"filters joined by or", "GET", "/Users" + filterQuery(`userName eq "a@example.com" or userName eq "b@example.com"`), "", http.StatusBadRequest, "invalidFilter"},
		{"a filter that does not parse", "GET", "/Users" + filterQuery(`userName eq`), "", http.StatusBadRequest, "invalidFilter"},
		{"an unknown user", "GET", "/Users/999999", "", http.StatusNotFound, ""},
		{"a user id that is no number", "PATCH", "/Users/abc", patch(`[{"op":"replace","path":"active","value":false}]`), http.StatusNotFound, ""},
		{"active not a boolean", "PATCH", "/Users/" + id, patch(`[{"op":"replace","path":"active","value":"maybe"}]`), http.StatusBadRequest, ""},
		{"removing userName", "PATCH", "/Users/" + id, patch(`[{"op":"remove","path":"userName"}]`), http.StatusBadRequest, "invalidValue"},
		{"an empty given name", "PATCH", "/Users/" + id, patch(`[{"op":"replace","path":"name.givenName","value":"  "}]`), http.StatusBadRequest, "invalidValue"},
		{"a PATCH without its schema", "PATCH", "/Users/" + id, `{"Operations":[{"op":"replace","path":"active","value":false}]}`, http.StatusBadRequest, ""},
		{"an unknown group", "GET", "/Groups/nope", "", http.StatusNotFound, ""},
		{"a member that is no user", "POST", "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"G","members":[{"value":"999999"}]}`, http.StatusBadRequest, "invalidValue"},
		{"a member id that is no number", "POST", "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"G","members":[{"value":"x"}]}`, http.StatusBadRequest, "invalidValue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.do(tc.method, tc.path, tc.body).scimError(t, tc.status, tc.scimType)
		})
	}
	a = e.do("GET", "/Users/"+id, "")
	assert.Equal(t, "ada@example.com", a.str("userName"), "nothing refused changed the account")
	assert.Equal(t, "Ada", a.body["name"].(map[string]any)["givenName"])
	assert.Equal(t, true, a.body["active"])
	g := e.do("GET", "/Groups", "")
	assert.Equal(t, 0, g.total(), "no refused group was kept")
}

// TestTokens: no token, a malformed header and a wrong token get the same
// 401; wrong tokens count toward a ban of the client IP (max_retries
// failures, as an address's sign-ins), under which even the right token
// is refused; another IP is served, however many others failed.
func TestTokens(t *testing.T) {
	e := setup(t, "")
	var bodies []string
	for _, auth := range []string{"", "Basic dXNlcjpwYXNz", "Bearer wrong-token", "Bearer " + token + "x"} {
		req, err := http.NewRequest("GET", e.url+"/Users", nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		req.Header.Set("X-Test-IP", "192.0.2.1")
		resp, err := http.DefaultTransport.RoundTrip(req)
		require.NoError(t, err)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		assert.Equal(t, `Bearer realm="scim"`, resp.Header.Get("WWW-Authenticate"))
		bodies = append(bodies, string(raw))
	}
	for _, b := range bodies[1:3] {
		assert.Equal(t, bodies[0], b, "one answer whatever was wrong with the token")
	}
	assert.Contains(t, bodies[3], "or this client is banned until ", "the third wrong token banned the IP: the fourth request is told so")
	for _, b := range bodies {
		assert.NotContains(t, b, token)
	}
	banned := e.do("GET", "/Users", "", "X-Test-IP", "192.0.2.1")
	banned.scimError(t, http.StatusUnauthorized, "")
	assert.Contains(t, banned.raw, "or this client is banned until ", "the right token, from a banned client: the 401 says why")
	// The log says why each was refused, and when the ban started; never
	// the token.
	logs := e.logs.String()
	for _, want := range []string{`msg="scim: request refused: no Authorization header" ip=192.0.2.1`,
		`msg="scim: request refused: the Authorization header is not \"Bearer <token>\"" ip=192.0.2.1`,
		`msg="scim: request refused: wrong bearer token (not scim.token_file's or SSOBRIDGE_SCIM_TOKEN's)" ip=192.0.2.1`,
		`msg="scim: client IP banned after repeated wrong tokens: every SCIM request from it is refused until the ban ends" ip=192.0.2.1 until=`,
		`msg="scim: request refused: this client IP is banned after repeated wrong tokens" ip=192.0.2.1 until=`} {
		assert.Contains(t, logs, want)
	}
	assert.Equal(t, 1, strings.Count(logs, "client IP banned after"), "the ban's start is logged once")
	assert.NotContains(t, logs, token)
	assert.NotContains(t, logs, "wrong-token")
	bans, err := e.st.ListBans(context.Background(), time.Now())
	require.NoError(t, err)
	require.Len(t, bans, 1, "three wrong tokens ban the IP")
	assert.Contains(t, bans[0].Value, "192.0.2.1")
	for range 3 { // another IP fails as often: its own count
		req, _ := http.NewRequest("GET", e.url+"/Users", nil)
		req.Header.Set("X-Test-IP", "2001:db8::7")
		resp, err := http.DefaultTransport.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	e.do("GET", "/Users", "", "X-Test-IP", "2001:db8::7").scimError(t, http.StatusUnauthorized, "")
	assert.Equal(t, http.StatusOK, e.do("GET", "/Users", "", "X-Test-IP", "192.0.2.2").status, "a client that never failed is served")
}

// TestBodyLimit: a body over 1 MiB is refused with 413, with or without
// a Content-Length.
func TestBodyLimit(t *testing.T) {
	e := setup(t, "")
	big := `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a@example.com","displayName":"` + strings.Repeat("x", scim.MaxBody) + `"}`
	e.do("POST", "/Users", big).scimError(t, http.StatusRequestEntityTooLarge, "")
	req, err := http.NewRequest("POST", e.url+"/Users", io.MultiReader(strings.NewReader(big)))
	require.NoError(t, err)
	req.ContentLength = -1 // chunked
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultTransport.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Equal(t, 0, e.do("GET", "/Users", "").total(), "nothing was created")
}

// TestSameUserTwiceAtOnce: two creates of one user at once make one
// account: one 201, one 409.
func TestSameUserTwiceAtOnce(t *testing.T) {
	e := setup(t, "")
	for round := range 5 {
		email := fmt.Sprintf("twice%d@example.com", round)
		statuses := make(chan int, 2)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { statuses <- e.do("POST", "/Users", entraUser(email, "t")).status })
		}
		wg.Wait()
		close(statuses)
		var got []int
		for s := range statuses {
			got = append(got, s)
		}
		assert.ElementsMatch(t, []int{http.StatusCreated, http.StatusConflict}, got)
		list, total, err := e.st.ListAccounts(context.Background(), store.AccountFilter{Email: email})
		require.NoError(t, err)
		assert.Equal(t, 1, total)
		assert.Len(t, list, 1)
	}
}

// TestAdminGroup: joining the admin group grants the partner admin role,
// leaving takes it away (the last admin stays admin), other groups grant
// nothing; Entra ID's membership check by filter.
func TestAdminGroup(t *testing.T) {
	e := setup(t, "Bridge Admins")
	ids := map[string]string{}
	for _, u := range []string{"ada@example.com", "grace@example.com"} {
		a := e.do("POST", "/Users", entraUser(u, u))
		require.Equal(t, http.StatusCreated, a.status)
		ids[u] = a.str("id")
	}
	isAdmin := func(email string) bool {
		a, err := e.st.AccountByEmail(context.Background(), email)
		require.NoError(t, err)
		return a.Admin
	}
	a := e.do("POST", "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"Teachers","members":[{"value":"`+ids["ada@example.com"]+`"}]}`)
	require.Equal(t, http.StatusCreated, a.status, a.raw)
	assert.False(t, isAdmin("ada@example.com"), "another group grants nothing")

	a = e.do("POST", "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"bridge admins","externalId":"g-ext","members":[]}`)
	require.Equal(t, http.StatusCreated, a.status, a.raw)
	gid := a.str("id")
	patch := func(ops string) answer {
		return e.do("PATCH", "/Groups/"+gid, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":`+ops+`}`)
	}
	a = patch(`[{"op":"Add","path":"members","value":[{"value":"` + ids["ada@example.com"] + `"},{"value":"` + ids["grace@example.com"] + `"}]}]`)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.True(t, isAdmin("ada@example.com"))
	assert.True(t, isAdmin("grace@example.com"))

	member := e.do("GET", "/Groups"+filterQuery(`id eq "`+gid+`" and members[value eq "`+ids["ada@example.com"]+`"]`), "")
	require.Equal(t, http.StatusOK, member.status, member.raw)
	assert.Equal(t, 1, member.total())

	// Entra ID reads groups without their members; another IdP names
	// the attributes it wants.
	for _, q := range []string{"?excludedAttributes=members", "?excludedAttributes=urn:ietf:params:scim:schemas:core:2.0:Group:members",
		"?attributes=displayName", "?excludedAttributes=externalId,Members"} {
		one := e.do("GET", "/Groups/"+gid+q, "")
		require.Equal(t, http.StatusOK, one.status, one.raw)
		assert.NotContains(t, one.body, "members", q)
		assert.Equal(t, "bridge admins", one.body["displayName"], q)
		list := e.do("GET", "/Groups"+q, "")
		require.Equal(t, http.StatusOK, list.status, list.raw)
		assert.NotContains(t, list.raw, `"members"`, q)
	}
	with := e.do("GET", "/Groups/"+gid+"?attributes=displayName,members", "")
	assert.Len(t, with.body["members"], 2, "asked for")
	assert.Len(t, e.do("GET", "/Groups/"+gid, "").body["members"], 2, "by default")

	a = patch(`[{"op":"Remove","path":"members[value eq \"` + ids["ada@example.com"] + `\"]"}]`) // Okta's form
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.False(t, isAdmin("ada@example.com"), "leaving the group takes the role away")
	member = e.do("GET", "/Groups"+filterQuery(`id eq "`+gid+`" and members[value eq "`+ids["ada@example.com"]+`"]`), "")
	assert.Equal(t, 0, member.total())

	a = patch(`[{"op":"Remove","path":"members","value":[{"value":"` + ids["grace@example.com"] + `"}]}]`) // Entra's form
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.True(t, isAdmin("grace@example.com"), "the last admin stays admin")
	assert.Empty(t, a.body["members"], "though the group's membership changed")

	a = patch(`[{"op":"replace","value":{"id":"` + gid + `","displayName":"Former Admins"}}]`)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.Equal(t, "Former Admins", a.str("displayName"))
	found := e.do("GET", "/Groups"+filterQuery(`displayName eq "former admins"`), "")
	assert.Equal(t, 1, found.total())
	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/Groups/"+gid, "").status)
}

// TestStoreAway: while the store does not answer within its bound (a
// write lock held elsewhere), a write is a 503 with Retry-After in a SCIM
// error body, and nothing changes.
func TestStoreAway(t *testing.T) {
	e := setup(t, "")
	locker, err := sqlOpen(e.dsn)
	require.NoError(t, err)
	defer locker.Close()
	lock, err := locker.Begin()
	require.NoError(t, err)
	_, err = lock.Exec("INSERT INTO audit_log (at, kind, outcome) VALUES (0, 'admin', 'lock')")
	require.NoError(t, err)
	a := e.do("POST", "/Users", entraUser("ada@example.com", "x"))
	a.scimError(t, http.StatusServiceUnavailable, "")
	assert.Equal(t, "30", a.header.Get("Retry-After"))
	require.NoError(t, lock.Rollback())
	assert.Equal(t, 0, e.do("GET", "/Users", "").total())
	assert.Equal(t, http.StatusCreated, e.do("POST", "/Users", entraUser("ada@example.com", "x")).status, "served again once it answers")
}

// TestDiscovery: the three discovery endpoints answer without a store.
func TestDiscovery(t *testing.T) {
	e := setup(t, "")
	a := e.do("GET", "/ServiceProviderConfig", "")
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.Equal(t, true, a.body["patch"].(map[string]any)["supported"])
	assert.Equal(t, true, a.body["filter"].(map[string]any)["supported"])
	a = e.do("GET", "/ResourceTypes", "")
	require.Equal(t, http.StatusOK, a.status)
	assert.Equal(t, 2, a.total())
	a = e.do("GET", "/Schemas", "")
	require.Equal(t, http.StatusOK, a.status)
	assert.GreaterOrEqual(t, a.total(), 2)
}

// sqlOpen opens another connection to the store's SQLite file, whose
// transactions take the write lock at once.
func sqlOpen(path string) (*sql.DB, error) {
	return sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
}

// Filters over the bounds are refused (400 invalidFilter) before any
// parser reads them, in the query and in a .search body; a filter within
// them is served. Nesting inside a quoted value does not count.
func TestFilterBounds(t *testing.T) {
	e := setup(t, "")
	deep := strings.Repeat("(", 1000) + `userName eq "a@example.com"` + strings.Repeat(")", 1000)
	long := `userName eq "` + strings.Repeat("a", 32*1024) + `@example.com"`
	for _, f := range []string{deep, long} {
		e.do("GET", "/Users"+filterQuery(f), "").scimError(t, http.StatusBadRequest, "invalidFilter")
		body, err := json.Marshal(map[string]any{"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:SearchRequest"}, "filter": f})
		require.NoError(t, err)
		e.do("POST", "/Users/.search", string(body)).scimError(t, http.StatusBadRequest, "invalidFilter")
	}
	within := `userName eq "(((((((((((((((((((((((((((((((((((x@example.com"`
	assert.Equal(t, http.StatusOK, e.do("GET", "/Users"+filterQuery(within), "").status)
}

// BenchmarkRefuseLargeFilter: what a 1,000-deep and a 32 KiB filter cost
// the bridge from the request to its 400 (the handler alone, no network).
func BenchmarkRefuseLargeFilter(b *testing.B) {
	e := setup(b, "")
	for name, f := range map[string]string{
		"deep-1000": strings.Repeat("(", 1000) + `userName eq "a@example.com"` + strings.Repeat(")", 1000),
		"long-32k":  `userName eq "` + strings.Repeat("a", 32*1024) + `@example.com"`,
	} {
		b.Run(name, func(b *testing.B) {
			target := "/scim/v2/Users?filter=" + url.QueryEscape(f)
			for b.Loop() {
				req := httptest.NewRequest("GET", target, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				rec := httptest.NewRecorder()
				http.StripPrefix("/scim", e.h).ServeHTTP(rec, req)
				if rec.Code != http.StatusBadRequest {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
}
