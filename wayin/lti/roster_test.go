package lti_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/launch/provision"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

// rosterServer is an LMS's token endpoint and memberships service;
// members writes one page (its own Link header included).
func rosterServer(t testing.TB, members http.HandlerFunc) (*httptest.Server, *lti.Services, lti.Platform) {
	mux := http.NewServeMux()
	mux.HandleFunc("/token", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"t","token_type":"Bearer","expires_in":3600}`))
	})
	mux.HandleFunc("/members", members)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	pemKey, err := lti.GenerateKeyPEM()
	require.NoError(t, err)
	key, err := lti.ParseToolKey(pemKey)
	require.NoError(t, err)
	return srv, lti.NewServices(key, srv.Client(), nil), lti.Platform{Name: "LMS", Issuer: srv.URL, ClientID: "c", TokenURL: srv.URL + "/token"}
}

// A roster is read member by member as it arrives: the first member is
// handed over while the LMS is still writing the page, the container's
// other keys are skipped, and the next page follows the Link header.
func TestEachMemberStreams(t *testing.T) {
	handed := make(chan struct{})
	srv, s, p := rosterServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			_, _ = w.Write([]byte(`{"members":[{"user_id":"u3","email":"c@school.example"}]}`))
			return
		}
		w.Header().Set("Link", `<`+"/members?page=2"+`>; rel="next"`)
		_, _ = w.Write([]byte(`{"id":"x","context":{"id":"course-7","title":"Media"},"members":[{"user_id":"u1","email":"a@school.example","name":"  Ada  "},`))
		w.(http.Flusher).Flush()
		select { // the rest of the page only once the first member was handed over
		case <-handed:
		case <-time.After(5 * time.Second):
			t.Error("the first member was not handed over before the page ended: the page was read whole")
		}
		_, _ = w.Write([]byte(`{"user_id":"u2","email":"b@school.example","name":"` + strings.Repeat("é", 300) + `"}],"extra":[1,2,3]}`))
	})
	var got []lti.Member
	err := s.EachMember(t.Context(), p, srv.URL+"/members", func(m lti.Member) error {
		if len(got) == 0 {
			close(handed)
		}
		got = append(got, m)
		return nil
	})
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, []string{"u1", "u2", "u3"}, []string{got[0].UserID, got[1].UserID, got[2].UserID})
	assert.Equal(t, "Ada", got[0].Name)
	assert.LessOrEqual(t, len(got[1].Name), 100, "a name is cut to what an account keeps")
}

func TestEachMemberRefusals(t *testing.T) {
	for name, body := range map[string]string{
		"not JSON":              "#!",
		"members not a list":    `{"members":{"a":1}}`,
		"a member not a record": `{"members":[42]}`,
		"cut short":             `{"members":[{"user_id":"u1"},`,
	} {
		t.Run(name, func(t *testing.T) {
			srv, s, p := rosterServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) })
			err := s.EachMember(t.Context(), p, srv.URL+"/members", func(lti.Member) error { return nil })
			assert.ErrorIs(t, err, lti.ErrServices)
		})
	}
	srv, s, p := rosterServer(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"members":[{"user_id":"u1"},{"user_id":"u2"}]}`))
	})
	stop := fmt.Errorf("enough")
	n := 0
	err := s.EachMember(t.Context(), p, srv.URL+"/members", func(lti.Member) error { n++; return stop })
	assert.ErrorIs(t, err, stop, "the callback's error stops the read as it is")
	assert.Equal(t, 1, n)
}

// One read admits at most the cap: the members past it are counted and
// never admitted (no account is made for them), and the result says the
// course waits for an admin's confirmation of all of them.
func TestRosterAdmitsUpToItsCap(t *testing.T) {
	var members []map[string]any
	for i := 1; i <= 7; i++ {
		members = append(members, map[string]any{"user_id": fmt.Sprintf("u%d", i), "email": fmt.Sprintf("p%d@school.example", i)})
	}
	members = append(members, map[string]any{"user_id": "left", "email": "left@school.example", "status": "Inactive"},
		map[string]any{"user_id": "nomail"})
	srv, s, p := rosterServer(t, func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"members": members})
	})
	var admitted []string
	var provisioned []store.Account
	r := &lti.Roster{Services: s, Roster: provision.Roster{RetryEvery: time.Millisecond,
		Admit: func(_ context.Context, a signin.Arrival) (store.Account, error) {
			admitted = append(admitted, a.Email)
			return store.Account{ID: int64(len(admitted)), Email: a.Email}, nil
		},
		Provision: func(_ context.Context, _ string, accts []store.Account) error { provisioned = accts; return nil }}}
	id := lti.Identity{Platform: p, MembershipsURL: srv.URL + "/members", ContextID: "course-7", ContextTitle: "Media"}

	res, err := r.Run(t.Context(), id, signin.Source{ID: "lti"}, 3)
	require.NoError(t, err)
	assert.Equal(t, []string{"p1@school.example", "p2@school.example", "p3@school.example"}, admitted, "only the first 3 are admitted")
	assert.Len(t, provisioned, 3)
	assert.Equal(t, 9, res.Members)
	assert.Equal(t, 7, res.Eligible)
	assert.Equal(t, 1, res.Inactive)
	assert.Equal(t, 1, res.NoEmail)
	assert.True(t, res.Waiting())
	assert.Contains(t, res.String(), "7 people are more than the cap of 3")

	admitted = nil
	res, err = r.Run(t.Context(), id, signin.Source{ID: "lti"}, 7) // an admin confirmed 7
	require.NoError(t, err)
	assert.Len(t, admitted, 7)
	assert.False(t, res.Waiting())
}
