package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShippedConfigIsTheEmbeddedDemo(t *testing.T) {
	data, err := os.ReadFile("../config.yaml")
	require.NoError(t, err)
	cfg, err := Parse(data, nil)
	require.NoError(t, err)
	assert.Equal(t, Embedded, cfg.Platform.BaseURL)
	assert.Contains(t, string(data), "\n# docs/configuration.md lists every key.\n", "the header points where the keys are")
	assert.Equal(t, "sqlite", cfg.Store.Driver)
	assert.Equal(t, "data/ssobridge.db", cfg.Store.DSN)
	assert.Equal(t, "data", cfg.DataDir())
	// every key is in the shipped file, so it documents them all
	for _, k := range Keys() {
		last := k[strings.LastIndexByte(k, '.')+1:]
		assert.Contains(t, string(data), "  "+last+":", "config.yaml documents %s", k)
	}
}

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
			show := func(v reflect.Value) string { return fmt.Sprint(v.Interface()) }
			if target.v.Type() == ltiPlatformsType {
				value = `[{"name": "from-env"}]`
				show = func(v reflect.Value) string {
					if l := v.Interface().(LTIPlatforms); len(l) == 1 && l[0].Name == "from-env" && l[0].CreateAccounts {
						return value
					}
					return fmt.Sprint(v.Interface())
				}
			}
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
					assert.Equal(t, value, show(l.v), "%s sets %s", EnvName(key), key)
				} else {
					assert.Equal(t, was, l.v.Interface(), "%s changed %s too", EnvName(key), l.key)
				}
			}
		})
	}
}

func TestSecretFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(path, []byte("file-secret\n"), 0o600))
	cfg, err := Parse([]byte("platform:\n  base_url: https://v.example\n  api_key: k\n  api_secret_file: "+path+"\n"), nil)
	require.NoError(t, err)
	assert.Equal(t, "file-secret", cfg.Platform.APISecret)
}

