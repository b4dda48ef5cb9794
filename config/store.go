package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// Store is the account store.
type Store struct {
	Driver string `yaml:"driver"` // sqlite | postgres
	DSN    string `yaml:"dsn"`    // sqlite: a file path; postgres: a URL postgres://user:pass@host:5432/db?sslmode=require
	// CacheTTL keeps accounts and links read by id in memory this long (0:
	// off). Writes through this process are seen at once; writes by other
	// processes on the same database within CacheTTL.
	CacheTTL time.Duration `yaml:"cache_ttl"`
	// Timeout bounds each call to the database, its connection attempt
	// included: past it the request is answered with the
	// "back in a moment" page instead of waiting for a database that is
	// frozen or unreachable.
	Timeout time.Duration `yaml:"timeout"`
}

// validateStore checks the store: the driver, its DSN and cache, the timeout.
func (c *Config) validateStore(bad func(key, problem string)) {
	if c.Store.Timeout < 100*time.Millisecond || c.Store.Timeout > time.Minute {
		bad("store.timeout", fmt.Sprintf("%s is out of range; use 100ms up to 1m (e.g. 2s)", c.Store.Timeout))
	}
	switch c.Store.Driver {
	case "sqlite":
		if strings.TrimSpace(c.Store.DSN) == "" {
			bad("store.dsn", "empty; for sqlite give a file path such as data/ssobridge.db")
		}
		if c.Store.CacheTTL < 0 || c.Store.CacheTTL > time.Minute {
			bad("store.cache_ttl", fmt.Sprintf("%s is out of range; use 0 (off) up to 1m (e.g. 1s)", c.Store.CacheTTL))
		}
	case "postgres":
		// The DSN holds a password: messages never quote it.
		if u, err := url.Parse(c.Store.DSN); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
			bad("store.dsn", "for postgres give a URL such as postgres://user:pass@host:5432/db?sslmode=require (set "+EnvName("store.dsn")+" to keep the password out of the file)")
		}
		// Every instance must see another's change within 1 s.
		if c.Store.CacheTTL < 0 || c.Store.CacheTTL > time.Second {
			bad("store.cache_ttl", fmt.Sprintf("%s is out of range for postgres; use 0 (off) up to 1s, so a change on one instance holds on every other within 1 s", c.Store.CacheTTL))
		}
		// Keys made by one process would void the sessions made on another.
		if c.Session.HashKey == "" || c.Session.BlockKey == "" {
			bad("session.hash_key", "session.hash_key and session.block_key are required with store.driver postgres, the same on every instance; "+
				"generate them with `openssl rand -hex 32` (run it twice) and set "+EnvName("session.hash_key")+" and "+EnvName("session.block_key"))
		}
	default:
		bad("store.driver", fmt.Sprintf("%q is not supported; use sqlite or postgres", c.Store.Driver))
	}
}

// DataDir is the directory that holds the SQLite store, generated keys and
// the demo login; with postgres (whose keys are configured) it is "data".
func (c *Config) DataDir() string {
	if c.Store.Driver == "postgres" {
		return "data"
	}
	return filepath.Dir(c.Store.DSN)
}
