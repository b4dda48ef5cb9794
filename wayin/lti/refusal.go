package lti

import (
	"errors"
	"net/http"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// backToCourse is a refused launch's way back: the course page it came
// from ("" when the LMS named none: the page's own links stay).
func backToCourse(url string) views.WayBack {
	return views.WayBack{URL: url, Label: locale.Msg("Back to the course")}
}

// page is a refused launch's answer: the refusal's kind in the page
// family, in LTI's own words (a pupil knows a course and its LMS, not a
// sign-in), the LMS named; an error of no kind (the store's, say) keeps
// its own page (Status 0).
func page(err error, lms string) *wayin.Refusal {
	r := wayin.Refused(err, "lti_refused")
	if r.Status == 0 {
		return r
	}
	r.Info.SourceName, r.Info.SourceNoun, r.Info.Public = lms, lmsNoun(), true
	r.Info.Wording = wording(err)
	switch {
	case errors.Is(err, ErrKeysUnavailable):
		// The log keeps the transport's words; the page says only why.
		r.Info.Detail = ErrKeysUnavailable.Error() + ": " + fetchReason(err)
	case errors.Is(err, ErrKeyChanged):
		r.Info.RetryAfter = 60
	case errors.Is(err, ErrNoEmail):
		r.Status = http.StatusBadRequest // what the LMS sent, as every launch it sent wrong
	}
	return r
}

// lmsNoun is what the pages call an LMS whose name is not known.
func lmsNoun() locale.ID { return locale.Msg("your course's learning platform") }

// admissionPage gives two of the admission's refusals LTI's own words
// (which name the LMS); the others keep the words every way in shares,
// with the way back to the course.
func admissionPage(err error, lms, course string) error {
	switch {
	case errors.Is(err, signin.ErrNoAccount), errors.Is(err, signin.ErrBadAddress):
		r := page(err, lms)
		r.Class, r.Info.WayBack = "arrival_refused", backToCourse(course)
		return r
	case course != "":
		// The admission's shared page (Status 0: its own), with the way
		// back to the course.
		return &wayin.Refusal{Err: err, Info: views.ErrorInfo{WayBack: backToCourse(course)}}
	}
	return err
}

// wording is LTI's text for a refused launch.
func wording(err error) views.Wording {
	switch {
	case errors.Is(err, ErrKeyChanged):
		return views.Wording{Class: "lti-key-changed", Title: locale.Msg("The LMS changed its key: try again in a minute"),
			Lead: locale.Msg("{{.Source}} signed this launch with a key ssobridge has not read yet; LMSs change their keys from time to time. Nothing was changed. Go back to the course and click the link again in a minute. If this page comes back, tell the school's LMS administrator.")}
	case errors.Is(err, ErrKeysUnavailable):
		return views.Wording{Class: "lti-unavailable", Title: locale.Msg("The launch cannot be checked right now"),
			Lead: locale.Msg("ssobridge could not read the signing keys of {{.Source}}, so it cannot check the launch. Nothing was changed. Try the course link again in a minute; if it persists, tell the school's LMS administrator.")}
	case errors.Is(err, ErrNotInstructor):
		return views.Wording{Class: "lti-instructors-only", Title: locale.Msg("Only teachers can place the video editor in a course"),
			Lead: locale.Msg("{{.Source}} asked to place the video editor in a course, but your role there is not a teacher's. Nothing was changed. Go back to the course; a teacher of the course can add the link.")}
	case errors.Is(err, signin.ErrNoAccount):
		return views.Wording{Class: "lti-denied", Title: locale.Msg("There is no account for you here yet"),
			Lead: locale.Msg("{{.Source}} launched you, but ssobridge does not create accounts for its users. Nothing was changed. Ask {{.Contact}} to add your account, then click the course link again.")}
	}
	kind, _ := wayin.KindOf(err)
	switch kind {
	case views.RefusedBadState, views.RefusedReplayed, views.RefusedExpired:
		return views.Wording{Class: "lti-stale", Title: locale.Msg("This launch was already used or did not start here"),
			Lead: locale.Msg("Each click on a course link works once, in the browser where it was made, within 5 minutes. This one was used before, took too long, or belongs to another browser. Nothing was changed. Go back to the course and click the link again.")}
	case views.RefusedClock:
		return views.Wording{Class: "lti-clock", Title: locale.Msg("The launch is dated outside its time"),
			Lead: locale.Msg("The launch from {{.Source}} has expired or is dated in the future. Nothing was changed. Click the course link again; if it happens again, tell the school's LMS administrator: the clocks of the LMS and ssobridge may disagree (both should use NTP).")}
	case views.RefusedNoAddress:
		return views.Wording{Class: "lti-no-email", Title: locale.Msg("Your learning platform did not share your email address"),
			Lead: locale.Msg("The video editor needs your email address to find your account, and {{.Source}} sent none. Nothing was changed. Tell the school's LMS administrator to let the tool receive the user's email:"),
			Items: []locale.ID{
				locale.Msg("**Canvas**: the developer key's “Privacy Level” set to “Public”."),
				locale.Msg("**Moodle**: the tool's “Privacy” setting “Share launcher's email with tool” set to “Always”."),
				locale.Msg("**Schoology**: the app's “Privacy” setting sends the user's email (name and email)."),
				locale.Msg("**Blackboard**: the tool's “User Fields to Send” include “Email address”."),
				locale.Msg("**Brightspace**: the tool's “Security Settings” tick “Email”."),
			}}
	}
	return views.Wording{Class: "lti-refused", Title: locale.Msg("The course link could not open the video editor"),
		Lead: locale.Msg("The launch from {{.Source}} did not pass ssobridge's checks, so you are not signed in and nothing was changed. Go back to the course and click the link again; if this page comes back, tell your teacher or the school's LMS administrator, who can read the reason below.")}
}

// registrationWording is the page of a Dynamic Registration that could
// not be done; nothing was kept.
func registrationWording() views.Wording {
	return views.Wording{Class: "lti-registration-refused", Title: locale.Msg("The video editor could not be registered"),
		Lead: locale.Msg("The registration did not go through, and nothing was kept. The reason is below. A registration URL works once, for an hour: ask the partner admin for a new one, then paste it into the LMS again.")}
}

// Wordings are LTI's own refusal pages, for the page gallery.
func (Module) Wordings() []views.Wording {
	var out []views.Wording
	for _, err := range []error{ErrKeyChanged, ErrKeysUnavailable, ErrNotInstructor, signin.ErrNoAccount, ErrBadState, ErrClock, ErrNoEmail, ErrInvalid} {
		out = append(out, wording(err))
	}
	return append(out, registrationWording())
}
