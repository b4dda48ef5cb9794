package samlsso_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/internal/samlidptest"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/samlsso"
)

// hostFor is what the bridge gives the module for yaml.
func hostFor(t *testing.T, yaml string, logs *bytes.Buffer) wayin.Host {
	t.Helper()
	cfg, err := config.Parse([]byte("outbound:\n  allow_local: \"true\"\n"+yaml), nil, samlsso.Section())
	require.NoError(t, err)
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return wayin.Host{Config: cfg, Store: st, Logger: slog.New(slog.NewTextHandler(logs, nil)), Now: time.Now, HTTPClient: &http.Client{Timeout: 5 * time.Second}}
}

// The module opens the way in with the IdP's metadata read, says in
// check what it read and what to enter at the IdP, and is off (no way, no
// source, nothing said) without metadata.
func TestModule(t *testing.T) {
	idp := samlidptest.Start(t)
	var logs bytes.Buffer
	h := hostFor(t, "saml:\n  idp_metadata_url: "+idp.MetadataURL()+"\n  display_name: Springfield\n  email_domains: [school.example]\n  admin_group: staff\n", &logs)
	m := samlsso.Module{}

	w, err := m.Open(context.Background(), h)
	require.NoError(t, err)
	require.NotNil(t, w)
	assert.Equal(t, "saml", w.Name())
	name, href := w.Button("/editor")
	assert.Equal(t, "Springfield", name)
	assert.Equal(t, samlsso.StartPath+"?next=%2Feditor", href)
	assert.NoError(t, w.Ready(context.Background()), "the metadata was read at start")
	assert.Empty(t, logs.String())
	src := m.Sources(h.Config)
	require.Len(t, src, 1)
	assert.Equal(t, []string{"school.example"}, src[0].EmailDomains)
	assert.True(t, src[0].AdminAuthority)

	var out bytes.Buffer
	assert.True(t, m.Check(context.Background(), h, &out))
	assert.Contains(t, out.String(), "saml:      metadata from "+idp.MetadataURL())
	assert.Contains(t, out.String(), "ACS URL http://127.0.0.1:8080/saml/acs (HTTP-POST)")
	assert.Contains(t, out.String(), "1 signing certificate(s)")
	assert.Contains(t, out.String(), "verdict:   SAML OK")

	idp.SetDown(true)
	out.Reset()
	assert.False(t, m.Check(context.Background(), h, &out), "metadata unreadable: not ready")
	assert.Contains(t, out.String(), "verdict:   SAML UNAVAILABLE")
	logs.Reset()
	w, err = m.Open(context.Background(), h)
	require.NoError(t, err, "unreadable at start: a warning, not an error")
	assert.Error(t, w.Ready(context.Background()))
	assert.Contains(t, logs.String(), "metadata unreadable at start")

	off := hostFor(t, "", &logs)
	w, err = m.Open(context.Background(), off)
	require.NoError(t, err)
	assert.Nil(t, w)
	assert.Empty(t, m.Sources(off.Config))
	out.Reset()
	assert.True(t, m.Check(context.Background(), off, &out))
	assert.Empty(t, out.String())
	hide, _ := m.PasswordForm(off.Config)
	assert.False(t, hide, "off: the form stays")
	hide, fallback := m.PasswordForm(hostFor(t, "saml:\n  idp_metadata_url: "+idp.MetadataURL()+"\n  local_login: false\n", &logs).Config)
	assert.True(t, hide)
	assert.True(t, fallback)
}

// A key pair that cannot be read is an error at open, naming both keys.
func TestModuleRefusesAnUnreadableKeyPair(t *testing.T) {
	idp := samlidptest.Start(t)
	var logs bytes.Buffer
	h := hostFor(t, "saml:\n  idp_metadata_url: "+idp.MetadataURL()+"\n  sp_cert_file: /etc/hostname\n  sp_key_file: /etc/hostname\n", &logs)
	_, err := samlsso.Module{}.Open(context.Background(), h)
	assert.ErrorContains(t, err, "saml.sp_cert_file, saml.sp_key_file")
}
