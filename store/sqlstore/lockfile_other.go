//go:build !unix

package sqlstore

import "context"

// lockFile is a no-op where flock is missing: there, processes opening a
// new database at the same moment may race its first migration.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
