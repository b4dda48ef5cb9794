package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEnvironmentOverrides(t *testing.T) {
	cfg, err := Parse([]byte("platform:\n  base_url: https://video.example.com\n  api_key: k\n"), []string{
		"SSOBRIDGE_PLATFORM_API_SECRET=from-env",
		"SSOBRIDGE_PLATFORM_TIMEOUT=3s",
		"SSOBRIDGE_SERVER_ADDR=:9000",
		"SSOBRIDGE_PASSWORD_HASH_CONCURRENCY=4",
		"SSOBRIDGE_PASSWORD_ARGON2_PARALLELISM=2",
		"PATH=/usr/bin", // not ours: ignored
	})
	require.NoError(t, err)
	assert.Equal(t, "from-env", cfg.Platform.APISecret)
	assert.Equal(t, 3*time.Second, cfg.Platform.Timeout)
	assert.Equal(t, ":9000", cfg.Server.Addr)
	assert.Equal(t, 4, cfg.Password.HashConcurrency)
	assert.Equal(t, uint8(2), cfg.Password.Argon2Parallelism)
}

// TestEveryKeyIsSetByItsEnvironmentVariable: for every key, the variable
// EnvName names sets that key's value and nothing else (every
// key as SSOBRIDGE_<PATH> with _ for .).
func TestEveryKeyIsSetByItsEnvironmentVariable(t *testing.T) {
	assert.Equal(t, "SSOBRIDGE_PLATFORM_API_SECRET", EnvName("platform.api_secret"))
	assert.Equal(t, "SSOBRIDGE_SESSION_MAX_AGE", EnvName("session.max_age"))
	keys := Keys()
	require.NotEmpty(t, keys)
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			cfg := Defaults()
			var target leaf
			for _, l := range leaves(&cfg) {
				if l.key == key {
					target = l
				}
			}
			require.True(t, target.v.IsValid(), "Keys lists %s but no field has it", key)
			value := map[reflect.Kind]string{reflect.Bool: "true", reflect.String: "from-env", reflect.Int: "7",
				reflect.Int64: "7s", reflect.Uint8: "7", reflect.Uint32: "7", reflect.Float64: "7.5"}[target.v.Kind()]
			require.NotEmpty(t, value, "no test value for %s (%s)", key, target.v.Kind())
			before := Defaults()
			require.NoError(t, applyEnv(&cfg, []string{EnvName(key) + "=" + value}))
			for _, l := range leaves(&cfg) {
				var was any
				for _, b := range leaves(&before) {
					if b.key == l.key {
						was = b.v.Interface()
					}
				}
				if l.key == key {
					assert.Equal(t, value, fmt.Sprint(l.v.Interface()), "%s sets %s", EnvName(key), key)
				} else {
					assert.Equal(t, was, l.v.Interface(), "%s changed %s too", EnvName(key), l.key)
				}
			}
		})
	}
}

// refusal is a configuration the bridge refuses: the key its answer names
// and words of the fix it gives.
type refusal struct {
	name    string
	yaml    string
	env     []string
	key     string
	mention string
}

// Settings the refusals build on: a platform that needs nothing more, the
// PostgreSQL store, and session keys.
const (
	realPlatform = "platform:\n  base_url: https://v.example\n  api_key: k\n  api_secret: s\n"
	pgStore      = "store:\n  driver: postgres\n"
)

var sessionKeys = "session:\n  hash_key: " + strings.Repeat("ab", 32) + "\n  block_key: " + strings.Repeat("cd", 32) + "\n"

// assertRefused parses each case and checks that it is refused, naming its
// key and the fix, and never quoting a DSN's password or a YAML tag.
func assertRefused(t *testing.T, tests []refusal) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), tt.env)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "hunter2", "a DSN's password is never quoted")
			assert.True(t, errors.Is(err, ErrInvalid))
			assert.Contains(t, err.Error(), "config: "+tt.key+": ")
			assert.Contains(t, err.Error(), tt.mention)
			assert.NotContains(t, err.Error(), "!!", "no YAML tags in a message")
		})
	}
}

