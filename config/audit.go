package config

import (
	"fmt"
	"time"
)

// Audit is the audit log.
type Audit struct {
	Retention time.Duration `yaml:"retention"` // events older than this are deleted; 0 keeps them
}

// validateAudit checks the retention.
func (c *Config) validateAudit(bad func(key, problem string)) {
	if c.Audit.Retention != 0 && c.Audit.Retention < time.Hour {
		bad("audit.retention", fmt.Sprintf("%s is too short; use 0 (keep) or at least 1h (e.g. 2160h for 90 days)", c.Audit.Retention))
	}
}
