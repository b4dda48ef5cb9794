package wayin

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFlowCookieAttributes(t *testing.T) {
	tests := []struct {
		name string
		f    FlowCookie
		want http.Cookie
	}{
		{"plain http keeps its path", NewFlowCookie("flow", "/auth/oidc", false),
			http.Cookie{Name: "flow", Path: "/auth/oidc", HttpOnly: true, SameSite: http.SameSiteLaxMode}},
		{"https: __Host- on /", NewFlowCookie("flow", "/auth/oidc", true),
			http.Cookie{Name: "__Host-flow", Path: "/", HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode}},
		{"cross-site on https: None, partitioned", NewFlowCookie("key", "/", true).CrossSite(true),
			http.Cookie{Name: "__Host-key", Path: "/", HttpOnly: true, Secure: true, SameSite: http.SameSiteNoneMode, Partitioned: true}},
		{"cross-site unpartitioned", NewFlowCookie("key", "/", true).CrossSite(false),
			http.Cookie{Name: "__Host-key", Path: "/", HttpOnly: true, Secure: true, SameSite: http.SameSiteNoneMode}},
		{"cross-site over plain http: Lax, as browsers need", NewFlowCookie("key", "/", false).CrossSite(true),
			http.Cookie{Name: "key", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.f.Cookie("v", 90*time.Second)
			tt.want.Value, tt.want.MaxAge = "v", 90
			assert.Equal(t, tt.want, *got)
			assert.Equal(t, -1, tt.f.Cookie("", -1).MaxAge, "deleted")
			assert.Equal(t, tt.want.Name, tt.f.Name())
		})
	}
}

func TestFlowCookieTakeIsOnce(t *testing.T) {
	f := NewFlowCookie("step", "/", false)
	e := echo.New()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.AddCookie(&http.Cookie{Name: "step", Value: "s1"})
	c := e.NewContext(req, rec)
	v, ok := f.Take(c)
	require.True(t, ok)
	assert.Equal(t, "s1", v)
	set := rec.Result().Cookies()
	require.Len(t, set, 1)
	assert.Equal(t, -1, set[0].MaxAge, "taken: the browser drops it")

	rec = httptest.NewRecorder()
	c = e.NewContext(httptest.NewRequest(http.MethodGet, "/", nil), rec)
	_, ok = f.Take(c)
	assert.False(t, ok)
	assert.Empty(t, rec.Result().Cookies(), "nothing to delete")
}
