package wayin

import (
	"errors"
	"net/http"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/views"
)

// refusalError is a way in's own refusal: its text as the way words it,
// of one kind of the refusal set.
type refusalError struct {
	kind views.Refusal
	msg  string
}

func (e *refusalError) Error() string { return e.msg }

// NewRefusal is a way in's refusal error of the kind, with its own text
// ("oidc: the sign-in took too long"). Every way's protocol errors are
// made by it, so one page family shows them all.
func NewRefusal(kind views.Refusal, msg string) error {
	return &refusalError{kind: kind, msg: msg}
}

// KindOf is the kind of refusal err is or wraps: a way in's own
// (NewRefusal) or the admission's (signin's refusals); false for an
// error of no kind.
func KindOf(err error) (views.Refusal, bool) {
	var re *refusalError
	if errors.As(err, &re) {
		return re.kind, true
	}
	switch {
	case errors.Is(err, signin.ErrDisabled):
		return views.RefusedDisabled, true
	case errors.Is(err, signin.ErrBadAddress):
		return views.RefusedInvalid, true
	case errors.Is(err, signin.ErrNoAccount):
		return views.RefusedNoAccount, true
	case errors.Is(err, signin.ErrNotTrusted), errors.Is(err, signin.ErrNotAdoptable):
		return views.RefusedNotTrusted, true
	}
	return "", false
}

// retryUnavailable is how soon the page of an unreachable source says to
// try again, in seconds.
const retryUnavailable = 30

// Refused is err's refusal as the bridge answers it by default: the
// status of its kind, the kind's shared wording, err's text as the
// detail for an admin; class names it in the log line. A way sets its
// own wording, a status of its own or the way back on what it returns.
// An error of no kind gets Status 0: its own page.
func Refused(err error, class string) *Refusal {
	kind, ok := KindOf(err)
	if !ok {
		return &Refusal{Err: err, Class: class}
	}
	r := &Refusal{Err: err, Class: class, Status: http.StatusBadRequest,
		Info: views.ErrorInfo{Refusal: kind, Detail: err.Error()}}
	switch kind {
	case views.RefusedDenied, views.RefusedNoAddress, views.RefusedNotTrusted, views.RefusedNoAccount, views.RefusedDisabled:
		r.Status = http.StatusForbidden
	case views.RefusedUnavailable:
		r.Status, r.Info.RetryAfter = http.StatusServiceUnavailable, retryUnavailable
	}
	return r
}
