package accounts

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ssobridge/ssobridge/internal/fakeclock"
)

func TestRegulatorBansPerAccount(t *testing.T) {
	clk := fakeclock.New(time.Time{})
	r := NewRegulator(RegulationConfig{MaxRetries: 3, MaxRetriesPerIP: 100, FindTime: 2 * time.Minute, BanTime: 5 * time.Minute}, clk.Now)

	assert.False(t, r.Fail("Ada@example.com", "10.0.0.1"))
	clk.Advance(30 * time.Second)
	assert.False(t, r.Fail("ada@example.com", "10.0.0.2"))
	assert.True(t, r.BannedUntil("ada@example.com", "10.0.0.3").IsZero())
	assert.True(t, r.Fail("ADA@example.com", "10.0.0.3"), "third failure in the window bans")
	until := r.BannedUntil("ada@example.com", "192.0.2.9")
	assert.Equal(t, clk.Now().Add(5*time.Minute), until, "the account is banned from any IP")
	assert.True(t, r.BannedUntil("bob@example.com", "10.0.0.1").IsZero(), "others are not")

	clk.Advance(5*time.Minute + time.Second)
	assert.True(t, r.BannedUntil("ada@example.com", "10.0.0.1").IsZero(), "the ban ends")
}

func TestRegulatorWindowForgetsOldFailures(t *testing.T) {
	clk := fakeclock.New(time.Time{})
	r := NewRegulator(RegulationConfig{MaxRetries: 3, FindTime: time.Minute, BanTime: time.Hour}, clk.Now)
	r.Fail("a@example.com", "ip")
	r.Fail("a@example.com", "ip")
	clk.Advance(61 * time.Second)
	assert.False(t, r.Fail("a@example.com", "ip"), "the first two fell out of the window")
	r.Succeed("a@example.com")
	assert.False(t, r.Fail("a@example.com", "ip"))
	assert.False(t, r.Fail("a@example.com", "ip"), "a success cleared the count")
}

func TestRegulatorBansPerIP(t *testing.T) {
	clk := fakeclock.New(time.Time{})
	r := NewRegulator(RegulationConfig{MaxRetries: 100, MaxRetriesPerIP: 5, FindTime: time.Minute, BanTime: time.Minute}, clk.Now)
	for i := range 4 {
		assert.False(t, r.Fail(fmt.Sprintf("u%d@example.com", i), "198.51.100.7"))
	}
	assert.True(t, r.Fail("u4@example.com", "198.51.100.7"), "spraying many emails from one IP bans the IP")
	assert.False(t, r.BannedUntil("new@example.com", "198.51.100.7").IsZero())
	assert.True(t, r.BannedUntil("new@example.com", "198.51.100.8").IsZero())
}

func TestRegulatorOffAndBounded(t *testing.T) {
	r := NewRegulator(RegulationConfig{}, nil)
	for range 50 {
		assert.False(t, r.Fail("a@example.com", "ip"))
	}
	clk := fakeclock.New(time.Time{})
	r = NewRegulator(RegulationConfig{MaxRetries: 10, FindTime: time.Second, BanTime: time.Second}, clk.Now)
	for i := range maxRegEntries + 10 {
		if i == maxRegEntries/2 {
			clk.Advance(time.Hour)
		}
		r.Fail(fmt.Sprintf("u%d@example.com", i), "")
	}
	assert.LessOrEqual(t, len(r.entries), maxRegEntries, "old entries are pruned")
}
