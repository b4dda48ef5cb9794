package wayin_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// Every refusal a way in or the admission raises is of one kind of the
// set, wrapped or not, and answers that kind's status; an error of no
// kind keeps its own page (Status 0), and nothing of it is shown.
func TestRefused(t *testing.T) {
	expired := wayin.NewRefusal(views.RefusedExpired, "kiosk: the sign-in took too long")
	tests := []struct {
		name   string
		err    error
		kind   views.Refusal
		status int
		retry  int
	}{
		{"a way's own", expired, views.RefusedExpired, http.StatusBadRequest, 0},
		{"a way's own, wrapped", fmt.Errorf("%w: after 11 minutes", expired), views.RefusedExpired, http.StatusBadRequest, 0},
		{"denied", wayin.NewRefusal(views.RefusedDenied, "no"), views.RefusedDenied, http.StatusForbidden, 0},
		{"unavailable: try again", wayin.NewRefusal(views.RefusedUnavailable, "down"), views.RefusedUnavailable, http.StatusServiceUnavailable, 30},
		{"no address", wayin.NewRefusal(views.RefusedNoAddress, "none"), views.RefusedNoAddress, http.StatusForbidden, 0},
		{"a held arrival gone", wayin.ErrHoldGone, views.RefusedBadState, http.StatusBadRequest, 0},
		{"the admission: a bad address", signin.ErrBadAddress, views.RefusedInvalid, http.StatusBadRequest, 0},
		{"the admission: not trusted", signin.ErrNotTrusted, views.RefusedNotTrusted, http.StatusForbidden, 0},
		{"the admission: another way's account", signin.ErrNotAdoptable, views.RefusedNotTrusted, http.StatusForbidden, 0},
		{"the admission: no account", fmt.Errorf("oidc: %w", signin.ErrNoAccount), views.RefusedNoAccount, http.StatusForbidden, 0},
		{"the admission: disabled", fmt.Errorf("%w: %w", signin.ErrDisabled, store.ErrDisabledByIdP), views.RefusedDisabled, http.StatusForbidden, 0},
		{"the store's", store.ErrUnavailable, "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, ok := wayin.KindOf(tt.err)
			assert.Equal(t, tt.kind, kind)
			assert.Equal(t, tt.kind != "", ok)
			r := wayin.Refused(tt.err, "kiosk_refused")
			assert.Equal(t, tt.status, r.Status)
			assert.Equal(t, "kiosk_refused", r.Class)
			assert.Equal(t, tt.kind, r.Info.Refusal)
			assert.Equal(t, tt.retry, r.Info.RetryAfter)
			assert.True(t, errors.Is(r, tt.err), "the refusal wraps its error")
			if tt.kind == "" {
				assert.Empty(t, r.Info.Detail, "an error of no kind shows nothing of itself")
			} else {
				assert.Equal(t, tt.err.Error(), r.Info.Detail)
			}
		})
	}
	assert.Equal(t, "kiosk: the sign-in took too long", expired.Error(), "a way's refusal keeps its own words for the log")
}

// Every kind of the set is one of these; a kind is its own, not another's.
func TestRefusalsAreDistinct(t *testing.T) {
	seen := map[views.Refusal]bool{}
	for _, k := range views.Refusals() {
		assert.False(t, seen[k], k)
		seen[k] = true
		got, ok := wayin.KindOf(wayin.NewRefusal(k, "x"))
		assert.True(t, ok)
		assert.Equal(t, k, got)
	}
	assert.Len(t, seen, 11, "bad state, replayed, expired, clock, invalid, denied, unavailable, no address, not trusted, no account, disabled")
}
