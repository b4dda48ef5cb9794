// Package static holds the CSS and images, embedded in the binary.
package static

import "embed"

// Files are served under /static/.
//
//go:embed *.css *.svg
var Files embed.FS
