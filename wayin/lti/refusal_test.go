package lti

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// A refused launch answers the page family in LTI's words, the LMS named
// and the reason public (it is what the LMS sent); each class keeps its
// status and, for a key set, how soon to try again.
func TestRefusalWords(t *testing.T) {
	tests := []struct {
		err    error
		class  string
		status int
		retry  int
	}{
		{fmt.Errorf("%w: key k2", ErrKeyChanged), "lti-key-changed", http.StatusServiceUnavailable, 60},
		{fmt.Errorf("%w: 503", ErrKeysUnavailable), "lti-unavailable", http.StatusServiceUnavailable, 30},
		{ErrNotInstructor, "lti-instructors-only", http.StatusForbidden, 0},
		{ErrBadState, "lti-stale", http.StatusBadRequest, 0},
		{ErrReplayed, "lti-stale", http.StatusBadRequest, 0},
		{ErrFlowExpired, "lti-stale", http.StatusBadRequest, 0},
		{ErrClock, "lti-clock", http.StatusBadRequest, 0},
		{ErrNoEmail, "lti-no-email", http.StatusBadRequest, 0},
		{ErrInvalid, "lti-refused", http.StatusBadRequest, 0},
		{ErrUnknownPlatform, "lti-refused", http.StatusBadRequest, 0},
		{ErrBadRequest, "lti-refused", http.StatusBadRequest, 0},
	}
	for _, tt := range tests {
		t.Run(tt.class+" "+tt.err.Error(), func(t *testing.T) {
			r := page(tt.err, "Springfield Moodle")
			assert.Equal(t, tt.status, r.Status)
			assert.Equal(t, tt.class, r.Info.Wording.Class)
			assert.Equal(t, tt.retry, r.Info.RetryAfter)
			assert.Equal(t, "Springfield Moodle", r.Info.SourceName)
			assert.True(t, r.Info.Public, "what the LMS sent is shown to whoever set it up")
			assert.Equal(t, "lti_refused", r.Class)
		})
	}
	assert.Zero(t, page(store.ErrUnavailable, "x").Status, "the store's error keeps its own page")
}

// The admission's refusals: no account and a bad address in LTI's words
// with the way back to the course; the others keep the shared words and
// get the way back; without a course, the error as it is.
func TestAdmissionRefusalPages(t *testing.T) {
	var r *wayin.Refusal
	require.True(t, errors.As(admissionPage(signin.ErrNoAccount, "Springfield Moodle", "https://lms.example/course/7"), &r))
	assert.Equal(t, http.StatusForbidden, r.Status)
	assert.Equal(t, "lti-denied", r.Info.Wording.Class)
	assert.Equal(t, "arrival_refused", r.Class)
	assert.Equal(t, views.WayBack{URL: "https://lms.example/course/7", Label: "Back to the course"}, r.Info.WayBack)

	require.True(t, errors.As(admissionPage(signin.ErrBadAddress, "Springfield Moodle", ""), &r))
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Equal(t, "lti-refused", r.Info.Wording.Class)

	require.True(t, errors.As(admissionPage(signin.ErrNotTrusted, "Springfield Moodle", "https://lms.example/course/7"), &r))
	assert.Zero(t, r.Status, "the admission's own page")
	assert.Equal(t, "https://lms.example/course/7", r.Info.WayBack.URL)
	assert.Equal(t, signin.ErrDisabled, admissionPage(signin.ErrDisabled, "x", ""), "no course: as it is")
}

// Every wording LTI lists for the gallery is of its own class, and
// renders with every placeholder filled.
func TestWordings(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range (Module{}).Wordings() {
		assert.False(t, seen[w.Class], w.Class)
		seen[w.Class] = true
		var b strings.Builder
		require.NoError(t, views.Refused(views.Page{Title: "Error", Contact: "the office"}, views.ErrorInfo{Status: 400, Wording: w, SourceName: "Springfield Moodle"}).Render(t.Context(), &b))
		assert.NotContains(t, b.String(), "{{", w.Class)
		assert.Contains(t, b.String(), `data-class="`+w.Class+`"`)
	}
	assert.Len(t, seen, 9)
}
