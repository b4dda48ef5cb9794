// Package configtest checks a module's configuration section as the
// bridge reads it: refused settings name their key and the fix.
package configtest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/config"
)

// Refusal is a configuration the bridge refuses: the key its answer
// names and words of the fix it gives.
type Refusal struct {
	Name    string
	YAML    string
	Env     []string
	Key     string
	Mention string
}

// Refused is a Refusal in the order a table reads it.
func Refused(name, yaml string, env []string, key, mention string) Refusal {
	return Refusal{Name: name, YAML: yaml, Env: env, Key: key, Mention: mention}
}

// AssertRefused parses each case with sections and checks that it is
// refused, naming its key and the fix, with no YAML tag in the message.
func AssertRefused(t *testing.T, sections []config.Sectioner, cases []Refusal) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			_, err := config.Parse([]byte(tt.YAML), tt.Env, sections...)
			require.Error(t, err)
			assert.True(t, errors.Is(err, config.ErrInvalid))
			assert.Contains(t, err.Error(), "config: "+tt.Key+": ")
			assert.Contains(t, err.Error(), tt.Mention)
			assert.NotContains(t, err.Error(), "!!", "no YAML tags in a message")
		})
	}
}
