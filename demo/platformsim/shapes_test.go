package platformsim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A shapes file is read at its top level or under platform.shapes (a
// bridge configuration); unknown keys and shapes the emulator cannot
// serve are refused; an empty list_total_pages or token_redirect is none.
func TestLoadShapes(t *testing.T) {
	write := func(text string) string {
		p := filepath.Join(t.TempDir(), "shapes.yaml")
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	s, err := LoadShapes(write("users_path: /v2/accounts\nfirst_page: 1\nlist_total_pages: \"\"\ntoken_redirect:\n"))
	require.NoError(t, err)
	assert.Equal(t, "/v2/accounts", s.UsersPath)
	assert.Equal(t, 1, s.FirstPage)
	assert.Equal(t, none, s.ListTotalPages)
	assert.Equal(t, none, s.TokenRedirect)
	assert.Equal(t, "loginToken", s.TokenField, "the rest default")

	s, err = LoadShapes(write("server:\n  addr: x\nplatform:\n  base_url: http://p\n  shapes:\n    list_items: data.users\n"))
	require.NoError(t, err)
	assert.Equal(t, "data.users", s.ListItems, "under platform.shapes")

	for text, want := range map[string]string{
		"list_itemz: x\n":                      "list_itemz",
		"token_path: /tokens/user-{userId}\n":  "whole path segment",
		"token_method: DELETE\n":               "token_method",
		"first_page: 3\n":                      "first_page",
		"exchange_url: \"{base_url}/login\"\n": "exchange_url",
		"users_path: users\n":                  "must start with /",
	} {
		_, err := LoadShapes(write(text))
		assert.ErrorContains(t, err, want, text)
	}
}
