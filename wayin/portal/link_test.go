package portal_test

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/portal"
)

// portal-link prints a handoff URL signed with portal.jwt_secret that the
// handoff's verifier accepts; bad input, a key it cannot sign with, or
// an address the portal is not trusted for print no link and exit 2.
func TestLinkCommand(t *testing.T) {
	secret := strings.Repeat("s", 32)
	own := writeConfig(t, "server:\n  public_url: https://sso.example\nplatform:\n  base_url: https://video.example\n  api_key: k\n  api_secret: s\n"+
		"portal:\n  jwt_secret: "+secret+"\n  jwt_issuer: https://portal.example\n  email_domains: [school.example]\n")
	cmds := portal.Module{}.Commands()
	require.Len(t, cmds, 1)
	assert.Equal(t, "portal-link", cmds[0].Name)
	run := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := cli.Env{Stdout: &out, Stderr: &errOut, Modules: []wayin.Module{portal.Module{}}}.RunModuleCommand(t.Context(), cmds[0], args)
		return out.String(), errOut.String(), err
	}

	out, stderr, err := run("--config", own, "--email", "kim@school.example", "--return-to", "/editor/x")
	require.NoError(t, err)
	assert.Contains(t, stderr, "server.public_url")
	u, err := url.Parse(strings.TrimSpace(out))
	require.NoError(t, err)
	assert.Equal(t, "https://sso.example"+portal.HandoffPath, u.Scheme+"://"+u.Host+u.Path)
	v, err := portal.NewVerifier(portal.Config{Secret: []byte(secret), Issuer: "https://portal.example", Audience: "https://sso.example"}, nil, time.Now)
	require.NoError(t, err)
	claims, err := v.Check(u.Query().Get("jwt"))
	require.NoError(t, err, "the handoff accepts it")
	assert.Equal(t, "kim@school.example", claims.Email)
	assert.Equal(t, "/editor/x", claims.ReturnTo)

	for _, args := range [][]string{
		{"--email", "not-an-address"},
		{"--email", "kim@school.example", "--return-to", "//evil.example"},
		{"--email", "kim@elsewhere.example"},
	} {
		out, _, err := run(append([]string{"--config", own}, args...)...)
		var usage cli.UsageError
		assert.ErrorAs(t, err, &usage, "%v", args)
		assert.Empty(t, out, "no link")
	}
	key, err := filepath.Abs("testdata/rs256.pub")
	require.NoError(t, err)
	pub := writeConfig(t, "portal:\n  jwt_public_key_file: "+key+"\n  jwt_issuer: https://portal.example\n")
	_, _, err = run("--config", pub, "--email", "kim@school.example")
	assert.ErrorContains(t, err, "private key")
}

func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(p, []byte(yaml), 0o600))
	return p
}
