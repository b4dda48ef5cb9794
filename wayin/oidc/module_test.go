package oidc

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/wayin"
)

// moduleHost is what the bridge gives the module for yaml.
func moduleHost(t *testing.T, yaml string, logs *bytes.Buffer) wayin.Host {
	t.Helper()
	cfg, err := config.Parse([]byte("outbound:\n  allow_local: \"true\"\n"+yaml), nil, Section())
	require.NoError(t, err)
	return wayin.Host{Config: cfg, Logger: slog.New(slog.NewTextHandler(logs, nil)), Now: time.Now, HTTPClient: &http.Client{Timeout: 5 * time.Second},
		PollEvery: time.Second}
}

// The module opens the way in with the IdP discovered (an IdP down at
// start is a warning, and /readyz's failure), names its source by the
// issuer, hides the password form as oidc.local_login says, and is off
// (no way, no source) without an issuer.
func TestModule(t *testing.T) {
	idp := newFakeIdP(t)
	var logs bytes.Buffer
	yaml := "oidc:\n  issuer: " + idp.URL + "\n  client_id: c\n  client_secret: s\n  display_name: Springfield\n  email_domains: [school.example]\n"
	h := moduleHost(t, yaml, &logs)
	m := Module{}

	w, err := m.Open(context.Background(), h)
	require.NoError(t, err)
	require.NotNil(t, w)
	assert.Equal(t, "idp", w.Name())
	name, href := w.Button("/")
	assert.Equal(t, "Springfield", name)
	assert.Equal(t, StartPath, href)
	assert.NoError(t, w.Ready(context.Background()))
	assert.Empty(t, logs.String())
	assert.Equal(t, time.Second, w.(*Way).WatchEvery, "the host's poll period")
	src := m.Sources(h.Config)
	require.Len(t, src, 1)
	assert.Equal(t, "oidc:"+idp.URL, src[0].ID, "named by its issuer")
	assert.Equal(t, src[0], w.(*Way).Source)
	assert.False(t, src[0].AdminAuthority, "no admin group: it grants no admin")
	var out bytes.Buffer
	assert.True(t, m.Check(context.Background(), h, &out))
	hide, _ := m.PasswordForm(h.Config)
	assert.False(t, hide)

	idp.down.Store(true)
	w, err = m.Open(context.Background(), h)
	require.NoError(t, err, "down at start: a warning, not an error")
	assert.Error(t, w.Ready(context.Background()))
	assert.Contains(t, logs.String(), "identity provider unreachable at start")

	hide, fallback := m.PasswordForm(moduleHost(t, yaml+"  local_login: false\n  local_login_fallback: false\n", &logs).Config)
	assert.True(t, hide)
	assert.False(t, fallback)

	off := moduleHost(t, "", &logs)
	w, err = m.Open(context.Background(), off)
	require.NoError(t, err)
	assert.Nil(t, w)
	assert.Empty(t, m.Sources(off.Config))
	hide, _ = m.PasswordForm(off.Config)
	assert.False(t, hide, "off: the form stays")
}
