package e2e

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's demo, restarted: the demo admin opens the editor, Grace
// Hopper opens it from the sample portal, `go run .` is restarted on the
// same data, and Grace arrives first. Each still lands in the editor as
// themselves (the embedded emulator keeps its users beside the store, so
// a stored link keeps meaning the same person), and no platform user is
// linked to two accounts.
func TestDemoRestartKeepsEveryoneInTheirOwnEditor(t *testing.T) {
	first := startTestApp(t, testOptions{})
	dsn := first.dsn
	first.addNamedAccount(t, "demo@example.com", "Demo", "User", true)

	openAsDemo := func(ta *testApp) string {
		b := ta.browser(t)
		require.Equal(t, http.StatusSeeOther, b.login("demo@example.com", testPassword).status)
		_, editor := b.follow(t, ta, b.launch())
		return editor
	}
	openFromPortal := func(ta *testApp) string {
		b := ta.browser(t)
		tok := b.csrf("/demo/portal")
		_, editor := b.follow(t, ta, b.post("/demo/portal/open", url.Values{"_csrf": {tok}}))
		return editor
	}

	assert.Contains(t, openAsDemo(first), "Signed in as Demo User")
	assert.Contains(t, openFromPortal(first), "Signed in as Grace Hopper")
	demoID := first.sim.Users("demo@example.com")[0].ID
	graceID := first.sim.Users("grace.hopper@portal.example")[0].ID
	first.stop()

	second := startTestApp(t, testOptions{dsn: dsn})
	assert.Contains(t, openFromPortal(second), "Signed in as Grace Hopper", "the portal first after the restart")
	assert.Contains(t, openAsDemo(second), "Signed in as Demo User", "the demo admin is still the demo admin")
	assert.Equal(t, 2, second.sim.UserCount(), "no platform user made again")
	assert.Equal(t, demoID, second.sim.Users("demo@example.com")[0].ID)
	assert.Equal(t, graceID, second.sim.Users("grace.hopper@portal.example")[0].ID)
	links, err := second.store.ListLinks(context.Background(), []string{demoID, graceID})
	require.NoError(t, err)
	assert.Len(t, links, 2, "each platform user linked to its own account")
	assert.NotEqual(t, links[demoID], links[graceID])
}
