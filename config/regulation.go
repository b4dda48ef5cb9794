package config

import (
	"fmt"
	"time"
)

// Regulation bans after repeated failed sign-ins.
type Regulation struct {
	MaxRetries      int           `yaml:"max_retries"`        // per account within find_time; 0 = off
	MaxRetriesPerIP int           `yaml:"max_retries_per_ip"` // per client IP within find_time; 0 = off
	FindTime        time.Duration `yaml:"find_time"`          // the counting window
	BanTime         time.Duration `yaml:"ban_time"`           // how long a ban lasts (>= find_time)
}

// validateRegulation checks the limits and that the window fits in the ban.
func (c *Config) validateRegulation(bad func(key, problem string)) {
	rg := c.Regulation
	if rg.MaxRetries < 0 || rg.MaxRetriesPerIP < 0 {
		bad("regulation.max_retries", "use 0 (off) or more")
	}
	if rg.FindTime < time.Second || rg.BanTime < time.Second {
		bad("regulation.find_time", fmt.Sprintf("find_time %s and ban_time %s must be at least 1s", rg.FindTime, rg.BanTime))
	} else if rg.FindTime > rg.BanTime {
		bad("regulation.ban_time", fmt.Sprintf("%s is shorter than find_time %s; the window must not outlast the ban", rg.BanTime, rg.FindTime))
	}
}
