package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReaderDocsStandAlone: what a reader of the repository opens (the
// README, SECURITY.md) cites no file outside it, installs packages the way
// a fresh Debian machine needs (apt-get update first), and every relative
// link, there and in docs/, leads to a file that exists.
func TestReaderDocsStandAlone(t *testing.T) {
	root := ".."
	readerDocs := []string{"README.md", "SECURITY.md"}
	for _, name := range readerDocs {
		text := readDoc(t, filepath.Join(root, name))
		for _, outside := range []string{"DESIGN.md", "../shared", "TOOLCHAIN.md"} {
			assert.NotContains(t, text, outside, "%s cites %s, which a reader of the repository does not have", name, outside)
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, "apt-get install") {
				assert.Contains(t, line, "apt-get update", "%s: a fresh machine needs the package lists first: %q", name, line)
			}
		}
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	link := regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)
	for _, path := range append(docs, filepath.Join(root, "README.md"), filepath.Join(root, "SECURITY.md")) {
		for _, m := range link.FindAllStringSubmatch(readDoc(t, path), -1) {
			target := filepath.Join(filepath.Dir(path), m[1])
			_, err := os.Stat(target)
			assert.NoError(t, err, "%s links to %s", path, m[1])
		}
	}
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
