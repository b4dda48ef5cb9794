package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlatformRefusals(t *testing.T) {
	assertRefused(t, []refusal{
		{"base url", "platform:\n  base_url: video.example.com\n", nil, "platform.base_url", "without /api/5"},
		{"no secret", "platform:\n  base_url: https://v.example\n  api_key: k\n", nil, "platform.api_secret", "SSOBRIDGE_PLATFORM_API_SECRET"},
		{"no key for hmac", "platform:\n  base_url: https://v.example\n  api_secret: s\n", nil, "platform.api_key", "HMAC"},
		{"auth", realPlatform + "  auth: oauth\n", nil, "platform.auth", "hmac or simple"},
		{"scheme", realPlatform + "  scheme_hmac: \"S V C\"\n", nil, "platform.scheme_hmac", "one word"},
		{"timeout", realPlatform + "  timeout: 5m\n", nil, "platform.timeout", "100ms to 2m"},
		{"secret file missing", realPlatform + "  api_secret_file: /nonexistent/secret\n", nil, "platform.api_secret_file", "cannot read"},
	})
}

func TestSecretFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(path, []byte("file-secret\n"), 0o600))
	cfg, err := Parse([]byte("platform:\n  base_url: https://v.example\n  api_key: k\n  api_secret_file: "+path+"\n"), nil)
	require.NoError(t, err)
	assert.Equal(t, "file-secret", cfg.Platform.APISecret)
}
