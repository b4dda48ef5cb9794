//go:build race

package e2e

// raceBuild: the binary under test is built with -race too, so it shares
// the test's build cache.
const raceBuild = true
