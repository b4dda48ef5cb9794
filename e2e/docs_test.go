package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/skipnote"
)

// outsideDocs are documents of the project's makers that the repository
// does not hold (spelled in pieces, so this file does not cite them).
var outsideDocs = []string{"DESIGN" + ".md", "../" + "shared", "TOOLCHAIN" + ".md", "partner-api" + ".md"}

// TestReaderDocsStandAlone: what a reader of the repository opens (the
// README, SECURITY.md) installs packages the way a fresh Debian machine
// needs (apt-get update first), and every relative link, there and in
// docs/, leads to a file that exists. Nothing in the repository (docs,
// code, comments) cites a document outside it.
func TestReaderDocsStandAlone(t *testing.T) {
	root := ".."
	readerDocs := []string{"README.md", "SECURITY.md"}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "data" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); d.IsDir() || (ext != ".go" && ext != ".md" && ext != ".yaml" && ext != ".templ") {
			return nil
		}
		text := readDoc(t, path)
		for _, outside := range outsideDocs {
			assert.NotContains(t, text, outside, "%s cites %s, which a reader of the repository does not have", path, outside)
		}
		return nil
	})
	require.NoError(t, err)
	for _, name := range readerDocs {
		text := readDoc(t, filepath.Join(root, name))
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

// docImages are the docs/img pictures README.md and docs/*.md show, as
// "img/NAME.png".
func docImages(t *testing.T) map[string]bool {
	t.Helper()
	docs, err := filepath.Glob("../docs/*.md")
	require.NoError(t, err)
	shown := map[string]bool{}
	for _, path := range append(docs, "../README.md") {
		for _, m := range regexp.MustCompile(`\]\((?:docs/)?(img/[^)]+\.png)\)`).FindAllStringSubmatch(readDoc(t, path), -1) {
			shown[m[1]] = true
		}
	}
	return shown
}

// Every picture in docs/img is shown by a doc (and every one shown is
// there: TestReaderDocsStandAlone).
func TestEveryPictureIsShown(t *testing.T) {
	files, err := filepath.Glob("../docs/img/*.png")
	require.NoError(t, err)
	shown := docImages(t)
	for _, f := range files {
		assert.True(t, shown["img/"+filepath.Base(f)], "docs/img/%s is shown by no doc: show it or delete it", filepath.Base(f))
	}
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// The deploy example's secrets file (docs/deploy.md writes docs/deploy/.env)
// can be neither committed nor copied into an image: git ignores it, and
// .dockerignore leaves it out of the build context (COPY . .).
func TestDeploySecretsStayOut(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		skipnote.Skip(t, "tests that ask git", "install git")
	}
	for _, path := range []string{"docs/deploy/.env", ".env", "prod.env"} {
		cmd := exec.Command("git", "check-ignore", "-q", path)
		cmd.Dir = ".."
		assert.NoError(t, cmd.Run(), "git ignores %s", path)
	}
	var patterns []string
	for _, line := range strings.Split(readDoc(t, "../.dockerignore"), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	ignored := func(path string) bool {
		for _, p := range patterns {
			rest, anyDir := strings.CutPrefix(p, "**/")
			segs := strings.Split(path, "/")
			for i := range segs {
				if !anyDir && i > 0 {
					break
				}
				if ok, _ := filepath.Match(rest, strings.Join(segs[i:], "/")); ok {
					return true
				}
			}
		}
		return false
	}
	for _, path := range []string{"docs/deploy/.env", ".env", "deploy/prod.env"} {
		assert.True(t, ignored(path), ".dockerignore leaves out %s", path)
	}
	assert.False(t, ignored("main.go"))
	assert.False(t, ignored("docs/deploy/compose.yaml"))
}

// The deploy guide: every variable compose.yaml reads is written into .env
// by the guide (the scheme names the README asks for included); what to
// edit, and that Compose v2 is needed, come before the commands; the nginx
// file says where it goes.
func TestDeployGuide(t *testing.T) {
	guide := readDoc(t, "../docs/deploy.md")
	compose := readDoc(t, "../docs/deploy/compose.yaml")
	start := strings.Index(guide, "cat > .env <<EOF")
	require.Positive(t, start)
	envFile := guide[start : strings.Index(guide[start:], "\nEOF\n")+start]
	vars := regexp.MustCompile(`\$\{([A-Z_]+)`).FindAllStringSubmatch(compose, -1)
	require.NotEmpty(t, vars)
	for _, v := range vars {
		assert.Contains(t, envFile, "\n"+v[1]+"=", "the guide's .env sets %s, which compose.yaml reads", v[1])
	}
	for _, v := range []string{"SSOBRIDGE_PLATFORM_SCHEME_HMAC", "SSOBRIDGE_PLATFORM_SCHEME_SIMPLE", "SSOBRIDGE_SERVER_PUBLIC_URL", "SSOBRIDGE_PLATFORM_BASE_URL"} {
		assert.Contains(t, compose, "${"+v, "compose.yaml passes %s", v)
	}
	up := strings.Index(guide, "docker compose up")
	for _, before := range []string{"Compose v2", "**First**", "Caddyfile"} {
		i := strings.Index(guide, before)
		assert.True(t, i >= 0 && i < up, "%q comes before the commands", before)
	}
	assert.Contains(t, guide, "/etc/nginx/conf.d/")
	assert.Contains(t, readDoc(t, "../docs/deploy/nginx.conf"), "http { }")
	// /metrics is not public in either example: on a listener of its own,
	// and refused by both proxies.
	assert.Contains(t, compose, "SSOBRIDGE_SERVER_METRICS_ADDR")
	assert.Contains(t, readDoc(t, "../docs/deploy/Caddyfile"), "respond /metrics 404")
	assert.Contains(t, readDoc(t, "../docs/deploy/nginx.conf"), "location = /metrics { return 404; }")
}

// The README's first screen: the Go it asks for is go.mod's, and the
// table of ways in comes before the long sections, each way with its
// guide.
func TestREADMEFirstScreen(t *testing.T) {
	readme := readDoc(t, "../README.md")
	mod := readDoc(t, "../go.mod")
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(mod)
	require.NotNil(t, goLine)
	assert.Contains(t, readme, "You need Go "+goLine[1]+" or later.")
	pick := strings.Index(readme, "## Pick your way in")
	require.GreaterOrEqual(t, pick, 0)
	assert.Less(t, strings.Count(readme[:pick], "\n"), 60, "the ways in come on the first screen")
	for _, h := range []string{"## How it works", "## Commands", "## Configuration"} {
		assert.Less(t, pick, strings.Index(readme, h), "before %s", h)
	}
	table := readme[pick : strings.Index(readme[pick:], "\n## ")+pick]
	for _, guide := range []string{"docs/portal.md", "docs/saml.md", "docs/lti.md", "docs/scim.md"} {
		assert.Contains(t, table, "("+guide+")")
	}
	assert.NotContains(t, readme, "| `server.addr` |", "the key table is docs/configuration.md's")
}
