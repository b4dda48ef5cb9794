package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A SCIM token ban's address reads back as its client IP; other
// addresses are not one.
func TestBanSCIMClient(t *testing.T) {
	for _, ip := range []string{"192.0.2.1", "2001:db8::7", "::1"} {
		got, ok := Ban{Kind: BanEmail, Value: SCIMTokenAddress(ip)}.SCIMClient()
		assert.True(t, ok, ip)
		assert.Equal(t, ip, got)
	}
	for _, addr := range []string{"ada@example.com", "scim-token+@scim.invalid", "scim-token+192.0.2.1@example.com", "x-scim-token+192.0.2.1@scim.invalid"} {
		_, ok := Ban{Kind: BanEmail, Value: addr}.SCIMClient()
		assert.False(t, ok, addr)
		_, ok = Ban{Kind: BanIP, Value: addr}.SCIMClient()
		assert.False(t, ok, "an IP ban is no SCIM client's")
	}
}
