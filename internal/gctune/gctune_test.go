package gctune

import (
	"runtime/debug"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"

	"github.com/ssobridge/ssobridge/config"
)

// The memory limit follows the hashing settings outside a container, the
// container's limit inside one (cgroup v2 at the process's own path or at
// the root, v1), and GOMEMLIMIT wins.
func TestLimitMemory(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOMEMLIMIT", "")
	pw := config.Password{Argon2MemoryKiB: 19456, HashConcurrency: 2}
	none := fstest.MapFS{"sys/fs/cgroup/memory.max": {Data: []byte("max\n")}}
	l := LimitMemory(pw, none)
	assert.Equal(t, Limit{Bytes: 64 << 20, From: "password hashing", Set: true}, l)
	assert.Equal(t, l.Bytes, debug.SetMemoryLimit(-1))
	l = LimitMemory(config.Password{Argon2MemoryKiB: 65536, HashConcurrency: 4}, fstest.MapFS{})
	assert.Equal(t, int64(24<<20+4*(64<<20+1<<20)), l.Bytes)

	for name, root := range map[string]fstest.MapFS{
		"cgroup v2, its own path": {"proc/self/cgroup": {Data: []byte("0::/kubepods/pod1/c1\n")}, "sys/fs/cgroup/kubepods/pod1/c1/memory.max": {Data: []byte("536870912\n")},
			"sys/fs/cgroup/memory.max": {Data: []byte("max\n")}},
		"cgroup v2, the root (a container's namespace)": {"proc/self/cgroup": {Data: []byte("0::/\n")}, "sys/fs/cgroup/memory.max": {Data: []byte("536870912\n")}},
		"cgroup v1":               {"sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte("536870912\n")}},
		"cgroup v1, its own path": {"proc/self/cgroup": {Data: []byte("5:devices:/\n4:memory:/docker/c1\n0::/\n")}, "sys/fs/cgroup/memory/docker/c1/memory.limit_in_bytes": {Data: []byte("536870912\n")}},
	} {
		t.Run(name, func(t *testing.T) {
			l := LimitMemory(pw, root)
			container := int64(512 << 20)
			assert.Equal(t, Limit{Bytes: int64(float64(container) * 0.9), From: "container", Container: container, Set: true}, l)
			assert.Equal(t, l.Bytes, debug.SetMemoryLimit(-1))
		})
	}
	for name, root := range map[string]fstest.MapFS{
		"cgroup v1 without a limit": {"sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte("9223372036854771712\n")}},
		"unreadable":                {"sys/fs/cgroup/memory.max": {Data: []byte("lots\n")}},
	} {
		assert.Equal(t, FromHashing, LimitMemory(pw, root).From, name)
	}

	t.Setenv("GOMEMLIMIT", "1GiB")
	l = LimitMemory(pw, fstest.MapFS{"sys/fs/cgroup/memory.max": {Data: []byte("536870912\n")}})
	assert.False(t, l.Set, "an operator's GOMEMLIMIT is kept")
	assert.Equal(t, FromEnvironment, l.From)
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
