package lti_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/demo/samplelms"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

// The embedded demo without an LMS of its own gets the sample LMS: served
// on a free port, registered as lti.platforms[0] with its course's deep
// link, its key kept in the data folder (launches signed before a
// restart still verify); a configuration of a real platform, or of an
// LMS of its own, gets none.
func TestDemoSampleLMS(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Parse([]byte("store:\n  dsn: "+filepath.Join(dir, "bridge.db")+"\n"), nil, lti.Section())
	require.NoError(t, err)
	m := lti.Module{}
	served, demo, err := m.Demo(cfg, "http://127.0.0.1:8080")
	require.NoError(t, err)
	require.NotNil(t, demo)
	t.Cleanup(func() { _ = demo.Close() })
	assert.Equal(t, "sample LMS", demo.Name)
	lms := demo.Double.(*samplelms.Running)
	platforms := config.Settings(served, lti.Section()).Platforms
	require.Len(t, platforms, 1)
	assert.Equal(t, lti.SampleLMSName, platforms[0].Name)
	assert.Equal(t, lms.AuthURL(), platforms[0].AuthURL)
	assert.NotEmpty(t, platforms[0].DeepLinkItems)
	assert.Equal(t, lms.URL()+samplelms.CoursePath, demo.Listening("http://127.0.0.1:9090"))
	resp, err := http.Get(platforms[0].JWKSURL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "its key set is served")
	key, err := os.ReadFile(filepath.Join(dir, "lms-demo.key"))
	require.NoError(t, err)

	_, again, err := m.Demo(cfg, "http://127.0.0.1:8080")
	require.NoError(t, err)
	t.Cleanup(func() { _ = again.Close() })
	kept, err := os.ReadFile(filepath.Join(dir, "lms-demo.key"))
	require.NoError(t, err)
	assert.Equal(t, key, kept, "the key is kept")

	real, err := config.Parse([]byte("platform:\n  base_url: https://video.example\n  api_key: k\n  api_secret: s\n"), nil, lti.Section())
	require.NoError(t, err)
	_, none, err := m.Demo(real, "https://sso.example")
	require.NoError(t, err)
	assert.Nil(t, none, "a real platform: no sample")
}
