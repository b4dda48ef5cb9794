package config

import "testing"

func TestAuditRefusals(t *testing.T) {
	assertRefused(t, []refusal{
		{"retention", "audit:\n  retention: 5m\n", nil, "audit.retention", "at least 1h"},
	})
}
