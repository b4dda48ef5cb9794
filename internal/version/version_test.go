package version

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInfo(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "9854e49d0a1b2c3d"}, {Key: "vcs.time", Value: "2026-11-23T11:24:53Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		name             string
		bi               *debug.BuildInfo
		ok               bool
		v, c, b          string
		wantLong, wantSh string
	}{
		{"no build information", nil, false, "", "", "", "ssobridge (unknown), commit unknown (built without VCS information or -ldflags -X)", "(unknown)"},
		{"a checkout without VCS information", bi, true, "", "", "", "ssobridge (devel), commit unknown (built without VCS information or -ldflags -X), go1.26.8", "(devel)"},
		{"a checkout with VCS information", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs}, true, "", "", "",
			"ssobridge (devel), commit 9854e49d0a1b2c3d with uncommitted changes, built 2026-11-23T11:24:53Z, go1.26.8", "(devel) (9854e49d0a1b)"},
		{"set at build time (the image: no .git)", bi, true, "v1.0.0", "4f2a9c1e", "2026-11-28T06:00:00Z",
			"ssobridge 1.0.0, commit 4f2a9c1e, built 2026-11-28T06:00:00Z, go1.26.8", "1.0.0 (4f2a9c1e)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := from(tc.bi, tc.ok, tc.v, tc.c, tc.b)
			assert.Equal(t, tc.wantLong, i.String())
			assert.Equal(t, tc.wantSh, i.Short())
		})
	}
}
