package portal_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/portal"
)

// moduleHost is what the bridge gives the module for yaml, its data
// directory the test's own.
func moduleHost(t *testing.T, yaml string, logs *bytes.Buffer) wayin.Host {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Parse([]byte("store:\n  dsn: "+filepath.Join(dir, "db")+"\n"+yaml), nil, portal.Section())
	require.NoError(t, err)
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(dir, "db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return wayin.Host{Config: cfg, Store: st, Logger: slog.New(slog.NewTextHandler(logs, nil)), Now: time.Now}
}

// With no portal key, the embedded demo's sample portal stands in: a key
// of its own kept in the data directory, a source trusted for
// portal.example, the sample portal served and linked. A configured key
// replaces it (said once in the log); with a real platform and no key
// the handoff is off.
func TestModule(t *testing.T) {
	m := portal.Module{}
	var logs bytes.Buffer
	demo := moduleHost(t, "", &logs)
	w, err := m.Open(context.Background(), demo)
	require.NoError(t, err)
	require.NotNil(t, w)
	assert.NotNil(t, w.(*portal.Way).Demo, "the sample portal")
	src := m.Sources(demo.Config)
	require.Len(t, src, 1)
	assert.Equal(t, "portal:ssobridge-demo-portal", src[0].ID)
	assert.Equal(t, []string{"portal.example"}, src[0].EmailDomains)
	assert.Equal(t, wayin.Home{URL: portal.DemoPath, Label: "Back to your portal"}, m.Home(demo.Config))
	_, sample, err := m.Demo(demo.Config, "http://127.0.0.1:8080")
	require.NoError(t, err)
	require.NotNil(t, sample, "the demo's sample portal, served by the way")
	assert.Equal(t, "http://127.0.0.1:8080"+portal.DemoPath, sample.Listening("http://127.0.0.1:8080"))
	k1, isDemo, ok, err := portal.SigningKey(demo.Config)
	require.NoError(t, err)
	assert.True(t, isDemo && ok)
	k2, _, _, err := portal.SigningKey(demo.Config)
	require.NoError(t, err)
	assert.Equal(t, k1.Secret, k2.Secret, "the demo's key is kept")
	assert.GreaterOrEqual(t, len(k1.Secret), portal.MinSecret)

	key := "portal:\n  jwt_secret: " + strings.Repeat("s", 32) + "\n  jwt_issuer: https://portal.partner.example\n  url: https://portal.partner.example\n  admin_sessions: true\n"
	own := moduleHost(t, key, &logs)
	w, err = m.Open(context.Background(), own)
	require.NoError(t, err)
	assert.Nil(t, w.(*portal.Way).Demo, "a key of the partner's: no sample portal")
	assert.Contains(t, logs.String(), "sample partner portal off", "said once, naming the key")
	assert.Contains(t, logs.String(), "key=portal.jwt_secret")
	assert.Equal(t, "portal:https://portal.partner.example", m.Sources(own.Config)[0].ID, "named by its tokens' issuer")
	assert.Equal(t, wayin.Home{URL: "https://portal.partner.example", Label: "Back to your portal", AdminSessions: true}, m.Home(own.Config))
	_, sample, err = m.Demo(own.Config, "https://sso.partner.example")
	require.NoError(t, err)
	assert.Nil(t, sample, "a partner's own portal: no sample")

	off := moduleHost(t, "platform:\n  base_url: https://video.example\n  api_key: k\n  api_secret: s\n", &logs)
	w, err = m.Open(context.Background(), off)
	require.NoError(t, err)
	assert.Nil(t, w, "no key and a real platform: the handoff is off")
	assert.Empty(t, m.Sources(off.Config))
	assert.Equal(t, wayin.Home{Label: "Back to your portal"}, m.Home(off.Config))
	var out bytes.Buffer
	assert.True(t, m.Check(context.Background(), off, &out))
	assert.Empty(t, out.String())

	_, err = m.Open(context.Background(), moduleHost(t, "portal:\n  jwt_public_key_file: /etc/hostname\n  jwt_issuer: i\n", &logs))
	assert.ErrorContains(t, err, "config: portal.jwt_public_key_file", "a key file that is no key")
}
