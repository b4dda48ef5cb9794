package skipnote

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
