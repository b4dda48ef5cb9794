package scimreq

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/elimity-com/scim"
	scimerrors "github.com/elimity-com/scim/errors"
	scimfilter "github.com/elimity-com/scim/filter"
	"github.com/elimity-com/scim/schema"
	filter "github.com/scim2/filter-parser/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseFilter validates f against s as the library does before a
// handler sees it.
func parseFilter(f string, s schema.Schema) (filter.Expression, error) {
	s.Attributes = append(append([]schema.CoreAttribute{}, s.Attributes...), schema.CommonAttributes()...)
	v, err := scimfilter.NewValidator(f, s)
	if err != nil {
		return nil, err
	}
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return v.GetFilter(), nil
}

// normalized is f after NormalizeFilter.
func normalized(f string) string {
	r := httptest.NewRequest("GET", "/v2/Users?filter="+url.QueryEscape(f), nil)
	NormalizeFilter(r)
	return r.URL.Query().Get("filter")
}

func TestUserQuery(t *testing.T) {
	for _, tc := range []struct {
		filter  string
		want    Query
		refused bool
	}{
		{`userName eq "Ada@Example.com"`, Query{Email: "Ada@Example.com"}, false},
		{`externalId eq "e-1"`, Query{ExternalID: "e-1"}, false},
		{`id eq "42"`, Query{ID: "42"}, false},
		{`emails[type eq "work"].value eq "a@example.com"`, Query{Email: "a@example.com"}, false},
		{`emails[type eq "work" and value eq "a@example.com"]`, Query{Email: "a@example.com"}, false},
		{`emails.value eq "a@example.com"`, Query{Email: "a@example.com"}, false},
		{`userName eq "a@example.com" and externalId eq "e"`, Query{Email: "a@example.com", ExternalID: "e"}, false},
		{`userName eq "a@example.com" and userName eq "b@example.com"`, Query{Email: "b@example.com", None: true}, false},
		{`userName eq "a@example.com" or userName eq "b@example.com"`, Query{}, true},
		{`userName sw "a"`, Query{}, true},
		{`name.givenName eq "Ada"`, Query{}, true},
		{`not (userName eq "a@example.com")`, Query{}, true},
		{`active eq true`, Query{}, true},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			e, err := parseFilter(normalized(tc.filter), schema.CoreUserSchema())
			require.NoError(t, err)
			q, err := UserQuery(e)
			if tc.refused {
				var se scimerrors.ScimError
				require.True(t, errors.As(err, &se), "%v", err)
				assert.Equal(t, http.StatusBadRequest, se.Status)
				assert.Equal(t, scimerrors.ScimTypeInvalidFilter, se.ScimType)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, q)
		})
	}
}

func TestGroupQuery(t *testing.T) {
	e, err := parseFilter(`id eq "g1" and members[value eq "7"]`, schema.CoreGroupSchema())
	require.NoError(t, err)
	q, err := GroupQuery(e)
	require.NoError(t, err)
	assert.Equal(t, Query{ID: "g1", Member: "7"}, q)
	e, err = parseFilter(`displayName eq "Admins"`, schema.CoreGroupSchema())
	require.NoError(t, err)
	q, err = GroupQuery(e)
	require.NoError(t, err)
	assert.Equal(t, Query{DisplayName: "Admins"}, q)
	e, err = parseFilter(`members[value eq "7"]`, schema.CoreGroupSchema())
	require.NoError(t, err)
	_, err = GroupQuery(e)
	assertBadRequest(t, err)
}

// ops reads a PATCH body's operations as the library hands them over
// (paths parsed, values decoded).
func ops(t testing.TB, body string) []scim.PatchOperation {
	var req struct{ Operations []map[string]any }
	require.NoError(t, json.Unmarshal([]byte(body), &req))
	var out []scim.PatchOperation
	for _, o := range req.Operations {
		op := scim.PatchOperation{Op: o["op"].(string), Value: o["value"]}
		if p, ok := o["path"].(string); ok {
			path, err := filter.ParsePath([]byte(p))
			require.NoError(t, err)
			op.Path = &path
		}
		out = append(out, op)
	}
	return out
}

