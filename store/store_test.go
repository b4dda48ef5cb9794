package store

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name    string
		in      NewAccount
		problem string // "" when valid
	}{
		{"valid", NewAccount{Email: " ada@example.com ", FirstName: " Ada ", LastName: "Lovelace", PasswordHash: "h"}, ""},
		{"non-ASCII names", NewAccount{Email: "zoe@example.com", FirstName: "Zoë", LastName: "Ångström", PasswordHash: "h"}, ""},
		{"bad email", NewAccount{Email: "nope", FirstName: "A", LastName: "B", PasswordHash: "h"}, "is not an e-mail address"},
		{"no first name", NewAccount{Email: "a@example.com", LastName: "B", PasswordHash: "h"}, "first and last name are required"},
		{"long name", NewAccount{Email: "a@example.com", FirstName: strings.Repeat("a", 101), LastName: "B", PasswordHash: "h"}, "limited to 100"},
		{"invalid UTF-8 first name", NewAccount{Email: "a@example.com", FirstName: "Ad\xffa", LastName: "B", PasswordHash: "h"}, "first name is not valid UTF-8 text"},
		{"invalid UTF-8 last name", NewAccount{Email: "a@example.com", FirstName: "A", LastName: "\xc3", PasswordHash: "h"}, "last name is not valid UTF-8 text"},
		{"control character", NewAccount{Email: "a@example.com", FirstName: "A\x00da", LastName: "B", PasswordHash: "h"}, "first name holds a control character"},
		{"line break", NewAccount{Email: "a@example.com", FirstName: "A", LastName: "B\nC", PasswordHash: "h"}, "last name holds a control character"},
		{"no password", NewAccount{Email: "a@example.com", FirstName: "A", LastName: "B"}, "a password is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.in
			err := n.Normalize()
			if tt.problem == "" {
				assert.NoError(t, err)
				assert.Equal(t, strings.TrimSpace(tt.in.Email), n.Email)
				assert.Equal(t, strings.TrimSpace(tt.in.FirstName), n.FirstName)
				return
			}
			assert.ErrorIs(t, err, ErrInvalid)
			assert.ErrorContains(t, err, tt.problem)
		})
	}
}
