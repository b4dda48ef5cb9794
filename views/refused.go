package views

import (
	"context"

	"github.com/a-h/templ"
	"github.com/ssobridge/ssobridge/locale"
)

// Refusal is a kind of refused arrival: the one set every way in's
// protocol and the admission wrap, each shown by the page family Refused.
type Refusal string

// The refusal set.
const (
	RefusedBadState    Refusal = "bad-state"   // an answer that no flow in this browser started
	RefusedReplayed    Refusal = "replayed"    // an answer used before
	RefusedExpired     Refusal = "expired"     // a flow that took longer than it may
	RefusedClock       Refusal = "clock"       // an answer dated outside its time
	RefusedInvalid     Refusal = "invalid"     // an answer that did not pass the checks
	RefusedDenied      Refusal = "denied"      // the source said no
	RefusedUnavailable Refusal = "unavailable" // the source could not be reached or read
	RefusedNoAddress   Refusal = "no-address"  // no usable, verified email address
	RefusedNotTrusted  Refusal = "not-trusted" // the source is not trusted for the account
	RefusedNoAccount   Refusal = "no-account"  // no account, and the source makes none
	RefusedDisabled    Refusal = "disabled"    // the account may not sign in
)

// Refusals lists the set, in the order above.
func Refusals() []Refusal {
	return []Refusal{RefusedBadState, RefusedReplayed, RefusedExpired, RefusedClock, RefusedInvalid, RefusedDenied,
		RefusedUnavailable, RefusedNoAddress, RefusedNotTrusted, RefusedNoAccount, RefusedDisabled}
}

// Wording is a refusal page's text. The ways share one wording per kind;
// a way whose people know it by other words (a course and its LMS)
// declares its own, with locale.Msg so the catalogs list it.
type Wording struct {
	// Class names the page (its data-class), "lti-stale".
	Class string
	// Title is the page's heading. Lead says what happened and what to do;
	// it may name {{.Source}} and {{.Contact}} and mark **strong** and
	// `code` words, as Items (listed under it) may.
	Title, Lead locale.ID
	Items       []locale.ID
	// Again labels a primary button to the way back, shown when there is
	// one.
	Again locale.ID
}

// sharedWording is the text every way in's refusal of the kind shows
// unless the way words it itself. A source is named by {{.Source}}
// where a sentence can take any name; the rest speaks of the person's
// organisation's sign-in, which every way in is.
func sharedWording(kind Refusal) Wording {
	switch kind {
	case RefusedBadState, RefusedReplayed:
		return Wording{Class: "idp-state", Title: locale.Msg("This sign-in could not be completed"),
			Lead: locale.Msg("The answer from your organisation's sign-in does not belong to a sign-in started in this browser (it may have been used already). Nothing was changed. Start again from the sign-in page.")}
	case RefusedExpired:
		return Wording{Class: "idp-expired", Title: locale.Msg("The sign-in took too long"),
			Lead: locale.Msg("A sign-in through your organisation must be completed within 10 minutes. Nothing was changed. Start again from the sign-in page.")}
	case RefusedClock:
		return Wording{Class: "idp-clock", Title: locale.Msg("Your organisation's sign-in is dated outside its time"),
			Lead: locale.Msg("The answer from your organisation's sign-in has expired or is not valid yet. Nothing was changed. Start again from the sign-in page; if it happens again, tell {{.Contact}}: the clocks of the identity provider and ssobridge may disagree (both should use NTP).")}
	case RefusedDenied, RefusedNoAccount:
		return Wording{Class: "idp-denied", Title: locale.Msg("Your organisation's sign-in did not let you in"),
			Lead: locale.Msg("The identity provider refused the sign-in, or there is no ssobridge account for you. Nothing was changed. Ask {{.Contact}} if you should have access.")}
	case RefusedUnavailable:
		return Wording{Class: "idp-unavailable", Title: locale.Msg("Your organisation's sign-in is not reachable right now"),
			Lead: locale.Msg("ssobridge could not reach the identity provider, or could not verify its answer. Nothing was changed. Try again in a moment; if it persists, tell {{.Contact}}.")}
	case RefusedNoAddress:
		return Wording{Class: "idp-unverified", Title: locale.Msg("Your email address is not verified"),
			Lead: locale.Msg("Your organisation's sign-in says your email address has not been verified, so ssobridge cannot tell that the account is yours. Verify it with your organisation (or ask {{.Contact}}), then sign in again. Nothing was changed.")}
	case RefusedNotTrusted:
		return Wording{Class: "arrival-refused", Title: locale.Msg("This sign-in cannot open your account here"),
			Lead: locale.Msg("You arrived through {{.Source}}, which ssobridge does not trust for this address. Nothing was changed. Sign in the way you usually do, or ask {{.Contact}}.")}
	}
	return Wording{Class: "idp-invalid", Title: locale.Msg("ssobridge could not accept your organisation's sign-in"),
		Lead: locale.Msg("The answer from your organisation's sign-in did not pass ssobridge's checks (its signature, whom it was addressed to, or the email address it names). Nothing was changed and you are not signed in. Start again from the sign-in page; if it happens again, tell {{.Contact}}, who can read the reason below and in ssobridge's log.")}
}

// wordingOf is the refusal's text: its way's own, else the shared one.
func wordingOf(e ErrorInfo) Wording {
	if e.Wording.Title != "" {
		return e.Wording
	}
	return sharedWording(e.Refusal)
}

// worded translates a text a wording or a way back declares (a
// locale.ID its way wrote with locale.Msg).
func worded(ctx context.Context, id locale.ID) string {
	return locale.From(ctx).T(id)
}

// wordedMarked is worded for a text with marks and the refusal's
// placeholders: {{.Contact}} and {{.Source}}.
func wordedMarked(ctx context.Context, id locale.ID, p Page, e ErrorInfo) templ.Component {
	return tm(ctx, id, "Contact", p.Contact, "Source", sourceName(ctx, e))
}

// sourceName is a refused arrival's way in as the person knows it, in
// their language: its own name (an LMS's), else what its way calls it
// ("your portal"), else its name in the log.
func sourceName(ctx context.Context, e ErrorInfo) string {
	switch {
	case e.SourceName != "":
		return e.SourceName
	case e.SourceNoun != "":
		return worded(ctx, e.SourceNoun)
	}
	return e.Source
}

// againURL is where a wording's button goes: the refusal's own way back
// (the course), else Home, where a fresh link is made.
func againURL(e ErrorInfo, p Page) string {
	if e.WayBack.URL != "" {
		return e.WayBack.URL
	}
	return p.Home.URL
}
