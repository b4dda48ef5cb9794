package platformsim

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A restarted emulator with a users file keeps its users under their ids
// and never hands out an id twice, not even one of a deleted user: a
// bridge's stored link to an id keeps meaning the same person.
func TestUsersFileKeepsUsersAcrossRestarts(t *testing.T) {
	file := filepath.Join(t.TempDir(), "users.jsonl")
	withFile := func(c *Config) { c.UsersFile = file }

	first := newEnv(t, withFile)
	status, _ := first.call(t, admin, http.MethodPost, "/api/5/public/users", []byte(`{"firstName":"Demo","lastName":"User","email":"demo@example.com"}`))
	require.Equal(t, http.StatusCreated, status)
	demoID := first.sim.Users("demo@example.com")[0].ID
	grace, err := first.sim.AddUser("Grace", "Hopper", "grace@example.com")
	require.NoError(t, err)
	gone, err := first.sim.AddUser("Gone", "User", "gone@example.com")
	require.NoError(t, err)
	require.True(t, first.sim.DeleteUser(gone.ID))

	second := newEnv(t, withFile)
	assert.Equal(t, 2, second.sim.UserCount())
	require.Len(t, second.sim.Users("DEMO@example.com"), 1)
	assert.Equal(t, demoID, second.sim.Users("demo@example.com")[0].ID)
	assert.Equal(t, []User{grace}, second.sim.Users("grace@example.com"))
	assert.Empty(t, second.sim.Users("gone@example.com"))
	status, _ = second.call(t, admin, http.MethodPost, "/api/5/public/users", []byte(`{"firstName":"Grace","lastName":"Hopper","email":"grace@example.com"}`))
	assert.Equal(t, http.StatusConflict, status, "a kept user is still there for the duplicate check")

	kat, err := second.sim.AddUser("Kat", "Johnson", "kat@example.com")
	require.NoError(t, err)
	for _, old := range []string{demoID, grace.ID, gone.ID} {
		assert.NotEqual(t, old, kat.ID, "an id is never handed out twice")
	}
	status, _ = second.call(t, admin, http.MethodPost, "/api/5/login-token/"+grace.ID, []byte(`{}`))
	assert.Equal(t, http.StatusOK, status, "a kept user gets login tokens")
}

func TestUsersFileRefusals(t *testing.T) {
	tests := []struct {
		name, content, wantErr string
	}{
		{"not JSON", "{\"userId\": 9007199254740993, \"email\": \"a@example.com\"}\nnot json\n", "line 2: not a user record"},
		{"an id below the emulator's first", "{\"userId\": 7, \"email\": \"a@example.com\"}\n", "line 1: not a user record"},
		{"one address twice", "{\"userId\": 9007199254740993, \"email\": \"a@example.com\"}\n{\"userId\": 9007199254740994, \"email\": \"A@example.com\"}\n", "A@example.com is there twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "users.jsonl")
			require.NoError(t, os.WriteFile(file, []byte(tt.content), 0o600))
			_, err := New(Config{Credentials: []Credential{admin}, UsersFile: file})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Contains(t, err.Error(), "delete the file", "the error says how to start afresh")
		})
	}
}

// A line cut short by a crash is not a record: the users before it stay.
func TestUsersFileIgnoresALastLineCutShort(t *testing.T) {
	file := filepath.Join(t.TempDir(), "users.jsonl")
	require.NoError(t, os.WriteFile(file, []byte("{\"userId\": 9007199254740993, \"email\": \"a@example.com\", \"firstName\": \"A\"}\n{\"userId\": 90071"), 0o600))
	sim, err := New(Config{Credentials: []Credential{admin}, UsersFile: file})
	require.NoError(t, err)
	assert.Equal(t, 1, sim.UserCount())
}
