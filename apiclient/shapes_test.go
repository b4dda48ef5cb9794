package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every shape key that cannot work is named, with what is wrong.
func TestShapesValidate(t *testing.T) {
	require.NoError(t, DefaultShapes().Validate())
	require.NoError(t, Shapes{}.Validate(), "the zero value takes the defaults")
	for _, tt := range []struct {
		key  string
		edit func(*Shapes)
	}{
		{"users_path", func(s *Shapes) { s.UsersPath = "public/users" }},
		{"users_path", func(s *Shapes) { s.UsersPath = "/users?x=1" }},
		{"token_path", func(s *Shapes) { s.TokenPath = "/login-token" }},
		{"page_param", func(s *Shapes) { s.PageParam = "query" }},
		{"size_param", func(s *Shapes) { s.SizeParam = "a=b" }},
		{"first_page", func(s *Shapes) { s.FirstPage = 2 }},
		{"page_size", func(s *Shapes) { s.PageSize = 5000 }},
		{"max_pages", func(s *Shapes) { s.MaxPages = 20000 }},
		{"list_items", func(s *Shapes) { s.ListItems = "data..users" }},
		{"list_total_pages", func(s *Shapes) { s.ListTotalPages = "paging." }},
		{"user_id", func(s *Shapes) { s.UserID = "." }},
		{"user_email", func(s *Shapes) { s.UserEmail = "contact mail" }},
		{"token_method", func(s *Shapes) { s.TokenMethod = "DELETE" }},
		{"token_redirect", func(s *Shapes) { s.TokenMethod = http.MethodGet }},
		{"token_field", func(s *Shapes) { s.TokenField = ".token" }},
		{"exchange_url", func(s *Shapes) { s.ExchangeURL = "{base_url}/login" }},
		{"exchange_url", func(s *Shapes) { s.ExchangeURL = "/relative/{token}" }},
	} {
		s := DefaultShapes()
		tt.edit(&s)
		var se *ShapeError
		require.ErrorAs(t, s.Validate(), &se, tt.key)
		assert.Equal(t, tt.key, se.Key)
		assert.NotEmpty(t, se.Problem)
	}
}

// List answers are read through the shapes; an answer of another shape
// is a ShapeMismatch (an ErrBadResponse) naming the key to fix and what
// the answer has instead.
func TestReadPage(t *testing.T) {
	nested := DefaultShapes()
	nested.ListItems, nested.ListTotalPages, nested.UserID, nested.UserEmail = "data.users", "data.paging.pages", "id", "contact.mail"
	bare := DefaultShapes()
	bare.ListItems, bare.ListTotalPages = ".", NoTotalPages

	p, err := nested.readPage([]byte(`{"data":{"users":[{"id":9007199254740993,"contact":{"mail":"a@example.com"},"firstName":"A"}],"paging":{"pages":3,"totalElements":5}}}`))
	require.NoError(t, err)
	assert.Equal(t, []User{{UserID: "9007199254740993", Email: "a@example.com", FirstName: "A"}}, p.Content, "ids kept exact")
	assert.Equal(t, 3, p.TotalPages)
	assert.Equal(t, int64(5), p.TotalElements)

	p, err = bare.readPage([]byte(`[{"userId":"u-1","email":"b@example.com"}]`))
	require.NoError(t, err)
	assert.Equal(t, UserID("u-1"), p.Content[0].UserID)
	assert.Equal(t, -1, p.TotalPages, "no page count")

	p, err = DefaultShapes().readPage([]byte(`{"content":null,"totalPages":0}`))
	require.NoError(t, err)
	assert.Empty(t, p.Content, "null is no users")

	for _, tt := range []struct {
		shapes        Shapes
		answer        string
		key, mentions string
	}{
		{DefaultShapes(), `{"data":{"users":[]}}`, "list_items", "no array at `content`; the answer has an array at `data.users`"},
		{DefaultShapes(), `[]`, "list_items", "the answer has an array at `.`"},
		{DefaultShapes(), `{"content":[{"id":1,"email":"a@example.com"}],"totalPages":1}`, "user_id", "no id (string or number) at `userId`; it has `email`, `id`"},
		{DefaultShapes(), `{"content":[{"userId":1,"mail":"a@example.com"}],"totalPages":1}`, "user_email", "no email at `email`"},
		{DefaultShapes(), `{"content":[],"pages":1}`, "list_total_pages", "no page count at `totalPages`"},
		{nested, `{"content":[]}`, "list_items", "no array at `data.users`; the answer has an array at `content`"},
	} {
		_, err := tt.shapes.readPage([]byte(tt.answer))
		var sm *ShapeMismatch
		require.ErrorAs(t, err, &sm, tt.answer)
		assert.Equal(t, tt.key, sm.Key, tt.answer)
		assert.Contains(t, sm.Problem, tt.mentions)
		assert.ErrorIs(t, err, ErrBadResponse)
	}
}

// Token issuance under other shapes: the method and path, the landing
// path nested in the body where the shapes say (or no body), the token
// read from a nested field, and the exchange URL built from its template.
func TestIssueLoginTokenUnderOtherShapes(t *testing.T) {
	h := setup(t, func(o *Options) {
		o.Shapes.TokenMethod, o.Shapes.TokenPath = http.MethodPut, "/v2/accounts/{userId}/session-token"
		o.Shapes.TokenRedirect, o.Shapes.TokenField = "options.landing.path", "result.token.value"
		o.Shapes.ExchangeURL = "https://login.platform.example/x/{token}?from={base_url}"
	})
	var body map[string]any
	h.mux.HandleFunc("PUT /api/5/v2/accounts/{id}/session-token", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body = nil
		if len(b) > 0 {
			require.NoError(t, json.Unmarshal(b, &body))
		}
		writeJSON(w, 200, map[string]any{"result": map[string]any{"token": map[string]any{"value": "tok/" + r.PathValue("id")}}})
	})
	tok, err := h.client.IssueLoginToken(context.Background(), "42", TokenProperties{RedirectTo: "/editor/7"})
	require.NoError(t, err)
	assert.Equal(t, "tok/42", tok.Token)
	assert.Equal(t, map[string]any{"options": map[string]any{"landing": map[string]any{"path": "/editor/7"}}}, body)
	assert.Equal(t, "https://login.platform.example/x/tok%2F42?from="+h.server.URL, h.client.ExchangeURL(tok))

	_, err = h.client.IssueLoginToken(context.Background(), "43", TokenProperties{})
	require.NoError(t, err)
	assert.Nil(t, body, "no landing path: no body")

	h2 := setup(t, func(o *Options) { o.Shapes.TokenField = "result.token.value" })
	h2.mux.HandleFunc("POST /api/5/login-token/{id}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"loginToken": "x"})
	})
	_, err = h2.client.IssueLoginToken(context.Background(), "1", TokenProperties{})
	var sm *ShapeMismatch
	require.True(t, errors.As(err, &sm), "%v", err)
	assert.Equal(t, "token_field", sm.Key)
	assert.Contains(t, sm.Problem, "it has `loginToken`")
}
