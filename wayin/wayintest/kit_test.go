package wayintest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/internal/seal"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin"
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

// Enter admits what the way verified and arrives as its landing says, or
// holds it for Resume; a refusal comes back as the admission's and signs
// nobody in.
func TestEnter(t *testing.T) {
	e := echo.New()
	ctx := func() echo.Context { return e.NewContext(httptest.NewRequest("GET", "/", nil), httptest.NewRecorder()) }
	k := NewKit()
	a := signin.Arrival{Source: signin.Source{ID: "idp"}, Subject: "s1", Email: "kim@school.example"}
	landing := wayin.Landing{How: "identity provider", Next: "/editor"}
	held, err := k.Enter(ctx(), a, landing)
	require.NoError(t, err)
	assert.Empty(t, held)
	assert.Equal(t, []signin.Arrival{a}, k.Admitted())
	require.Len(t, k.Arrived(), 1)
	assert.Equal(t, landing, k.Arrived()[0].Landing)
	assert.Equal(t, "kim@school.example", k.Arrived()[0].Account.Email)

	held, err = k.Enter(ctx(), a, wayin.Landing{How: "LTI: Canvas", Launch: true, Hold: true})
	require.NoError(t, err)
	require.NotEmpty(t, held, "held for a new tab")
	assert.Len(t, k.Arrived(), 1, "nobody arrived yet")
	require.NoError(t, k.Resume(ctx(), held))
	require.Len(t, k.Arrived(), 2)
	assert.Equal(t, "LTI: Canvas", k.Arrived()[1].Landing.How)
	assert.ErrorIs(t, k.Resume(ctx(), held+"x"), wayin.ErrHoldGone)

	k = NewKit()
	k.Decide = func(signin.Arrival) (store.Account, error) { return store.Account{}, signin.ErrNotTrusted }
	_, err = k.Enter(ctx(), a, landing)
	assert.ErrorIs(t, err, signin.ErrNotTrusted)
	assert.Len(t, k.Admitted(), 1)
	assert.Empty(t, k.Arrived(), "refused: nobody signed in")
}
