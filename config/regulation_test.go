package config

import "testing"

func TestRegulationRefusals(t *testing.T) {
	assertRefused(t, []refusal{
		{"window beyond ban", "regulation:\n  find_time: 1h\n  ban_time: 10m\n", nil, "regulation.ban_time", "must not outlast"},
	})
}
