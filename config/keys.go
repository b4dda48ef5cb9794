package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SessionKeyFile is where generated session keys are kept, in the data
// directory.
const SessionKeyFile = "session.keys"

// SessionKeys returns the session hash and block keys. Keys set in the
// configuration win; otherwise they are read from the data directory, or
// generated there on first start (generated reports that, so the caller
// can warn: restarts keep sessions, but several instances must share keys).
func (c *Config) SessionKeys() (hashKey, blockKey []byte, generated bool, err error) {
	if c.Session.HashKey != "" && c.Session.BlockKey != "" {
		h, _ := hex.DecodeString(c.Session.HashKey)
		b, _ := hex.DecodeString(c.Session.BlockKey)
		return h, b, false, nil
	}
	path := filepath.Join(c.DataDir(), SessionKeyFile)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		h, b, perr := parseKeyFile(string(data))
		if perr != nil {
			return nil, nil, false, fmt.Errorf("config: %s: %w (delete it to generate new keys; sessions will end)", path, perr)
		}
		hashKey, blockKey = h, b
	case errors.Is(err, os.ErrNotExist):
		hashKey, blockKey = make([]byte, 32), make([]byte, 32)
		if _, err := rand.Read(hashKey); err != nil {
			return nil, nil, false, err
		}
		if _, err := rand.Read(blockKey); err != nil {
			return nil, nil, false, err
		}
		if err := os.MkdirAll(c.DataDir(), 0o700); err != nil {
			return nil, nil, false, fmt.Errorf("config: create data directory: %w", err)
		}
		content := "hash_key=" + hex.EncodeToString(hashKey) + "\nblock_key=" + hex.EncodeToString(blockKey) + "\n"
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return nil, nil, false, fmt.Errorf("config: write %s: %w", path, err)
		}
		generated = true
	default:
		return nil, nil, false, fmt.Errorf("config: read %s: %w", path, err)
	}
	if c.Session.HashKey != "" {
		hashKey, _ = hex.DecodeString(c.Session.HashKey)
	}
	if c.Session.BlockKey != "" {
		blockKey, _ = hex.DecodeString(c.Session.BlockKey)
	}
	return hashKey, blockKey, generated, nil
}

func parseKeyFile(s string) (hashKey, blockKey []byte, err error) {
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		b, derr := hex.DecodeString(v)
		if derr != nil {
			return nil, nil, fmt.Errorf("%s is not hex", k)
		}
		switch k {
		case "hash_key":
			hashKey = b
		case "block_key":
			blockKey = b
		}
	}
	if len(hashKey) < 32 || (len(blockKey) != 16 && len(blockKey) != 24 && len(blockKey) != 32) {
		return nil, nil, errors.New("keys missing or of the wrong length")
	}
	return hashKey, blockKey, nil
}
