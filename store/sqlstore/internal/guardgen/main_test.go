package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// guard_gen.go is what the generator makes of today's Store: a method
// added to Store without `go generate ./store/sqlstore` fails here (and the
// build, since the Guard would not be a Store).
func TestGuardIsGenerated(t *testing.T) {
	src, err := os.ReadFile("../../../store.go")
	require.NoError(t, err)
	want, err := generate(src)
	require.NoError(t, err)
	got, err := os.ReadFile("../../guard_gen.go")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "store/sqlstore/guard_gen.go is stale: run go generate ./store/sqlstore")
}

// A Store method the generator cannot bound is refused with its name.
func TestRefusesWhatItCannotBound(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"no context", "package store\ntype Store interface{ F(id int64) error }", "F: the first parameter must be ctx context.Context"},
		{"no error", "package store\nimport \"context\"\ntype Store interface{ F(ctx context.Context) int }", "F: the last result must be an error"},
		{"no Store", "package store\ntype Other interface{}", "no Store interface"},
		{"a role of another package", "package store\nimport \"io\"\ntype Store interface{ io.Closer }", "something other than a role interface"},
		{"an unknown role", "package store\ntype Store interface{ Accounts }", "Accounts, which is no interface"},
		{"a role in a role", "package store\nimport \"context\"\ntype Store interface{ A }\ntype A interface{ B }\ntype B interface{ F(id int64) error }\nvar _ context.Context", "F: the first parameter must be ctx context.Context"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := generate([]byte(tc.src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
