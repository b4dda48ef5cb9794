package scim_test

import (
	"database/sql"

	_ "modernc.org/sqlite"
)

// sqlOpen opens another connection to the store's SQLite file, whose
// transactions take the write lock at once.
func sqlOpen(path string) (*sql.DB, error) {
	return sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
}
