package skipnote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteOneLinePerSuite(t *testing.T) {
	Record("PostgreSQL suites", "set SSOBRIDGE_TEST_POSTGRES_DSN")
	Record("browser tests", "install chromium")
	Record("PostgreSQL suites", "set SSOBRIDGE_TEST_POSTGRES_DSN")
	var b strings.Builder
	Write(&b, "example/pkg")
	assert.Equal(t, "skipped\texample/pkg: PostgreSQL suites (2 tests): set SSOBRIDGE_TEST_POSTGRES_DSN\n"+
		"skipped\texample/pkg: browser tests (1 test): install chromium\n", b.String())
}

func TestSkipRecordsAndSkips(t *testing.T) {
	var skipped bool
	t.Run("inner", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Skip(t, "Dex suites", "set SSOBRIDGE_TEST_DEX")
	})
	assert.True(t, skipped)
	var b strings.Builder
	Write(&b, "p")
	assert.Contains(t, b.String(), "p: Dex suites (1 test): set SSOBRIDGE_TEST_DEX\n")
}

// Each binary of a run appends its lines to the one file CI prints.
func TestAppend(t *testing.T) {
	Record("Dex suites", "set SSOBRIDGE_TEST_DEX")
	path := filepath.Join(t.TempDir(), "skipped")
	require.NoError(t, Append(path, "a"))
	require.NoError(t, Append(path, "b"))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), "skipped\ta: Dex suites")
	assert.Contains(t, string(data), "skipped\tb: Dex suites")
}
