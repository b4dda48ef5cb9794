package wayin_test

import (
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin"
	"github.com/ssobridge/ssobridge/wayin/wayintest"
)

// Enter admits what the way verified and arrives as its landing says; a
// refusal comes back as the admission's and signs nobody in.
func TestEnter(t *testing.T) {
	e := echo.New()
	c := e.NewContext(httptest.NewRequest("GET", "/", nil), httptest.NewRecorder())
	k := wayintest.NewKit()
	a := signin.Arrival{Source: signin.Source{ID: "idp"}, Subject: "s1", Email: "kim@school.example"}
	landing := wayin.Landing{How: "identity provider", Next: "/editor"}
	require.NoError(t, wayin.Enter(c, k, a, landing))
	assert.Equal(t, []signin.Arrival{a}, k.Admitted())
	require.Len(t, k.Arrived(), 1)
	assert.Equal(t, landing, k.Arrived()[0].Landing)
	assert.Equal(t, "kim@school.example", k.Arrived()[0].Account.Email)

	k = wayintest.NewKit()
	k.Decide = func(signin.Arrival) (store.Account, error) { return store.Account{}, signin.ErrNotTrusted }
	assert.ErrorIs(t, wayin.Enter(c, k, a, landing), signin.ErrNotTrusted)
	assert.Len(t, k.Admitted(), 1)
	assert.Empty(t, k.Arrived(), "refused: nobody signed in")
}