func TestUserPatch(t *testing.T) {
	up, err := UserPatch(ops(t, `{"Operations":[
		{"op":"replace","path":"emails[type eq \"work\"].value","value":"new@example.com"},
		{"op":"replace","path":"name.familyName","value":"King"},
		{"op":"add","path":"externalId","value":"e-2"},
		{"op":"replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department","value":"Maths"},
		{"op":"replace","value":{"active":false,"name.givenName":"Augusta"}}]}`))
	require.NoError(t, err)
	assert.Equal(t, "new@example.com", *up.Email)
	assert.Equal(t, "King", *up.LastName)
	assert.Equal(t, "Augusta", *up.FirstName)
	assert.Equal(t, "e-2", *up.ExternalID)
	assert.True(t, *up.Disabled)
	up, err = UserPatch(ops(t, `{"Operations":[{"op":"remove","path":"externalId"}]}`))
	require.NoError(t, err)
	assert.Equal(t, "", *up.ExternalID)
	for _, body := range []string{
		`{"Operations":[{"op":"remove","path":"userName"}]}`,
		`{"Operations":[{"op":"replace","path":"active","value":"maybe"}]}`,
		`{"Operations":[{"op":"replace","path":"userName","value":5}]}`,
		`{"Operations":[{"op":"replace","value":"not an object"}]}`,
	} {
		_, err := UserPatch(ops(t, body))
		var se scimerrors.ScimError
		require.True(t, errors.As(err, &se), body)
		assert.Equal(t, http.StatusBadRequest, se.Status, body)
	}
}

func TestGroupPatch(t *testing.T) {
	up, err := GroupPatch(ops(t, `{"Operations":[
		{"op":"Add","path":"members","value":[{"value":"1"},{"value":"2"}]},
		{"op":"Remove","path":"members[value eq \"3\"]"},
		{"op":"Remove","path":"members","value":[{"value":"4"}]},
		{"op":"replace","value":{"displayName":"Teachers"}}]}`))
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2}, up.Add)
	assert.Equal(t, []int64{3, 4}, up.Remove)
	assert.Equal(t, "Teachers", *up.DisplayName)
	up, err = GroupPatch(ops(t, `{"Operations":[{"op":"replace","path":"members","value":[{"value":"5"}]}]}`))
	require.NoError(t, err)
	assert.Equal(t, []int64{5}, *up.Members)
	up, err = GroupPatch(ops(t, `{"Operations":[{"op":"remove","path":"members"}]}`))
	require.NoError(t, err)
	assert.Equal(t, []int64{}, *up.Members, "every member goes")
	_, err = GroupPatch(ops(t, `{"Operations":[{"op":"add","path":"members","value":[{"value":"x"}]}]}`))
	assert.Error(t, err, "adding who is no user is refused")
	up, err = GroupPatch(ops(t, `{"Operations":[{"op":"remove","path":"members[value eq \"89bb1940-b905\"]"},{"op":"remove","path":"members","value":[{"value":"x"},{"value":"6"}]}]}`))
	require.NoError(t, err, "removing who cannot be a member changes nothing")
	assert.Equal(t, []int64{6}, up.Remove)
}

