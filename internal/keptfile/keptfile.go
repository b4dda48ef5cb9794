// Package keptfile keeps a file the embedded demo makes once (a key) in
// the data directory, so every start of the demo uses the same one.
package keptfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Read is the file name in dir (0600): as kept when valid takes it, else
// made anew by make and kept.
func Read(dir, name string, valid func([]byte) bool, make func() ([]byte, error)) ([]byte, error) {
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	if err == nil && valid(data) {
		return data, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if data, err = make(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return data, nil
}