func TestInvalidConfigNamesKeyAndFix(t *testing.T) {
	real := "platform:\n  base_url: https://v.example\n  api_key: k\n  api_secret: s\n"
	pg := "store:\n  driver: postgres\n"
	keys := "session:\n  hash_key: " + strings.Repeat("ab", 32) + "\n  block_key: " + strings.Repeat("cd", 32) + "\n"
	tests := []struct {
		name    string
		yaml    string
		env     []string
		key     string
		mention string
	}{
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
		{"addr", "server:\n  addr: localhost\n", nil, "server.addr", "host:port"},
		{"public url", "server:\n  public_url: sso.example\n", nil, "server.public_url", "absolute"},
		{"metrics addr", "server:\n  metrics_addr: metrics\n", nil, "server.metrics_addr", "not host:port"},
		{"metrics addr is addr", "server:\n  addr: 127.0.0.1:8080\n  metrics_addr: 127.0.0.1:8080\n", nil, "server.metrics_addr", "is server.addr"},
		{"pprof without a metrics address", "server:\n  pprof: true\n", nil, "server.pprof", "needs server.metrics_addr"},
		{"hash key short", "session:\n  hash_key: abcd\n", nil, "session.hash_key", "openssl rand -hex 32"},
		{"hash key not hex", "session:\n  hash_key: " + strings.Repeat("zz", 32) + "\n", nil, "session.hash_key", "hex"},
		{"block key size", "session:\n  block_key: " + strings.Repeat("ab", 20) + "\n", nil, "session.block_key", "16, 24 or 32"},
		{"previous hash key alone", keys[:len(keys)-1] + "\n  previous_hash_key: " + strings.Repeat("12", 32) + "\n", nil, "session.previous_hash_key", "set both"},
		{"previous block key not hex", keys + "  previous_hash_key: " + strings.Repeat("12", 32) + "\n  previous_block_key: xyz\n", nil, "session.previous_block_key", "before the rotation"},
		{"previous keys without current", "session:\n  previous_hash_key: " + strings.Repeat("12", 32) + "\n  previous_block_key: " + strings.Repeat("34", 32) + "\n", nil, "session.previous_hash_key", "current ones"},
		{"max age", "session:\n  max_age: 10s\n", nil, "session.max_age", "1m to 720h"},
		{"idle beyond max", "session:\n  max_age: 1h\n  idle_timeout: 2h\n", nil, "session.idle_timeout", "max_age"},
		{"driver", "store:\n  driver: mysql\n", nil, "store.driver", "sqlite"},
		{"dsn", "store:\n  dsn: \"\"\n", nil, "store.dsn", "file path"},
		{"cache ttl", "", []string{"SSOBRIDGE_STORE_CACHE_TTL=10m"}, "store.cache_ttl", "0 (off) up to 1m"},
		{"cache ttl negative", "store:\n  cache_ttl: -1s\n", nil, "store.cache_ttl", "out of range"},
		{"oidc issuer http", "oidc:\n  issuer: http://idp.example\n  client_id: c\n  client_secret: s\n", nil, "oidc.issuer", "https URL"},
		{"oidc no client id", "oidc:\n  issuer: https://idp.example\n  client_secret: s\n", nil, "oidc.client_id", "client id"},
		{"oidc no secret", "oidc:\n  issuer: https://idp.example\n  client_id: c\n", nil, "oidc.client_secret", "SSOBRIDGE_OIDC_CLIENT_SECRET"},
		{"oidc scopes without openid", "oidc:\n  issuer: https://idp.example\n  client_id: c\n  client_secret: s\n  scopes: email\n", nil, "oidc.scopes", "openid"},
		{"saml metadata twice", "saml:\n  idp_metadata_url: https://idp.example/md\n  idp_metadata_file: /etc/hosts\n", nil, "saml.idp_metadata_url", "not both"},
		{"saml metadata over http", "saml:\n  idp_metadata_url: http://idp.example/md\n", nil, "saml.idp_metadata_url", "https URL"},
		{"saml metadata file missing", "saml:\n  idp_metadata_file: /nonexistent/idp.xml\n", nil, "saml.idp_metadata_file", "cannot read"},
		{"saml email domain with an @", "saml:\n  idp_metadata_url: https://idp.example/md\n  email_domains: partner.example kim@school.test\n", nil, "saml.email_domains", `"kim@school.test" is not a domain`},
		{"oidc email domain with an @", "oidc:\n  email_domains: a@partner.example\n", nil, "oidc.email_domains", `"a@partner.example" is not a domain`},
		{"portal email domain that is a URL", "portal:\n  email_domains: https://portal.example\n", nil, "portal.email_domains", "is not a domain"},
		{"scim email domain with a space inside a list item", "scim:\n  email_domains: [\"partner .example\"]\n", nil, "scim.email_domains", "single words"},
		{"saml refresh too often", "saml:\n  idp_metadata_url: https://idp.example/md\n  metadata_refresh: 5s\n", nil, "saml.metadata_refresh", "1m to 24h"},
		{"saml certificate without its key", "saml:\n  idp_metadata_url: https://idp.example/md\n  sp_cert_file: /etc/hosts\n", nil, "saml.sp_cert_file", "both"},
		{"saml no display name", "saml:\n  idp_metadata_url: https://idp.example/md\n  display_name: \" \"\n", nil, "saml.display_name", "sign-in button"},
		{"oidc scope list with a space", "oidc:\n  issuer: https://idp.example\n  client_id: c\n  client_secret: s\n  scopes: [openid, \"a b\"]\n", nil, "oidc.scopes", "single words"},
		{"portal secret short", "portal:\n  jwt_secret: short\n  jwt_issuer: https://p.example\n  jwt_audience: a\n", nil, "portal.jwt_secret", "at least 32"},
		{"portal both keys", "portal:\n  jwt_secret: " + strings.Repeat("s", 32) + "\n  jwt_public_key_file: /etc/hosts\n  jwt_issuer: i\n  jwt_audience: a\n", nil, "portal.jwt_secret", "not both"},
		{"portal key without issuer", "portal:\n  jwt_secret: " + strings.Repeat("s", 32) + "\n  jwt_audience: a\n", nil, "portal.jwt_issuer", "required"},
		{"portal key file missing", "portal:\n  jwt_public_key_file: /nonexistent.pem\n  jwt_issuer: i\n  jwt_audience: a\n", nil, "portal.jwt_public_key_file", "cannot read"},
		{"postgres dsn", pg + "  dsn: data/x.db\n" + keys, nil, "store.dsn", "postgres://user:pass@host:5432/db"},
		{"postgres dsn password not echoed", pg + "  dsn: \"mysql://u:hunter2@h/db\"\n" + keys, nil, "store.dsn", "SSOBRIDGE_STORE_DSN"},
		{"postgres cache ttl", pg + "  dsn: postgres://h/db\n  cache_ttl: 2s\n" + keys, nil, "store.cache_ttl", "within 1 s"},
		{"postgres without keys", pg + "  dsn: postgres://h/db\n", nil, "session.hash_key", "session.hash_key and session.block_key are required"},
		{"postgres with one key", pg + "  dsn: postgres://h/db\nsession:\n  hash_key: " + strings.Repeat("ab", 32) + "\n", nil, "session.hash_key", "openssl rand -hex 32"},
		{"base url", "platform:\n  base_url: video.example.com\n", nil, "platform.base_url", "without /api/5"},
		{"no secret", "platform:\n  base_url: https://v.example\n  api_key: k\n", nil, "platform.api_secret", "SSOBRIDGE_PLATFORM_API_SECRET"},
		{"no key for hmac", "platform:\n  base_url: https://v.example\n  api_secret: s\n", nil, "platform.api_key", "HMAC"},
		{"auth", real + "  auth: oauth\n", nil, "platform.auth", "hmac or simple"},
		{"scheme", real + "  scheme_hmac: \"S V C\"\n", nil, "platform.scheme_hmac", "one word"},
		{"timeout", real + "  timeout: 5m\n", nil, "platform.timeout", "100ms to 2m"},
		{"secret file missing", real + "  api_secret_file: /nonexistent/secret\n", nil, "platform.api_secret_file", "cannot read"},
		{"argon2 memory", "password:\n  argon2_memory_kib: 1\n", nil, "password.argon2_memory_kib", "64 to"},
		{"log level", "log:\n  level: loud\n", nil, "log.level", "debug, info"},
		{"window beyond ban", "regulation:\n  find_time: 1h\n  ban_time: 10m\n", nil, "regulation.ban_time", "must not outlast"},
		{"env bool", "", []string{"SSOBRIDGE_SERVER_TRUST_PROXY_HEADERS=sometimes"}, "server.trust_proxy_headers", "true or false"},
		{"retention", "audit:\n  retention: 5m\n", nil, "audit.retention", "at least 1h"},
		{"scim without a token", "scim:\n  enabled: true\n", nil, "scim.token", "SSOBRIDGE_SCIM_TOKEN"},
		{"scim short token", "scim:\n  enabled: true\n", []string{"SSOBRIDGE_SCIM_TOKEN=short"}, "scim.token", "at least 32"},
		{"scim token file and token", "scim:\n  enabled: true\n  token_file: /etc/hosts\n", []string{"SSOBRIDGE_SCIM_TOKEN=" + strings.Repeat("t", 40)}, "scim.token_file", "not both"},
		{"scim token file missing", "scim:\n  enabled: true\n  token_file: /nonexistent/scim.tokens\n", nil, "scim.token_file", "cannot read"},
	}
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
// with ErrInvalid; it never panics.
func FuzzParse(f *testing.F) {
	data, _ := os.ReadFile("../config.yaml")
	f.Add(string(data), "SSOBRIDGE_PLATFORM_TIMEOUT=3s")
	f.Add("server:\n  addr: :1\n", "SSOBRIDGE_X=1")
	f.Add("platform: {base_url: 'https://a.b', api_key: k, api_secret: s}", "")
	f.Add("log:\n  level: [1,2]\n", "SSOBRIDGE_SESSION_MAX_AGE=-1h")
	f.Fuzz(func(t *testing.T, yamlText, env string) {
		cfg, err := Parse([]byte(yamlText), strings.Split(env, "\n"))
		if err != nil {
			assert.ErrorIs(t, err, ErrInvalid)
			return
		}
		assert.Empty(t, cfg.validate(), "a parsed config is valid")
	})
}

// TestDocsListEveryKey keeps docs/configuration.md's table of keys
// complete.
func TestDocsListEveryKey(t *testing.T) {
	readme, err := os.ReadFile("../docs/configuration.md")
	require.NoError(t, err)
	for _, k := range Keys() {
		assert.Contains(t, string(readme), "| `"+k+"` |", "docs/configuration.md documents %s", k)
	}
	// Each key of an lti.platforms entry has a row of its own.
	pt := reflect.TypeOf(LTIPlatform{})
	for i := range pt.NumField() {
		k := "lti.platforms[]." + pt.Field(i).Tag.Get("yaml")
		assert.Contains(t, string(readme), "| `"+k+"` |", "docs/configuration.md documents %s", k)
	}
}

// A postgres store with its keys, a URL and a short cache is accepted.
func TestPostgresStoreAccepted(t *testing.T) {
	cfg, err := Parse([]byte("store:\n  driver: postgres\n  dsn: postgres://u:p@db.internal:5432/sso?sslmode=require\n  cache_ttl: 500ms\n"),
		[]string{"SSOBRIDGE_SESSION_HASH_KEY=" + strings.Repeat("ab", 32), "SSOBRIDGE_SESSION_BLOCK_KEY=" + strings.Repeat("cd", 32)})
	require.NoError(t, err)
	assert.Equal(t, "postgres", cfg.Store.Driver)
	assert.Equal(t, "data", cfg.DataDir())
}

// oidc.scopes is a list or a space-separated string; http is allowed on
// loopback only.
func TestOIDCAccepted(t *testing.T) {
	cfg, err := Parse([]byte("oidc:\n  issuer: http://127.0.0.1:5556/dex\n  client_id: c\n  scopes:\n    - openid\n    - email\n    - groups\n"),
		[]string{"SSOBRIDGE_OIDC_CLIENT_SECRET=s"})
	require.NoError(t, err)
	assert.Equal(t, []string{"openid", "email", "groups"}, cfg.OIDC.Scopes.List())
	assert.True(t, cfg.OIDC.Enabled())
	cfg, err = Parse([]byte("oidc:\n  issuer: https://idp.example\n  client_id: c\n  client_secret: s\n"), []string{"SSOBRIDGE_OIDC_SCOPES=openid profile"})
	require.NoError(t, err)
	assert.Equal(t, []string{"openid", "profile"}, cfg.OIDC.Scopes.List())
}

// portal.jwt_audience defaults to server.public_url, which defaults to
// http://<server.addr>: a portal key and issuer alone start.
func TestPortalAudienceDefaults(t *testing.T) {
	key := "portal:\n  jwt_secret: " + strings.Repeat("s", 32) + "\n  jwt_issuer: https://portal.example\n"
	for _, tt := range []struct{ yaml, want string }{
		{key, "http://127.0.0.1:8080"},
		{key + "server:\n  addr: 0.0.0.0:9000\n", "http://localhost:9000"},
		{key + "server:\n  public_url: https://sso.partner.example/\n", "https://sso.partner.example"},
		{key + "server:\n  public_url: https://sso.partner.example\n" + "  addr: 127.0.0.1:1\n", "https://sso.partner.example"},
	} {
		cfg, err := Parse([]byte(tt.yaml), nil)
		require.NoError(t, err, tt.yaml)
		assert.Equal(t, tt.want, cfg.PortalAudience(), tt.yaml)
	}
	cfg, err := Parse([]byte(key+"  jwt_audience: https://aud.example\n"), nil)
	require.NoError(t, err)
	assert.Equal(t, "https://aud.example", cfg.PortalAudience())
}

// PublicURL is server.public_url, else http:// and the listen address.
func TestPublicURL(t *testing.T) {
	tests := []struct {
		public, listen, want string
	}{
		{"", "127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"", "0.0.0.0:8080", "http://localhost:8080"},
		{"", "[::]:8080", "http://localhost:8080"},
		{"https://sso.partner.example/", "0.0.0.0:8080", "https://sso.partner.example"},
	}
	for _, tt := range tests {
		cfg := Defaults()
		cfg.Server.PublicURL = tt.public
		assert.Equal(t, tt.want, cfg.PublicURL(tt.listen))
	}
}

func TestSCIMTokens(t *testing.T) {
	a, b, c := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64)
	for _, tc := range []struct {
		name, file string
		want       []string
		problem    string
	}{
		{"one", a + "\n", []string{a}, ""},
		{"two while rotating, a comment and blank lines", "# rotated 2026-11\n" + a + "\n\n  " + b + "  \n", []string{a, b}, ""},
		{"three", a + "\n" + b + "\n" + c + "\n", nil, "3 tokens; give one, or two while one is being rotated"},
		{"empty file", "\n# nothing\n", nil, "no token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "scim.tokens")
			require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o600))
			cfg, err := Parse([]byte("scim:\n  enabled: true\n  token_file: "+path+"\n"), nil)
			if tc.problem != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "config: scim.token_file: "+tc.problem)
				assert.NotContains(t, err.Error(), a, "a token is never quoted")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, cfg.SCIM.Tokens())
		})
	}
	cfg, err := Parse(nil, nil)
	require.NoError(t, err)
	assert.False(t, cfg.SCIM.Enabled, "off by default")
	assert.True(t, cfg.SCIM.ProvisionPlatformUsers)
}
