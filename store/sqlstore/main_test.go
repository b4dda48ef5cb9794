package sqlstore_test

import (
	"os"
	"testing"

	"github.com/ssobridge/ssobridge/internal/skipnote"
)

// TestMain says which suites were skipped (the PostgreSQL ones without
// their server), also without -v.
func TestMain(m *testing.M) { os.Exit(skipnote.Main(m, "store/sqlstore")) }
