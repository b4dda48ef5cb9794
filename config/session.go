package config

import (
	"fmt"
	"strings"
	"time"
)

// Session is the browser session.
type Session struct {
	HashKey  string `yaml:"hash_key"`  // hex, >= 32 bytes; empty: generated and kept in the data directory
	BlockKey string `yaml:"block_key"` // hex, 16/24/32 bytes; empty: generated likewise
	// PreviousHashKey and PreviousBlockKey (both or neither) are the keys
	// before a rotation: cookies sealed with them still open.
	PreviousHashKey  string        `yaml:"previous_hash_key"`
	PreviousBlockKey string        `yaml:"previous_block_key"`
	MaxAge           time.Duration `yaml:"max_age"`      // absolute session lifetime
	IdleTimeout      time.Duration `yaml:"idle_timeout"` // sign out after this long without a request
}

// validateSession checks the session: the keys (current and previous) and the lifetimes.
func (c *Config) validateSession(bad func(key, problem string)) {
	for _, k := range []struct {
		hashName, hash, blockName, block, hint string
	}{
		{"session.hash_key", c.Session.HashKey, "session.block_key", c.Session.BlockKey, "leave it empty to have one generated, or use `openssl rand -hex 32`"},
		{"session.previous_hash_key", c.Session.PreviousHashKey, "session.previous_block_key", c.Session.PreviousBlockKey, "the value the key had before the rotation"},
	} {
		if err := checkHexKey(k.hash, 32, 64); err != "" {
			bad(k.hashName, err+"; "+k.hint)
		}
		if err := checkHexKey(k.block, 16, 32); err != "" {
			bad(k.blockName, err+"; "+k.hint)
		} else if n := len(k.block) / 2; n != 0 && n != 16 && n != 24 && n != 32 {
			bad(k.blockName, fmt.Sprintf("is %d bytes; want 16, 24 or 32 (an AES key)", n))
		}
	}
	if (c.Session.PreviousHashKey == "") != (c.Session.PreviousBlockKey == "") {
		bad("session.previous_hash_key", "session.previous_hash_key and session.previous_block_key go together: set both (the keys before the rotation) or neither")
	}
	if c.Session.PreviousHashKey != "" && (c.Session.HashKey == "" || c.Session.BlockKey == "") {
		bad("session.previous_hash_key", "previous keys need the current ones set too: session.hash_key and session.block_key")
	}
	if c.Session.MaxAge < time.Minute || c.Session.MaxAge > 30*24*time.Hour {
		bad("session.max_age", fmt.Sprintf("%s is out of range; use 1m to 720h (e.g. 12h)", c.Session.MaxAge))
	}
	if c.Session.IdleTimeout < time.Minute || c.Session.IdleTimeout > c.Session.MaxAge {
		bad("session.idle_timeout", fmt.Sprintf("%s is out of range; use 1m up to session.max_age (e.g. 2h)", c.Session.IdleTimeout))
	}
}

func checkHexKey(s string, minBytes, maxBytes int) string {
	if s == "" {
		return ""
	}
	if len(s)%2 != 0 || strings.Trim(strings.ToLower(s), "0123456789abcdef") != "" {
		return "must be hex"
	}
	if n := len(s) / 2; n < minBytes || n > maxBytes {
		return fmt.Sprintf("is %d bytes; want %d to %d", n, minBytes, maxBytes)
	}
	return ""
}
