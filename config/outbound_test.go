package config

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOutboundRefusals(t *testing.T) {
	assertRefused(t, []refusal{
		{"allow_local not a switch", "outbound:\n  allow_local: maybe\n", nil, "outbound.allow_local", "want auto, true or false"},
		{"a network that is not CIDR", "outbound:\n  allow_networks: 10.20.0.5\n", nil, "outbound.allow_networks", "write it as CIDR"},
		{"a public network", "outbound:\n  allow_networks: [10.0.0.0/8, 203.0.113.0/24]\n", nil, "outbound.allow_networks", `"203.0.113.0/24" is not a private network`},
		{"loopback is development's", "outbound:\n  allow_networks: 127.0.0.0/8\n", nil, "outbound.allow_networks", "outbound.allow_local"},
		{"timeout too short", "outbound:\n  timeout: 100ms\n", nil, "outbound.timeout", "want 1s..2m"},
	})
}

// The development switch: "auto" follows the embedded demo; the policy
// carries it and the private networks allowed, masked.
func TestOutboundPolicy(t *testing.T) {
	tests := []struct {
		name, yaml string
		local      bool
		networks   []netip.Prefix
	}{
		{"the demo", "", true, nil},
		{"a real platform", realPlatform, false, nil},
		{"switched on", realPlatform + "outbound:\n  allow_local: \"true\"\n", true, nil},
		{"switched off in the demo", "outbound:\n  allow_local: \"false\"\n", false, nil},
		{"an on-premises LMS", realPlatform + "outbound:\n  allow_networks: 10.20.0.5/16 192.168.1.0/24\n", false,
			[]netip.Prefix{netip.MustParsePrefix("10.20.0.0/16"), netip.MustParsePrefix("192.168.1.0/24")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.yaml), nil)
			require.NoError(t, err)
			p := cfg.OutboundPolicy()
			assert.Equal(t, tt.local, p.AllowLocal)
			assert.Equal(t, tt.local, cfg.AllowsLocal())
			assert.Equal(t, tt.networks, p.AllowNetworks)
		})
	}
}
