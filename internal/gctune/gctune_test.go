package gctune

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ssobridge/ssobridge/config"
)

// The memory limit follows the hashing settings, and GOMEMLIMIT wins.
func TestLimitMemory(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOMEMLIMIT", "")
	limit, set := LimitMemory(config.Password{Argon2MemoryKiB: 19456, HashConcurrency: 2})
	assert.True(t, set)
	assert.Equal(t, int64(64<<20), limit)
	assert.Equal(t, limit, debug.SetMemoryLimit(-1))
	limit, _ = LimitMemory(config.Password{Argon2MemoryKiB: 65536, HashConcurrency: 4})
	assert.Equal(t, int64(24<<20+4*(64<<20+1<<20)), limit)

	t.Setenv("GOMEMLIMIT", "1GiB")
	_, set = LimitMemory(config.Password{Argon2MemoryKiB: 19456, HashConcurrency: 2})
	assert.False(t, set, "an operator's GOMEMLIMIT is kept")
}

// Serving raises GOGC, and the GOGC variable wins.
func TestRaiseGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	assert.True(t, RaiseGCPercent())
	assert.Equal(t, ServingGCPercent, debug.SetGCPercent(ServingGCPercent))

	debug.SetGCPercent(150) // as GOGC=150 would have at start
	t.Setenv("GOGC", "150")
	assert.False(t, RaiseGCPercent(), "an operator's GOGC is kept")
	assert.Equal(t, 150, debug.SetGCPercent(150))
}
