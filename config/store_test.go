package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStoreRefusals(t *testing.T) {
	assertRefused(t, []refusal{
		{"driver", "store:\n  driver: mysql\n", nil, "store.driver", "sqlite"},
		{"dsn", "store:\n  dsn: \"\"\n", nil, "store.dsn", "file path"},
		{"cache ttl", "", []string{"SSOBRIDGE_STORE_CACHE_TTL=10m"}, "store.cache_ttl", "0 (off) up to 1m"},
		{"cache ttl negative", "store:\n  cache_ttl: -1s\n", nil, "store.cache_ttl", "out of range"},
		{"postgres dsn", pgStore + "  dsn: data/x.db\n" + sessionKeys, nil, "store.dsn", "postgres://user:pass@host:5432/db"},
		{"postgres dsn password not echoed", pgStore + "  dsn: \"mysql://u:hunter2@h/db\"\n" + sessionKeys, nil, "store.dsn", "SSOBRIDGE_STORE_DSN"},
		{"postgres cache ttl", pgStore + "  dsn: postgres://h/db\n  cache_ttl: 2s\n" + sessionKeys, nil, "store.cache_ttl", "within 1 s"},
	})
}

// A postgres store with its keys, a URL and a short cache is accepted.
func TestPostgresStoreAccepted(t *testing.T) {
	cfg, err := Parse([]byte("store:\n  driver: postgres\n  dsn: postgres://u:p@db.internal:5432/sso?sslmode=require\n  cache_ttl: 500ms\n"),
		[]string{"SSOBRIDGE_SESSION_HASH_KEY=" + strings.Repeat("ab", 32), "SSOBRIDGE_SESSION_BLOCK_KEY=" + strings.Repeat("cd", 32)})
	require.NoError(t, err)
	assert.Equal(t, "postgres", cfg.Store.Driver)
	assert.Equal(t, "data", cfg.DataDir())
}