// The file's and the environment's own problems: unknown keys and
// variables (with the nearest name), values of the wrong type, YAML that
// is not settings. Each section's refusals are in its own test file.
func TestInvalidConfigNamesKeyAndFix(t *testing.T) {
	assertRefused(t, []refusal{
		{"unknown key", "server:\n  addres: x\n", nil, "server.addres", "line 2: no such setting; did you mean server.addr?"},
		{"unknown section", "plattform:\n  base_url: x\n", nil, "plattform", "line 1: no such setting; did you mean platform?"},
		{"unknown key, nothing near", "server:\n  colour: blue\n", nil, "server.colour", "no such setting; the keys are listed in docs/configuration.md"},
		{"bad yaml", "server: [", nil, "(file)", "line 1: the file is not valid YAML"},
		{"file duration", "platform:\n  timeout: ten\n", nil, "platform.timeout", `line 2: "ten" is not a duration such as 30s or 12h`},
		{"file number", "password:\n  hash_concurrency: many\n", nil, "password.hash_concurrency", `"many" is not a whole number`},
		{"file bool", "server:\n  trust_proxy_headers: sometimes\n", nil, "server.trust_proxy_headers", "true or false"},
		{"list for a value", "log:\n  level: [1, 2]\n", nil, "log.level", "line 2: expected a single value, found a list"},
		{"value for a section", "server: localhost\n", nil, "server", `line 1: expected the keys of this section (server.addr, ...), found "localhost"`},
		{"not a mapping", "- a\n- b\n", nil, "(file)", "line 1: expected sections such as server: and platform:, found a list"},
		{"key twice", "log:\n  level: info\n  level: debug\n", nil, "log.level", "line 3: set twice (first on line 2)"},
		{"unknown env var", "", []string{"SSOBRIDGE_PLATFORM_SECRET=x"}, "SSOBRIDGE_PLATFORM_SECRET", "no such setting; did you mean SSOBRIDGE_PLATFORM_API_SECRET?"},
		{"env var one letter off", "", []string{"SSOBRIDGE_SERVER_ADR=x"}, "SSOBRIDGE_SERVER_ADR", "did you mean SSOBRIDGE_SERVER_ADDR?"},
		{"env var, nothing near", "", []string{"SSOBRIDGE_NOPE=1"}, "SSOBRIDGE_NOPE", "no such setting (docs/configuration.md lists them)"},
		{"unknown key, the long form misspelt", "server:\n  adress: x\n", nil, "server.adress", "did you mean server.addr?"},
		{"env duration", "", []string{"SSOBRIDGE_PLATFORM_TIMEOUT=ten"}, "platform.timeout", "duration"},
		{"env number", "", []string{"SSOBRIDGE_PASSWORD_HASH_CONCURRENCY=many"}, "password.hash_concurrency", "whole number"},
		{"env bool", "", []string{"SSOBRIDGE_SERVER_TRUST_PROXY_HEADERS=sometimes"}, "server.trust_proxy_headers", "true or false"},
	})
}

// Every problem in one answer: a misspelt key, a value of the wrong type,
// an unknown variable and values that do not fit together, each key once.
func TestEveryProblemInOneRound(t *testing.T) {
	_, err := Parse([]byte("server:\n  adress: x\n  addr: nowhere\nsession:\n  max_age: soon\nplatform:\n  base_url: https://video.example\n"),
		[]string{"SSOBRIDGE_PLATFORM_SECRET=x", "SSOBRIDGE_SESSION_MAX_AGE=also-bad"})
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{"server.adress", "did you mean server.addr?", "server.addr: \"nowhere\" is not host:port", "session.max_age",
		"SSOBRIDGE_PLATFORM_SECRET", "platform.api_key"} {
		assert.Contains(t, msg, want)
	}
	assert.Equal(t, 1, strings.Count(msg, "config: server.addr:"), "each key once:\n%s", msg)

	_, err = Parse([]byte("server: [\n"), []string{"SSOBRIDGE_PLATFORM_SECRET=x"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "SSOBRIDGE_PLATFORM_SECRET", "a file that is not YAML: its problem alone")
}

// FuzzParse: any input either parses into a valid configuration or fails
// with ErrInvalid; it never panics. A module's section and a list of
// sections are read too (the test's badge: and route:).
func FuzzParse(f *testing.F) {
	data, _ := os.ReadFile("../config.yaml")
	f.Add(string(data), "SSOBRIDGE_PLATFORM_TIMEOUT=3s")
	f.Add("server:\n  addr: :1\n", "SSOBRIDGE_X=1")
	f.Add("platform: {base_url: 'https://a.b', api_key: k, api_secret: s}", "")
	f.Add("log:\n  level: [1,2]\n", "SSOBRIDGE_SESSION_MAX_AGE=-1h")
	f.Add("badge:\n  url: https://b.example\nroute:\n  stops:\n    - name: A\n  legs: [{name: B}]\n", `SSOBRIDGE_ROUTE_STOPS=[{"name": "C"}]`)
	f.Fuzz(func(t *testing.T, yamlText, env string) {
		cfg, err := Parse([]byte(yamlText), strings.Split(env, "\n"), badgeSection(), Section[route]{Key: "route"})
		if err != nil {
			assert.ErrorIs(t, err, ErrInvalid)
			return
		}
		assert.Empty(t, cfg.validate(), "a parsed config is valid")
	})
}
