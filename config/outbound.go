package config

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/ssobridge/ssobridge/internal/outbound"
)

// Outbound is how the bridge reaches the parties it fetches from: an LMS's
// or IdP's configuration, a registration endpoint, key sets, tokens,
// rosters, SAML metadata.
type Outbound struct {
	// AllowLocal is the development switch: plain http on loopback, and
	// loopback or private addresses. "auto" (the default): on for the
	// embedded demo (platform.base_url: embedded), off otherwise.
	AllowLocal string `yaml:"allow_local"`
	// AllowNetworks are private networks (CIDR) an LMS or IdP may be in,
	// over https (an on-premises Moodle at 10.20.0.5, say).
	AllowNetworks Words `yaml:"allow_networks"`
	// Timeout bounds one fetch.
	Timeout time.Duration `yaml:"timeout"`
}

// outboundDefaults are the section's defaults.
func outboundDefaults() Outbound { return Outbound{AllowLocal: "auto", Timeout: 10 * time.Second} }

// AllowsLocal reports whether the development switch is on (outbound.
// allow_local, whose "auto" follows the embedded demo).
func (c Config) AllowsLocal() bool {
	switch c.Outbound.AllowLocal {
	case "true":
		return true
	case "auto":
		return c.Platform.BaseURL == Embedded
	}
	return false
}

// OutboundPolicy is the policy every fetch from an outside party follows.
func (c Config) OutboundPolicy() outbound.Policy {
	p := outbound.Policy{AllowLocal: c.AllowsLocal(), Timeout: c.Outbound.Timeout}
	for _, n := range c.Outbound.AllowNetworks.List() {
		if pre, err := netip.ParsePrefix(n); err == nil {
			p.AllowNetworks = append(p.AllowNetworks, pre.Masked())
		}
	}
	return p
}

// validateOutbound checks the section.
func (c *Config) validateOutbound(bad func(key, problem string)) {
	o := c.Outbound
	switch o.AllowLocal {
	case "auto", "true", "false":
	default:
		bad("outbound.allow_local", fmt.Sprintf("%q: want auto, true or false", o.AllowLocal))
	}
	for _, n := range o.AllowNetworks.List() {
		pre, err := netip.ParsePrefix(n)
		switch {
		case err != nil:
			bad("outbound.allow_networks", fmt.Sprintf("%q is not a network; write it as CIDR, e.g. 10.20.0.0/16", n))
		case !pre.Addr().IsPrivate():
			bad("outbound.allow_networks", fmt.Sprintf("%q is not a private network (10/8, 172.16/12, 192.168/16, fc00::/7): public addresses need no allowing, and loopback or link-local ones are development's (outbound.allow_local)", n))
		}
	}
	if o.Timeout < time.Second || o.Timeout > 2*time.Minute {
		bad("outbound.timeout", fmt.Sprintf("%s: want 1s..2m", o.Timeout))
	}
}

// LocalURLProblem is what a configured party's URL needs said when it is
// plain http on loopback while the development switch is off ("" if it
// needs nothing).
func (c *Config) LocalURLProblem(raw string) string {
	if c.AllowsLocal() || c.OutboundPolicy().CheckURL(raw) == nil {
		return ""
	}
	return "plain http is for a party on this machine in development only: set outbound.allow_local: true there, or give the https URL"
}
