package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/ssobridge/ssobridge/"

// imports lists each package of the module (tests left out) with the
// module's packages it imports.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../...").Output()
	require.NoError(t, err)
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		graph[pkg] = []string{}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module) {
				graph[pkg] = append(graph[pkg], strings.TrimPrefix(imp, module))
			}
		}
	}
	return graph
}

// The import graph runs one way, as docs/architecture.md draws it: the
// store's tree and the rules under it import nothing above them, only the
// wiring (app) and the tools open the SQL layer, and the handlers reach the
// platform's client and the database only through their own interfaces.
func TestImportGraphRunsOneWay(t *testing.T) {
	graph := imports(t)
	// Everything each of these may import of the module.
	allowed := map[string][]string{
		"store":                            {"mailaddr"},
		"store/sqlstore":                   {"store", "mailaddr", "internal/randid"},
		"store/storecache":                 {"store"},
		"accounts/passhash":                {},
		"accounts/regulation":              {"store"},
		"accounts":                         {"store", "accounts/passhash", "mailaddr", "internal/randid", "internal/groupname"},
		"accounts/signin":                  {"store", "accounts", "accounts/passhash", "accounts/regulation", "mailaddr", "locale"},
		"internal/groupname":               {},
		"mailaddr":                         {},
		"localpath":                        {},
		"apiclient":                        {"mailaddr"},
		"demo/platformsim":                 {"internal/randid"},
		"demo/samplelms":                   {},
		"launch":                           {"store", "apiclient", "localpath", "launch/pacing"},
		"launch/pacing":                    {"store", "internal/randid"},
		"store/storetest":                  {"store", "internal/fakeclock", "internal/randid"},
		"internal/randid":                  {},
		"internal/loopback":                {},
		"store/sqlstore/internal/guardgen": {},
		"scim":                             {"accounts", "accounts/regulation", "accounts/signin", "store", "mailaddr", "scim/internal/scimreq", "config", "wayin"},
		"scim/internal/scimreq":            {"store"},
		"wayin/lti":                        {"store", "internal/randid", "internal/loopback", "internal/outside", "internal/outbound", "internal/poll", "wayin", "accounts/signin", "accounts", "views", "locale", "localpath", "mailaddr", "config", "launch/provision", "internal/keptfile", "demo/samplelms"},
		"wayin/oidc":                       {"internal/randid", "internal/groupname", "internal/loopback", "internal/outside", "internal/outbound", "internal/poll", "wayin", "accounts/signin", "accounts", "views", "store", "localpath", "locale", "config"},
		"internal/outside":                 {},
		"internal/poll":                    {},
		"internal/seal":                    {},
		"internal/outbound":                {"internal/loopback"},
		"wayin/samlsso":                    {"store", "mailaddr", "internal/randid", "internal/loopback", "internal/outbound", "internal/poll", "internal/groupname", "wayin", "accounts/signin", "accounts", "views", "localpath", "locale", "config"},
		"wayin/portal":                     {"store", "mailaddr", "internal/randid", "internal/keptfile", "wayin", "accounts/signin", "accounts", "views", "locale", "config", "localpath"},
		"internal/keptfile":                {},
		"wayin":                            {"accounts/signin", "accounts/regulation", "store", "views", "locale", "config"},
		"config":                           {"apiclient", "mailaddr", "internal/loopback", "internal/outbound", "locale"},
		"config/configtest":                {"config"},
		"locale":                           {},
		"views":                            {"locale"},
		"handlers/metrics":                 {"launch", "store"},
		"handlers/console":                 {"accounts", "accounts/passhash", "accounts/signin", "launch/provision", "mailaddr", "store", "views"},
		"internal/viewgallery":             {"views", "locale"},
	}
	for pkg, may := range allowed {
		imps, ok := graph[pkg]
		require.True(t, ok, "no package %s", pkg)
		for _, imp := range imps {
			assert.Contains(t, may, imp, "%s imports %s", pkg, imp)
		}
	}
	// Who may open the SQL layer and the cache: the wiring and the tools.
	for pkg, imps := range graph {
		for _, imp := range imps {
			if imp == "store/sqlstore" || imp == "store/storecache" {
				assert.True(t, slices.Contains([]string{"app", "commands", "loadtest"}, pkg), "%s imports %s: only app wires the store", pkg, imp)
			}
		}
	}
	for _, imp := range graph["handlers"] {
		assert.NotContains(t, []string{"apiclient", "app", "commands", "accounts/regulation", "scim"}, imp, "handlers imports %s", imp)
		// Each way in is a package of its own behind wayin.Way: handlers
		// mounts the list app builds and knows none of them.
		assert.NotContains(t, []string{"wayin/portal", "wayin/oidc", "wayin/samlsso", "wayin/lti"}, imp, "handlers imports the way in %s", imp)
	}
}

// The README's layout names every top-level package, so a newcomer who
// reads it finds each folder of the tree.
func TestReadmeLayoutNamesEveryPackage(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, layout, ok := strings.Cut(string(readme), "\n## Layout\n")
	require.True(t, ok, "README.md has a Layout section")
	layout, _, _ = strings.Cut(layout, "\n## ")
	entries, err := os.ReadDir("..")
	require.NoError(t, err)
	checked := 0
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		gos, err := filepath.Glob(filepath.Join("..", e.Name(), "*.go"))
		require.NoError(t, err)
		subs, err := filepath.Glob(filepath.Join("..", e.Name(), "*", "*.go"))
		require.NoError(t, err)
		if len(gos)+len(subs) == 0 {
			continue // docs, static: no Go
		}
		checked++
		assert.Contains(t, layout, "`"+e.Name()+"/", "README.md's layout names %s/", e.Name())
	}
	assert.Greater(t, checked, 20)
}
