// Package gctune sizes the Go runtime's garbage collection for serving:
// process-wide settings, so only serve (and the load tool's floor, to
// compare alike) calls them, and an operator's GOMEMLIMIT or GOGC wins.
package gctune

import (
	"os"
	"runtime/debug"

	"github.com/ssobridge/ssobridge/config"
)

// LimitMemory gives the Go runtime a soft memory limit sized from the
// password-hashing settings, unless GOMEMLIMIT sets one already: argon2id
// allocates its memory afresh for every hash, and without a limit the
// garbage lets a sign-in storm double the heap (152 MiB peak for 200 at
// once; 93 MiB for 300 with this limit and passhash collecting each hash's
// memory as its slot is freed, which costs hashing speed: GC
// runs more, and more of a storm gets the busy page; a larger GOMEMLIMIT
// trades memory back for speed). The limit is process-wide: serve sets it;
// it returns the limit in force and whether it set it.
func LimitMemory(pw config.Password) (int64, bool) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1), false
	}
	limit := int64(24<<20) + int64(pw.HashConcurrency)*(int64(pw.Argon2MemoryKiB)<<10+1<<20) // 64 MiB by default
	debug.SetMemoryLimit(limit)
	return limit, true
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
