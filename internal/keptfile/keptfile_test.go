package keptfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A kept file: made once and kept (0600, its directory made); one that is
// not valid is made anew (a truncated key, a hand-edited secret).
func TestRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	made := 0
	mk := func() ([]byte, error) { made++; return []byte(fmt.Sprintf("key-%d", made)), nil }
	valid := func(b []byte) bool { return strings.HasPrefix(string(b), "key-") }
	first, err := Read(dir, "k", valid, mk)
	require.NoError(t, err)
	again, err := Read(dir, "k", valid, mk)
	require.NoError(t, err)
	assert.Equal(t, first, again, "kept")
	assert.Equal(t, 1, made)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "k"), []byte("garbage"), 0o600))
	fresh, err := Read(dir, "k", valid, mk)
	require.NoError(t, err)
	assert.Equal(t, "key-2", string(fresh), "an invalid one is made anew")
	info, err := os.Stat(filepath.Join(dir, "k"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}
