package scim_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/scim"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/ssobridge/ssobridge/wayin"
)

var moduleToken = strings.Repeat("t", 40)

func moduleConfig(t *testing.T, yaml string) config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), []string{"SSOBRIDGE_SCIM_TOKEN=" + moduleToken}, scim.Section())
	require.NoError(t, err)
	return cfg
}

// SCIM in the modules' shape: off, no source and no way; on, the IdP's
// directory as its source and a way that serves every method under
// /scim/v2 behind its bearer token, outside the session guards.
func TestModule(t *testing.T) {
	m := scim.Module{}
	off := moduleConfig(t, "")
	assert.Empty(t, m.Sources(off))
	w, err := m.Open(context.Background(), wayin.Host{Config: off})
	require.NoError(t, err)
	assert.Nil(t, w)

	on := moduleConfig(t, "scim:\n  enabled: true\n  admin_group: Bridge admins\n  email_domains: [school.example]\n")
	src := m.Sources(on)
	require.Len(t, src, 1)
	assert.Equal(t, "scim", src[0].ID)
	assert.Equal(t, []string{"school.example"}, src[0].EmailDomains)
	assert.True(t, src[0].AdminAuthority, "an admin group: the directory holds the role")
	assert.True(t, src[0].CreateAccounts)

	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	w, err = m.Open(context.Background(), wayin.Host{Config: on, Store: st, Logger: slog.New(slog.DiscardHandler), Now: time.Now})
	require.NoError(t, err)
	require.NotNil(t, w)
	assert.Equal(t, "scim", w.Name())
	assert.Equal(t, []wayin.Exemption{{Path: scim.Prefix, API: true}}, w.Exempt())
	assert.False(t, w.Essential())
	assert.NoError(t, w.Ready(context.Background()))
	label, _ := w.Button("/")
	assert.Empty(t, label, "no person signs in by it")

	e := echo.New()
	w.Mount(e, nil)
	srv := httptest.NewServer(e)
	defer srv.Close()
	get := func(token string) int {
		req, err := http.NewRequest(http.MethodGet, srv.URL+scim.Prefix+"/Users", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, get(moduleToken))
	assert.Equal(t, http.StatusUnauthorized, get("wrong"+moduleToken))
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		req, err := http.NewRequest(method, srv.URL+scim.Prefix+"/Users/1", strings.NewReader("{}"))
		require.NoError(t, err)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s is routed to the service provider", method)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w.Watch(ctx, nil) // stops its background provisioning (none here) and returns
}

// check says what to enter at the IdP and refuses a base URL the token
// would cross in clear.
func TestModuleCheck(t *testing.T) {
	tests := []struct {
		name, yaml string
		ok         bool
		says       string
	}{
		{"off: nothing to say", "", true, ""},
		{"https", "server:\n  public_url: https://sso.example\nscim:\n  enabled: true\n", true, "verdict:   SCIM OK\n"},
		{"loopback", "server:\n  addr: 127.0.0.1:8080\nscim:\n  enabled: true\n", true, "loopback: only an IdP on this machine"},
		{"plain http beyond loopback", "server:\n  public_url: http://sso.example\nscim:\n  enabled: true\n", false, "SCIM NOT READY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			ok := scim.Module{}.Check(context.Background(), wayin.Host{Config: moduleConfig(t, tt.yaml)}, &out)
			assert.Equal(t, tt.ok, ok)
			if tt.says == "" {
				assert.Empty(t, out.String())
				return
			}
			assert.Contains(t, out.String(), tt.says)
			assert.Contains(t, out.String(), "bearer token: the one in SSOBRIDGE_SCIM_TOKEN (1 token(s))")
			assert.NotContains(t, out.String(), moduleToken, "never the token")
		})
	}
}
