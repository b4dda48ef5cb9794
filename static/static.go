// Package static holds the CSS, the images and the waiting page's one
// script, embedded in the binary.
package static

import "embed"

// Files are served under /static/.
//
//go:embed *.css *.svg *.js
var Files embed.FS
