package config

import "testing"

func TestPasswordRefusals(t *testing.T) {
	assertRefused(t, []refusal{
		{"argon2 memory", "password:\n  argon2_memory_kib: 1\n", nil, "password.argon2_memory_kib", "64 to"},
	})
}
