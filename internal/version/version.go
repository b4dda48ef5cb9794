// Package version says which build of ssobridge runs: its version, commit
// and build time, as the build set them (the Dockerfile and the go build
// line in docs/deploy.md pass them with -ldflags -X), else as the Go
// toolchain recorded them in the module's build information.
package version

import (
	"runtime/debug"
	"strings"
)

// Set at build time with
//
//	-ldflags "-X github.com/ssobridge/ssobridge/internal/version.version=1.0.0
//	          -X github.com/ssobridge/ssobridge/internal/version.commit=<sha>
//	          -X github.com/ssobridge/ssobridge/internal/version.built=<RFC 3339 time>"
//
// and never written otherwise: empty, the build information answers.
var (
	version string
	commit  string
	built   string
)

// Info is a build's identity.
type Info struct {
	Version  string // "1.0.0"; "(devel)" for a build from a checkout without -X
	Commit   string // the VCS revision; "" if unknown
	Built    string // the build time, else the commit's time; "" if unknown
	Modified bool   // built from a checkout with uncommitted changes
	Go       string // the Go toolchain
}

// Get is this binary's Info.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	return from(bi, ok, version, commit, built)
}

// from is Info from the build information (bi, ok) and the values set at
// build time (which win).
func from(bi *debug.BuildInfo, ok bool, v, c, b string) Info {
	var i Info
	if ok {
		i.Version, i.Go = bi.Main.Version, bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Commit = s.Value
			case "vcs.time":
				i.Built = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
	}
	if v != "" {
		i.Version = strings.TrimPrefix(v, "v")
	}
	if c != "" {
		i.Commit, i.Modified = c, false
	}
	if b != "" {
		i.Built = b
	}
	if i.Version == "" {
		i.Version = "(unknown)"
	}
	return i
}

// Short is the version and the commit's first 12 digits, for a log line
// and /readyz: "1.0.0 (4f2a9c1e0b7d)".
func (i Info) Short() string {
	if i.Commit == "" {
		return i.Version
	}
	return i.Version + " (" + i.Commit[:min(12, len(i.Commit))] + ")"
}

// String is what `ssobridge version` prints.
func (i Info) String() string {
	s := "ssobridge " + i.Version
	if i.Commit == "" {
		s += ", commit unknown (built without VCS information or -ldflags -X)"
	} else {
		s += ", commit " + i.Commit
		if i.Modified {
			s += " with uncommitted changes"
		}
	}
	if i.Built != "" {
		s += ", built " + i.Built
	}
	if i.Go != "" {
		s += ", " + i.Go
	}
	return s
}
