package config

import (
	"strings"
	"testing"
)

func TestSessionRefusals(t *testing.T) {
	assertRefused(t, []refusal{
		{"hash key short", "session:\n  hash_key: abcd\n", nil, "session.hash_key", "openssl rand -hex 32"},
		{"hash key not hex", "session:\n  hash_key: " + strings.Repeat("zz", 32) + "\n", nil, "session.hash_key", "hex"},
		{"block key size", "session:\n  block_key: " + strings.Repeat("ab", 20) + "\n", nil, "session.block_key", "16, 24 or 32"},
		{"previous hash key alone", sessionKeys[:len(sessionKeys)-1] + "\n  previous_hash_key: " + strings.Repeat("12", 32) + "\n", nil, "session.previous_hash_key", "set both"},
		{"previous block key not hex", sessionKeys + "  previous_hash_key: " + strings.Repeat("12", 32) + "\n  previous_block_key: xyz\n", nil, "session.previous_block_key", "before the rotation"},
		{"previous keys without current", "session:\n  previous_hash_key: " + strings.Repeat("12", 32) + "\n  previous_block_key: " + strings.Repeat("34", 32) + "\n", nil, "session.previous_hash_key", "current ones"},
		{"max age", "session:\n  max_age: 10s\n", nil, "session.max_age", "1m to 720h"},
		{"idle beyond max", "session:\n  max_age: 1h\n  idle_timeout: 2h\n", nil, "session.idle_timeout", "max_age"},
		{"postgres without keys", pgStore + "  dsn: postgres://h/db\n", nil, "session.hash_key", "session.hash_key and session.block_key are required"},
		{"postgres with one key", pgStore + "  dsn: postgres://h/db\nsession:\n  hash_key: " + strings.Repeat("ab", 32) + "\n", nil, "session.hash_key", "openssl rand -hex 32"},
	})
}