func TestNormalizeBody(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"Operations":[{"op":"Replace","path":"active","value":"False"}]}`, `{"Operations":[{"op":"Replace","path":"active","value":false}]}`},
		{`{"Operations":[{"op":"Replace","value":{"active":"True"}}]}`, `{"Operations":[{"op":"Replace","value":{"active":true}}]}`},
		{`{"userName":"a@b.c","active":"false"}`, `{"active":false,"userName":"a@b.c"}`},
	} {
		assert.JSONEq(t, tc.want, string(NormalizeBody([]byte(tc.in))))
	}
	for _, same := range []string{`{"active":"maybe"}`, `not json`, `{"Operations":[{"op":"replace","path":"displayName","value":"False"}]}`} {
		assert.Equal(t, same, string(NormalizeBody([]byte(same))), "left as it came")
	}
}

// FuzzRequest: any filter, read as the library reads it, and any PATCH
// body either translates or is refused with a 400 SCIM error; nothing
// panics; NormalizeBody keeps valid JSON valid.
func FuzzRequest(f *testing.F) {
	f.Add(`userName eq "ada@example.com"`, `{"Operations":[{"op":"Replace","path":"active","value":"False"}]}`)
	f.Add(`emails[type eq "work"].value eq "a@b.c"`, `{"Operations":[{"op":"replace","value":{"active":false,"name.givenName":"X"}}]}`)
	f.Add(`id eq "1" and members[value eq "1"]`, `{"Operations":[{"op":"remove","path":"members[value eq \"1\"]"}]}`)
	f.Add(`externalId eq "x" or userName pr`, `{"Operations":[{"op":"add","path":"members","value":[{"value":"abc"}]}]}`)
	f.Add(`emails[type eq "work" and value eq "\""]`, `{"Operations":[{"op":"add","path":"emails","value":[{"value":"x","primary":true}]}]}`)
	f.Fuzz(func(t *testing.T, rawFilter, body string) {
		for _, s := range []schema.Schema{schema.CoreUserSchema(), schema.CoreGroupSchema()} {
			e, err := parseFilter(normalized(rawFilter), s)
			if err != nil {
				continue
			}
			for _, read := range []func(filter.Expression) (Query, error){UserQuery, GroupQuery} {
				if _, err := read(e); err != nil {
					assertBadRequest(t, err)
				}
			}
		}
		norm := NormalizeBody([]byte(body))
		if json.Valid([]byte(body)) && !json.Valid(norm) {
			t.Fatalf("valid JSON made invalid: %q -> %q", body, norm)
		}
		var req struct{ Operations []map[string]any }
		if json.Unmarshal(norm, &req) != nil {
			return
		}
		var list []scim.PatchOperation
		for _, o := range req.Operations {
			op, _ := o["op"].(string)
			po := scim.PatchOperation{Op: op, Value: o["value"]}
			if p, ok := o["path"].(string); ok {
				path, err := filter.ParsePath([]byte(p))
				if err != nil {
					return // the library answers invalidPath
				}
				po.Path = &path
			}
			list = append(list, po)
		}
		if _, err := UserPatch(list); err != nil {
			assertBadRequest(t, err)
		}
		if _, err := GroupPatch(list); err != nil {
			assertBadRequest(t, err)
		}
	})
}

func assertBadRequest(t *testing.T, err error) {
	t.Helper()
	var se scimerrors.ScimError
	if !errors.As(err, &se) || se.Status != http.StatusBadRequest {
		t.Fatalf("not a 400 SCIM error: %v", err)
	}
}

// A PATCH without a path that names both userName and a work email takes
// the address by POST's and PUT's rule, the same every time (the value is
// a map: it was read in Go's random order).
func TestUserPatchWithoutAPathTakesOneAddress(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"userName is an address: it wins", `{"Operations":[{"op":"replace","value":{"userName":"kim@example.com","emails":[{"type":"work","value":"kim.lee@example.com","primary":true}]}}]}`, "kim@example.com"},
		{"userName is no address: the email", `{"Operations":[{"op":"replace","value":{"userName":"klee","emails":[{"type":"work","value":"kim.lee@example.com"}]}}]}`, "kim.lee@example.com"},
		{"keys in any case", `{"Operations":[{"op":"replace","value":{"USERNAME":"kim@example.com","Emails":[{"type":"work","value":"kim.lee@example.com"}]}}]}`, "kim@example.com"},
	} {
		for range 50 {
			up, err := UserPatch(ops(t, tc.body))
			require.NoError(t, err, tc.name)
			require.NotNil(t, up.Email, tc.name)
			require.Equal(t, tc.want, *up.Email, tc.name)
		}
	}
}

func TestCheckFilter(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("(", n) + `userName eq "a"` + strings.Repeat(")", n) }
	for _, tc := range []struct {
		f  string
		ok bool
	}{
		{`userName eq "a@example.com"`, true},
		{nest(MaxFilterDepth), true},
		{nest(MaxFilterDepth + 1), false},
		{`emails[` + nest(MaxFilterDepth-1) + `]`, true},
		{`emails[` + nest(MaxFilterDepth) + `]`, false},
		{`userName eq "` + strings.Repeat("(", 100) + `"`, true},        // quoted: not nesting
		{`userName eq "a\"` + strings.Repeat("(", 100) + `"`, true},     // an escaped quote stays inside
		{`userName eq "` + strings.Repeat("a", MaxFilter) + `"`, false}, // over the length
	} {
		err := CheckFilter(tc.f)
		if tc.ok {
			assert.NoError(t, err, tc.f)
		} else {
			assert.ErrorIs(t, err, ErrFilterTooLarge, tc.f)
		}
	}
}
