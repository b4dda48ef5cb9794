package scim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/config/configtest"
	"github.com/ssobridge/ssobridge/scim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSettingsRefusals(t *testing.T) {
	configtest.AssertRefused(t, []config.Sectioner{scim.Section()}, []configtest.Refusal{
		configtest.Refused("scim email domain with a space inside a list item", "scim:\n  email_domains: [\"partner .example\"]\n", nil, "scim.email_domains", "single words"),
		configtest.Refused("scim without a token", "scim:\n  enabled: true\n", nil, "scim.token", "SSOBRIDGE_SCIM_TOKEN"),
		configtest.Refused("scim short token", "scim:\n  enabled: true\n", []string{"SSOBRIDGE_SCIM_TOKEN=short"}, "scim.token", "at least 32"),
		configtest.Refused("scim token file and token", "scim:\n  enabled: true\n  token_file: /etc/hosts\n", []string{"SSOBRIDGE_SCIM_TOKEN=" + strings.Repeat("t", 40)}, "scim.token_file", "not both"),
		configtest.Refused("scim token file missing", "scim:\n  enabled: true\n  token_file: /nonexistent/scim.tokens\n", nil, "scim.token_file", "cannot read"),
		configtest.Refused("scim admin group too long", "scim:\n  enabled: true\n  admin_group: "+strings.Repeat("g", 257)+"\n", []string{"SSOBRIDGE_SCIM_TOKEN=" + strings.Repeat("t", 40)}, "scim.admin_group", "over 256"),
		configtest.Refused("scim key misspelt", "scim:\n  enabeld: true\n", nil, "scim.enabeld", "did you mean scim.enabled?"),
	})
}

func TestSettingsTokens(t *testing.T) {
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
			cfg, err := config.Parse([]byte("scim:\n  enabled: true\n  token_file: "+path+"\n"), nil, scim.Section())
			if tc.problem != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "config: scim.token_file: "+tc.problem)
				assert.NotContains(t, err.Error(), a, "a token is never quoted")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, config.Settings(cfg, scim.Section()).Tokens())
		})
	}
	cfg, err := config.Parse(nil, nil, scim.Section())
	require.NoError(t, err)
	assert.False(t, config.Settings(cfg, scim.Section()).Enabled, "off by default")
	assert.True(t, config.Settings(cfg, scim.Section()).ProvisionPlatformUsers)
}
