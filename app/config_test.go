package app

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

// The shipped config.yaml is the embedded demo, read with every module's
// section, and documents every key.
func TestShippedConfigIsTheEmbeddedDemo(t *testing.T) {
	data, err := os.ReadFile("../config.yaml")
	require.NoError(t, err)
	cfg, err := ParseConfig(data, nil)
	require.NoError(t, err)
	assert.Equal(t, config.Embedded, cfg.Platform.BaseURL)
	assert.Contains(t, string(data), "\n# docs/configuration.md lists every key.\n", "the header points where the keys are")
	assert.Equal(t, "sqlite", cfg.Store.Driver)
	assert.Equal(t, "data/ssobridge.db", cfg.Store.DSN)
	assert.Equal(t, "data", cfg.DataDir())
	// every key is in the shipped file, so it documents them all
	for _, k := range config.Keys(wayin.Sections(Modules())...) {
		last := k[strings.LastIndexByte(k, '.')+1:]
		assert.Contains(t, string(data), "  "+last+":", "config.yaml documents %s", k)
	}
}

// TestDocsListEveryKey keeps docs/configuration.md's table of keys
// complete.
func TestDocsListEveryKey(t *testing.T) {
	readme, err := os.ReadFile("../docs/configuration.md")
	require.NoError(t, err)
	for _, k := range config.Keys(wayin.Sections(Modules())...) {
		assert.Contains(t, string(readme), "| `"+k+"` |", "docs/configuration.md documents %s", k)
	}
	// Each key of an lti.platforms entry has a row of its own.
	pt := reflect.TypeOf(lti.ConfiguredPlatform{})
	for i := range pt.NumField() {
		k := "lti.platforms[]." + pt.Field(i).Tag.Get("yaml")
		assert.Contains(t, string(readme), "| `"+k+"` |", "docs/configuration.md documents %s", k)
	}
}
