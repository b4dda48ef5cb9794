package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrBackupExists: a backup is never written over a file.
var ErrBackupExists = errors.New("the backup file exists already")

// Backup writes a consistent copy of the database to path while the
// bridge runs (SQLite's VACUUM INTO: one read transaction, so every table
// is as of one moment; writers go on meanwhile). The copy is a database
// file of its own, compacted, with the same schema version: a restore is
// putting it in place of store.dsn while no bridge runs on it. path must
// not exist; its folder must.
func (s *SQLite) Backup(ctx context.Context, path string) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("sqlstore: backup to %s: %w", path, ErrBackupExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sqlstore: backup to %s: %w", path, err)
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return fmt.Errorf("sqlstore: backup to %s: its folder: %w", path, err)
	}
	if _, err := s.db.ExecContext(ctx, "VACUUM INTO ?", path); err != nil {
		_ = os.Remove(path) // a partial copy is no backup
		return fmt.Errorf("sqlstore: backup to %s: %w", path, err)
	}
	// Readable only by its owner, as the database is: it holds the LTI
	// tool's private key and every account.
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("sqlstore: backup to %s: %w", path, err)
	}
	return nil
}
