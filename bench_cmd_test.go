package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The load tool itself: both load modes finish, every launch succeeds, and
// the figures that are exact (platform calls per launch, new connections)
// are at the floor. Its speed figures are reported, never asserted.
func TestBenchCommand(t *testing.T) {
	for _, mode := range [][]string{
		{"--concurrency", "4"},
		{"--concurrency", "4", "--rate", "400"},
	} {
		t.Run(strings.Join(mode, " "), func(t *testing.T) {
			args := append([]string{"bench", "--accounts", "20", "--duration", "300ms"}, mode...)
			code, out, errOut := runCLI(t, "", nil, args...)
			require.Equal(t, 0, code, errOut)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			last := lines[len(lines)-1]
			for _, want := range []string{"calls_returning=1.00", "calls_unlinked=2.00", "calls_new=3.00", "conns=0", "behind="} {
				assert.Contains(t, last, want)
			}
			assert.Contains(t, out, ", 0 failed")
		})
	}
}

func TestBenchRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--rate", "-1"},
		{"bench", "--rate", "NaN"},
		{"bench", "--concurrency", "0"},
		{"bench", "--duration", "1h"},
		{"bench", "--accounts", "0"},
	} {
		code, _, errOut := runCLI(t, "", nil, args...)
		assert.Equal(t, 2, code, args)
		assert.Contains(t, errOut, "bench: --", args)
	}
}
