package wayintest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/seal"
	"github.com/ssobridge/ssobridge/store"
)

// The stand-in seals as the bridge does: a value opens only under its
// purpose and name, and not once altered.
func TestSealerBindsPurposeAndName(t *testing.T) {
	k := NewKit()
	v, err := k.Sealer("flow").SealJSON("cookie", map[string]string{"state": "s"})
	require.NoError(t, err)
	var got map[string]string
	require.NoError(t, k.Sealer("flow").OpenJSON("cookie", v, &got))
	assert.Equal(t, "s", got["state"])
	assert.ErrorIs(t, k.Sealer("flow").OpenJSON("other", v, &got), seal.ErrNotSealed, "another name")
	assert.ErrorIs(t, k.Sealer("hold").OpenJSON("cookie", v, &got), seal.ErrNotSealed, "another purpose")
	altered := []byte(v)
	altered[len(altered)/2] ^= 1
	assert.Error(t, k.Sealer("flow").OpenJSON("cookie", string(altered), &got))
}

func TestUseOnceHoldsUntilItsTime(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	k := NewKit()
	k.Clock = func() time.Time { return now }
	ctx := context.Background()
	require.NoError(t, k.UseOnce(ctx, "oidc-state", "x", now.Add(time.Minute)))
	assert.ErrorIs(t, k.UseOnce(ctx, "oidc-state", "x", now.Add(time.Minute)), store.ErrUsed)
	assert.NoError(t, k.UseOnce(ctx, "lti-nonce", "x", now.Add(time.Minute)), "kinds apart")
	now = now.Add(2 * time.Minute)
	assert.NoError(t, k.UseOnce(ctx, "oidc-state", "x", now.Add(time.Minute)), "past its time")
}
