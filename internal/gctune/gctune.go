// Package gctune sizes the Go runtime's garbage collection for serving:
// process-wide settings, so only serve (and the load tool's floor, to
// compare alike) calls them, and an operator's GOMEMLIMIT or GOGC wins.
package gctune

import (
	"io/fs"
	"os"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/ssobridge/ssobridge/config"
)

// LimitMemory gives the Go runtime a soft memory limit sized from the
// password-hashing settings, unless GOMEMLIMIT sets one already: argon2id
// allocates its memory afresh for every hash, and without a limit the
// garbage lets a sign-in storm double the heap (152 MiB peak for 200 at
// once; 93 MiB for 300 with this limit and passhash collecting each hash's
// memory as its slot is freed, which costs hashing speed: GC
// runs more, and more of a storm gets the busy page; a larger GOMEMLIMIT
// trades memory back for speed). The limit is process-wide: serve sets it.
//
// In a container with a memory limit (a cgroup's), the limit follows the
// container instead: CgroupFraction of it, so that the collector works
// harder before the kernel kills the process, and the memory an operator
// gave the container is used. The returned Limit says which.
func LimitMemory(pw config.Password, root fs.FS) Limit {
	if os.Getenv("GOMEMLIMIT") != "" {
		return Limit{Bytes: debug.SetMemoryLimit(-1), From: FromEnvironment}
	}
	l := Limit{Bytes: int64(24<<20) + int64(pw.HashConcurrency)*(int64(pw.Argon2MemoryKiB)<<10+1<<20), From: FromHashing} // 64 MiB by default
	if c, ok := cgroupLimit(root); ok {
		l = Limit{Bytes: int64(float64(c) * CgroupFraction), From: FromContainer, Container: c}
	}
	debug.SetMemoryLimit(l.Bytes)
	l.Set = true
	return l
}

// Limit is the Go memory limit in force and where it came from.
type Limit struct {
	Bytes     int64
	From      LimitSource
	Container int64 // the container's limit, when From is FromContainer
	Set       bool  // LimitMemory set it (not GOMEMLIMIT)
}

// LimitSource says where a memory limit came from.
type LimitSource string

// The sources of the memory limit.
const (
	FromEnvironment LimitSource = "GOMEMLIMIT"
	FromContainer   LimitSource = "container"
	FromHashing     LimitSource = "password hashing"
)

// CgroupFraction is the part of a container's memory limit the Go heap
// keeps to: the rest is the runtime's own (stacks, metadata) and what is
// not Go's (SQLite's page cache, the binary).
const CgroupFraction = 0.9

// cgroupLimit is the memory limit of this process's cgroup (v2, else
// v1) under root ("/" of the machine), if it has one.
func cgroupLimit(root fs.FS) (int64, bool) {
	var paths []string
	if b, err := fs.ReadFile(root, "proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			_, rest, _ := strings.Cut(line, ":")
			controllers, p, _ := strings.Cut(rest, ":")
			switch {
			case strings.HasPrefix(line, "0::"): // v2: "0::/path"
				paths = append(paths, path.Join("sys/fs/cgroup", p, "memory.max"))
			case slices.Contains(strings.Split(controllers, ","), "memory"): // v1: "4:memory:/path"
				paths = append(paths, path.Join("sys/fs/cgroup/memory", p, "memory.limit_in_bytes"))
			}
		}
	}
	paths = append(paths, "sys/fs/cgroup/memory.max", "sys/fs/cgroup/memory/memory.limit_in_bytes")
	for _, p := range paths {
		b, err := fs.ReadFile(root, strings.TrimPrefix(path.Clean(p), "/"))
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			return 0, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 { // v1 says "no limit" with a huge number
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// ServingGCPercent is the GOGC serve runs with. The bridge's live heap
// under load is small, so at Go's default of 100 it collected dozens of
// times a second and the collector's fixed costs (scanning every
// goroutine's stack) were a tenth of a launch's CPU (docs/performance.md,
// "Decisions and their figures"). The memory limit stays the backstop:
// near it, the collector runs as often as it must.
const ServingGCPercent = 400

// RaiseGCPercent sets GOGC to ServingGCPercent unless the GOGC variable
// chooses; process-wide, so serve calls it. It reports whether it set it.
func RaiseGCPercent() bool {
	if os.Getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(ServingGCPercent)
	return true
}
