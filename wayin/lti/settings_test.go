package lti_test

import (
	"testing"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/wayin/lti"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ltiYAML = `lti:
  platforms:
    - name: Springfield Canvas
      issuer: https://canvas.instructure.com
      client_id: "10000000000042"
      deployment_ids: ["42:8865aa05b4b79b64a91a86042e43af5ea8ae79eb"]
      auth_url: https://sso.canvaslms.com/api/lti/authorize_redirect
      jwks_url: https://sso.canvaslms.com/api/lti/security/jwks
      admin_roles:
        - http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator
    - name: Springfield Moodle
      issuer: https://moodle.springfield.example
      client_id: abc
      deployment_ids: 1 2
      auth_url: https://moodle.springfield.example/mod/lti/auth.php
      jwks_url: https://moodle.springfield.example/mod/lti/certs.php
      create_accounts: false
      frame_origins: [https://moodle.springfield.example, https://portal.springfield.example]
`

// settings parses yaml and env with lti's section.
func settings(t *testing.T, yaml string, env ...string) lti.Settings {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), env, lti.Section())
	require.NoError(t, err)
	return config.Settings(cfg, lti.Section())
}

func TestSettings(t *testing.T) {
	s := settings(t, ltiYAML)
	require.True(t, s.Enabled())
	require.Len(t, s.Platforms, 2)
	c, m := s.Platforms[0], s.Platforms[1]
	assert.Equal(t, "10000000000042", c.ClientID)
	assert.Equal(t, []string{"42:8865aa05b4b79b64a91a86042e43af5ea8ae79eb"}, c.DeploymentIDs.List())
	assert.Equal(t, []string{"http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator"}, c.AdminRoles.List())
	assert.True(t, c.CreateAccounts, "create_accounts defaults to true")
	assert.False(t, m.CreateAccounts)
	assert.Equal(t, []string{"1", "2"}, m.DeploymentIDs.List())
	assert.Equal(t, []string{"https://moodle.springfield.example", "https://portal.springfield.example"}, m.FrameOrigins.List())

	assert.False(t, settings(t, "").Enabled(), "off while no platform is listed")
	assert.Equal(t, 500, settings(t, "").RosterMax)

	env := settings(t, "", `SSOBRIDGE_LTI_PLATFORMS=[{"name": "Env LMS", "issuer": "https://lms.example", "client_id": "c", "deployment_ids": ["d"], "auth_url": "https://lms.example/auth", "jwks_url": "https://lms.example/jwks"}]`)
	require.Len(t, env.Platforms, 1)
	assert.Equal(t, "Env LMS", env.Platforms[0].Name)
	assert.Equal(t, []string{"d"}, env.Platforms[0].DeploymentIDs.List())
	assert.True(t, env.Platforms[0].CreateAccounts, "create_accounts defaults to true in a variable's list too")
}

func TestSettingsRefusals(t *testing.T) {
	one := func(extra string) string {
		return "lti:\n  platforms:\n    - name: LMS\n      issuer: https://lms.example\n      client_id: c\n      deployment_ids: [d]\n" +
			"      auth_url: https://lms.example/auth\n      jwks_url: https://lms.example/jwks\n" + extra
	}
	for _, tc := range []struct {
		name, yaml string
		env        []string
		key, says  string
	}{
		{"a platform without keys", "lti:\n  platforms:\n    - name: LMS\n", nil, "lti.platforms[0].client_id", "empty"},
		{"no deployment", "lti:\n  platforms:\n    - {name: LMS, issuer: i, client_id: c, auth_url: 'https://l.example/a', jwks_url: 'https://l.example/j'}\n", nil,
			"lti.platforms[0].deployment_ids", "at least one"},
		{"auth_url over http", "lti:\n  platforms:\n    - {name: LMS, issuer: i, client_id: c, deployment_ids: d, auth_url: 'http://l.example/a', jwks_url: 'https://l.example/j'}\n", nil,
			"lti.platforms[0].auth_url", "https"},
		{"an unknown key in a platform", one("      clientid: x\n"), nil, "lti.platforms[0].clientid", "did you mean lti.platforms[0].client_id?"},
		{"a platform that is no section", "lti:\n  platforms:\n    - just-a-name\n", nil, "lti.platforms[0]", "expected the keys of a platform"},
		{"platforms that are no list", "lti:\n  platforms: canvas\n", nil, "lti.platforms", "expected a list of platforms"},
		{"the same registration twice", "lti:\n  platforms:\n" +
			"    - {name: A, issuer: i, client_id: c, deployment_ids: d, auth_url: 'https://l.example/a', jwks_url: 'https://l.example/j'}\n" +
			"    - {name: B, issuer: i, client_id: c, deployment_ids: e, auth_url: 'https://l.example/a', jwks_url: 'https://l.example/j'}\n", nil,
			"lti.platforms[1].client_id", "registered already as lti.platforms[0]"},
		{"a frame origin with a path", one("      frame_origins: [https://lms.example/courses]\n"), nil, "lti.platforms[0].frame_origins", "not an origin"},
		{"a frame origin over http", one("      frame_origins: [http://lms.example]\n"), nil, "lti.platforms[0].frame_origins", "not an origin"},
		{"a wildcard frame origin", one("      frame_origins: [\"https://*.lms.example\"]\n"), nil, "lti.platforms[0].frame_origins", "no wildcard"},
		{"a key file that is not there", one("  key_file: /nonexistent/tool.pem\n"), nil, "lti.key_file", "cannot read"},
		{"a key file without platforms", "lti:\n  key_file: /etc/hostname\n", nil, "lti.key_file", "lists no platform"},
		{"an environment value that is no list", "", []string{"SSOBRIDGE_LTI_PLATFORMS=[{"}, "SSOBRIDGE_LTI_PLATFORMS", "not a list of platforms"},
		{"an email domain with an @", one("      email_domains: [kim@school.example]\n"), nil, "lti.platforms[0].email_domains", "is not a domain"},
		{"an LMS on loopback without the switch", "platform:\n  base_url: https://v.example\n  api_key: k\n  api_secret: s\n" +
			"lti:\n  platforms:\n    - name: M\n      issuer: https://lms.example\n      client_id: c\n      deployment_ids: [d]\n      auth_url: http://127.0.0.1:9000/auth\n      jwks_url: https://lms.example/jwks\n",
			nil, "lti.platforms[0].auth_url", "outbound.allow_local: true"},
		{"a client id with a line break", "lti:\n  platforms:\n    - {name: LMS, issuer: 'https://l.example', client_id: \"c\\nd\", deployment_ids: d, auth_url: 'https://l.example/a', jwks_url: 'https://l.example/j'}\n", nil,
			"lti.platforms[0].client_id", "holds a line break"},
		{"a roster cap out of range", one("  roster_max: 0\n"), nil, "lti.roster_max", "want 1..100000"},
		{"a deep link item off the editor", one("      deep_link_items: [{title: T, path: 'https://evil.example/'}]\n"), nil,
			"lti.platforms[0].deep_link_items[0].path", "not a path of the editor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tc.yaml), tc.env, lti.Section())
			require.Error(t, err)
			var errs config.Errors
			require.ErrorAs(t, err, &errs)
			found := false
			for _, e := range errs {
				if e.Key == tc.key {
					found = true
					assert.Contains(t, e.Problem, tc.says)
				}
			}
			assert.True(t, found, "no problem for %s in %v", tc.key, err)
		})
	}
}
