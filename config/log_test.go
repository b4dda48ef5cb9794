package config

import "testing"

func TestLogRefusals(t *testing.T) {
	assertRefused(t, []refusal{
		{"log level", "log:\n  level: loud\n", nil, "log.level", "debug, info"},
	})
}
