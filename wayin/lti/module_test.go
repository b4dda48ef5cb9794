package lti_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

// moduleHost is what the bridge gives the module for yaml, with a SQLite
// store of the test's own.
func moduleHost(t *testing.T, yaml string, logs *bytes.Buffer) wayin.Host {
	t.Helper()
	cfg, err := config.Parse([]byte("outbound:\n  allow_local: \"true\"\n"+yaml), nil, lti.Section())
	require.NoError(t, err)
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return wayin.Host{Config: cfg, Store: st, Logger: slog.New(slog.NewTextHandler(logs, nil)), Now: time.Now, HTTPClient: &http.Client{Timeout: 5 * time.Second},
		Provision: func(context.Context, string, []store.Account) error { return nil }}
}

func platformYAML(p *ltiplatformtest.Platform, extra string) string {
	return fmt.Sprintf("lti:\n  platforms:\n    - name: Springfield Moodle\n      issuer: %s\n      client_id: %s\n      deployment_ids: [%s]\n      auth_url: %s\n      jwks_url: %s\n"+
		"      email_domains: [school.example]\n      admin_roles: [Administrator]\n%s", p.Issuer, p.ClientID, p.DeploymentID, p.AuthURL(), p.JWKSURL(), extra)
}

// The module opens the tool with its key generated once and kept, names
// each configured LMS's source by its (issuer, client id), warns when
// LMSs cannot reach the bridge, and is off without platforms or
// registration; the key is the store's on every open.
func TestModuleOpens(t *testing.T) {
	plat := ltiplatformtest.Start(t, "")
	var logs bytes.Buffer
	h := moduleHost(t, platformYAML(plat, "")+"server:\n  addr: 0.0.0.0:8080\n", &logs)
	m := lti.Module{}
	w, err := m.Open(context.Background(), h)
	require.NoError(t, err)
	require.NotNil(t, w)
	assert.Equal(t, "lti", w.Name())
	path, label := w.(wayin.ConsolePage).ConsolePage()
	assert.Equal(t, []string{lti.ConsolePath, "LTI"}, []string{path, label})
	assert.Contains(t, logs.String(), "LTI 1.3 tool")
	assert.Contains(t, logs.String(), "key=\"generated once, kept in the store\"")
	assert.Contains(t, logs.String(), "LTI launches will fail", "plain http beyond loopback")
	kept, err := h.Store.KeptValue(context.Background(), lti.KeyName)
	require.NoError(t, err)
	_, err = m.Open(context.Background(), h)
	require.NoError(t, err)
	again, err := h.Store.KeptValue(context.Background(), lti.KeyName)
	require.NoError(t, err)
	assert.Equal(t, kept, again, "the same key on every open")

	src := m.Sources(h.Config)
	require.Len(t, src, 1)
	assert.Equal(t, lti.SourceID(plat.Issuer, plat.ClientID), src[0].ID)
	assert.Equal(t, "lti.platforms[0]", src[0].Key)
	assert.True(t, src[0].AdminAuthority)
	assert.Equal(t, []string{"school.example"}, src[0].EmailDomains)

	off := moduleHost(t, "", &logs)
	w, err = m.Open(context.Background(), off)
	require.NoError(t, err)
	assert.Nil(t, w, "no platform, no registration: off")
	assert.Empty(t, m.Sources(off.Config))
	var out bytes.Buffer
	assert.True(t, m.Check(context.Background(), off, &out))
	assert.Empty(t, out.String())
	assert.Empty(t, m.StoredSources(context.Background(), off))
}

// Check reads each key set as the bridge would, the registered LMSs' too,
// says what to enter in the LMS and its verdict; a key set that cannot
// be read, a tool key that is no key, or plain http beyond loopback is
// not ready.
func TestModuleChecks(t *testing.T) {
	plat := ltiplatformtest.Start(t, "")
	var logs bytes.Buffer
	h := moduleHost(t, platformYAML(plat, "")+"  dynamic_registration: true\n", &logs)
	m := lti.Module{}
	registered := ltiplatformtest.Start(t, "")
	require.NoError(t, (&lti.Records{Store: h.Store}).AddPlatform(context.Background(), lti.Registered{Name: "Registered LMS", Issuer: registered.Issuer,
		ClientID: "r1", DeploymentID: "d", AuthURL: registered.AuthURL(), JWKSURL: registered.JWKSURL(), EmailDomains: "school.example", RegisteredAt: time.Now()}))

	var out bytes.Buffer
	assert.True(t, m.Check(context.Background(), h, &out), out.String())
	assert.Contains(t, out.String(), "lti:       in the LMS, enter: login URL http://127.0.0.1:8080/lti/login")
	assert.Contains(t, out.String(), "Springfield Moodle (issuer "+plat.Issuer)
	assert.Contains(t, out.String(), "Registered LMS (issuer "+registered.Issuer+", client r1, 1 deployment(s)): key set read")
	assert.Contains(t, out.String(), "verdict:   LTI OK (loopback")
	stored := m.StoredSources(context.Background(), h)
	require.Len(t, stored, 1)
	assert.Equal(t, "LTI: Registered LMS (registered from the console)", stored[0].Name)

	registered.Server.Close()
	out.Reset()
	assert.False(t, m.Check(context.Background(), h, &out))
	assert.Contains(t, out.String(), "Registered LMS (issuer "+registered.Issuer+", client r1): key set UNREADABLE")
	assert.Contains(t, out.String(), "verdict:   LTI NOT READY")

	out.Reset()
	h.Store, h.StoreProblem = nil, "connection refused"
	assert.True(t, m.Check(context.Background(), h, &out))
	assert.Contains(t, out.String(), "the LMSs registered from the console are not checked: the store cannot be read: connection refused")

	keyFile := filepath.Join(t.TempDir(), "tool.pem")
	require.NoError(t, os.WriteFile(keyFile, []byte("not a key"), 0o600))
	out.Reset()
	assert.False(t, m.Check(context.Background(), moduleHost(t, platformYAML(plat, "  key_file: "+keyFile+"\n"), &logs), &out))
	assert.Contains(t, out.String(), "tool key: WRONG")

	out.Reset()
	assert.False(t, m.Check(context.Background(), moduleHost(t, platformYAML(plat, "")+"server:\n  addr: 0.0.0.0:8080\n", &logs), &out))
	assert.Contains(t, out.String(), "verdict:   LTI NOT READY\nthe bridge is served over plain http")
}
