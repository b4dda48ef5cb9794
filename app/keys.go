package app

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/internal/randid"
)

// SessionKeyFile is where generated session keys are kept, in the data
// directory.
const SessionKeyFile = "session.keys"

// keys are the session cookie's keys and where they came from.
type keys struct {
	hash, block                 []byte
	previousHash, previousBlock []byte // the keys before a rotation (config only); nil: none
	generated                   bool   // written now: restarts keep sessions, but several instances must share keys
	file                        string // the key file in the data directory
}

// sessionKeys returns the session hash and block keys. Keys set in the
// configuration win; otherwise they are read from the data directory, or
// generated there on first start.
func sessionKeys(c config.Config) (keys, error) {
	k := keys{file: filepath.Join(c.DataDir(), SessionKeyFile)}
	if c.Session.HashKey != "" && c.Session.BlockKey != "" {
		// validated by config
		k.hash, _ = hex.DecodeString(c.Session.HashKey)
		k.block, _ = hex.DecodeString(c.Session.BlockKey)
		if c.Session.PreviousHashKey != "" {
			k.previousHash, _ = hex.DecodeString(c.Session.PreviousHashKey)
			k.previousBlock, _ = hex.DecodeString(c.Session.PreviousBlockKey)
		}
		return k, nil
	}
	data, err := os.ReadFile(k.file)
	switch {
	case err == nil:
		if k.hash, k.block, err = parseKeyFile(string(data)); err != nil {
			return keys{}, fmt.Errorf("%s: %w (delete it to generate new keys; sessions will end)", k.file, err)
		}
	case errors.Is(err, os.ErrNotExist):
		k.hash, k.block = randid.Bytes(32), randid.Bytes(32)
		if err := os.MkdirAll(c.DataDir(), 0o700); err != nil {
			return keys{}, fmt.Errorf("create data directory: %w", err)
		}
		content := "hash_key=" + hex.EncodeToString(k.hash) + "\nblock_key=" + hex.EncodeToString(k.block) + "\n"
		if err := os.WriteFile(k.file, []byte(content), 0o600); err != nil {
			return keys{}, fmt.Errorf("write %s: %w", k.file, err)
		}
		k.generated = true
	default:
		return keys{}, fmt.Errorf("read %s: %w", k.file, err)
	}
	if c.Session.HashKey != "" {
		k.hash, _ = hex.DecodeString(c.Session.HashKey)
	}
	if c.Session.BlockKey != "" {
		k.block, _ = hex.DecodeString(c.Session.BlockKey)
	}
	return k, nil
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
