package config

import "fmt"

// Log is the logger.
type Log struct {
	Level  string `yaml:"level"`  // debug | info | warn | error
	Format string `yaml:"format"` // text | json
}

// validateLog checks the level and the format.
func (c *Config) validateLog(bad func(key, problem string)) {
	if _, ok := map[string]bool{"debug": true, "info": true, "warn": true, "error": true}[c.Log.Level]; !ok {
		bad("log.level", fmt.Sprintf("%q: use debug, info, warn or error", c.Log.Level))
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		bad("log.format", fmt.Sprintf("%q: use text or json", c.Log.Format))
	}
}
