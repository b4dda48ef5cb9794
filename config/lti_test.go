package config

import (
	"testing"

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

func TestLTIPlatforms(t *testing.T) {
	cfg, err := Parse([]byte(ltiYAML), nil)
	require.NoError(t, err)
	require.True(t, cfg.LTI.Enabled())
	require.Len(t, cfg.LTI.Platforms, 2)
	c, m := cfg.LTI.Platforms[0], cfg.LTI.Platforms[1]
	assert.Equal(t, "10000000000042", c.ClientID)
	assert.Equal(t, []string{"42:8865aa05b4b79b64a91a86042e43af5ea8ae79eb"}, c.DeploymentIDs.List())
	assert.Equal(t, []string{"http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator"}, c.AdminRoles.List())
	assert.True(t, c.CreateAccounts, "create_accounts defaults to true")
	assert.False(t, m.CreateAccounts)
	assert.Equal(t, []string{"1", "2"}, m.DeploymentIDs.List())
	assert.Equal(t, []string{"https://moodle.springfield.example", "https://portal.springfield.example"}, m.FrameOrigins.List())

	off, err := Parse(nil, nil)
	require.NoError(t, err)
	assert.False(t, off.LTI.Enabled(), "off while no platform is listed")

	env, err := Parse(nil, []string{`SSOBRIDGE_LTI_PLATFORMS=[{"name": "Env LMS", "issuer": "https://lms.example", "client_id": "c", "deployment_ids": ["d"], "auth_url": "https://lms.example/auth", "jwks_url": "https://lms.example/jwks"}]`})
	require.NoError(t, err)
	require.Len(t, env.LTI.Platforms, 1)
	assert.Equal(t, "Env LMS", env.LTI.Platforms[0].Name)
	assert.Equal(t, []string{"d"}, env.LTI.Platforms[0].DeploymentIDs.List())
}

func TestLTIRefusals(t *testing.T) {
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), tc.env)
			require.Error(t, err)
			var errs Errors
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
