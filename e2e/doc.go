// Package e2e holds the black-box tests of the bridge: sign-in and launch
// flows, the fault matrix, security properties, the admin console, the
// CLI (the built binary), a real browser (headless Chromium) and the
// benchmarks of whole requests. They drive app.New or the ssobridge binary
// through public interfaces only.
package e2e
