package handlers

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Request ids are 16 hex digits, distinct within a process, and another
// process's (another random start) are unrelated.
func TestRequestIDGenerator(t *testing.T) {
	a, b := newRequestIDs(), newRequestIDs()
	seen := map[string]bool{}
	hex16 := regexp.MustCompile(`^[0-9a-f]{16}$`)
	for range 100000 {
		id := a.next()
		require.Regexp(t, hex16, id)
		require.False(t, seen[id], "id %s repeated", id)
		seen[id] = true
	}
	collisions := 0
	for range 1000 {
		if seen[b.next()] {
			collisions++
		}
	}
	assert.Zero(t, collisions)
	first, second := a.next(), a.next()
	assert.NotEqual(t, first[:12], second[:12], "consecutive ids do not share a prefix (mixed, not a bare counter)")
}
