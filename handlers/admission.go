package handlers

import (
	"errors"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/internal/outside"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// admissionError is an arrival the admission refused (signin.Admit), for
// its page: the one mapping every way in shares.
type admissionError struct {
	err error
	src signin.Source
}

func (e admissionError) Error() string { return e.err.Error() }
func (e admissionError) Unwrap() error { return e.err }

// admit runs the admission for an arrival and, on a refusal, records it
// (one log line, the audit, the metric) and returns its page's error; the
// store's errors are returned as they are (their own pages).
func (h *server) admit(c echo.Context, a signin.Arrival) (store.Account, error) {
	acct, err := h.admission.Admit(c.Request().Context(), a)
	if err == nil {
		// The console follows the authority that made the admin: the
		// source's admin rule granted the role now, or the account's role is
		// the IdP's directory's (SCIM) and the IdP itself signs it in.
		byRule := a.Source.AdminAuthority && a.Admin
		byDirectory := acct.ManagedBy == store.ManagedBySCIM && a.Source.Directory
		c.Set(ctxConsoleBy, consoleGrant{account: acct.ID, ok: acct.Admin && (byRule || byDirectory)})
	}
	if err := h.refusedArrival(c, a, err); err != nil {
		return store.Account{}, err
	}
	return acct, nil
}

// refusedArrival records an admission's refusal of a (one log line, the
// audit, the metric) and returns its page's error; nil stays nil, and the
// store's errors are returned as they are (their own pages).
func (h *server) refusedArrival(c echo.Context, a signin.Arrival, err error) error {
	if err == nil || !admissionRefusal(err) {
		return err
	}
	h.recordRefusal(c, "arrival refused", a.Source.Name, a.Email, err)
	return admissionError{err: err, src: a.Source}
}

// recordRefusal records a refused arrival of any way in: one WARN line
// (msg, the reason, the source, the address), the audit (the detail
// starting with the source) and the metric. The reason quotes what the
// outsider sent, bounded where it is quoted (outside.Quote); the whole is
// bounded here too.
func (h *server) recordRefusal(c echo.Context, msg, source, email string, err error) {
	reason := outside.Trim(err.Error(), maxReason)
	attrs := []any{"reason", reason, "request_id", requestID(c)}
	if email != "" {
		attrs = append(attrs, "email", outside.Trim(email, 254))
	}
	detail := reason
	if source != "" {
		attrs = append(attrs, "source", source)
		detail = source + ": " + detail
	}
	h.Logger.Warn(msg, attrs...)
	h.audit(c, store.Event{Kind: store.KindLogin, Email: truncate(email, 254), Outcome: "failed", Detail: truncate(detail, 300)})
	h.Metrics.Login("failed")
}

func admissionRefusal(err error) bool {
	for _, r := range []error{signin.ErrBadAddress, signin.ErrNotTrusted, signin.ErrNotAdoptable, signin.ErrNoAccount, signin.ErrDisabled} {
		if errors.Is(err, r) {
			return true
		}
	}
	return false
}

// admissionPage is the page of a refused arrival, whichever way it came:
// the refusal's kind in the page family, with the source's name. The
// detail names the configuration key to change, never why an account
// could not be taken (that it has a password or is an admin is not the
// arriving person's to learn: the log says it).
func admissionPage(e admissionError, info views.ErrorInfo) (int, func(views.Page, views.ErrorInfo) templ.Component, views.ErrorInfo) {
	r := wayin.Refused(e.err, "")
	ri := r.Info
	ri.RequestID, ri.WayBack = info.RequestID, info.WayBack
	ri.Source, ri.SourceName, ri.SourceNoun = e.src.Name, e.src.Title, e.src.Noun
	switch {
	case errors.Is(e.err, signin.ErrDisabled):
		ri.ByIdP, ri.Detail = errors.Is(e.err, store.ErrDisabledByIdP), ""
	case errors.Is(e.err, signin.ErrNoAccount):
		ri.Detail = "no account has this address, and " + e.src.Key + ".create_accounts is off"
	case errors.Is(e.err, signin.ErrNotTrusted):
		ri.Detail = "the address is not of a domain in " + e.src.Key + ".email_domains"
	case errors.Is(e.err, signin.ErrNotAdoptable):
		ri.Detail = "the account of this address belongs to another way in; " + e.src.Key + ".email_domains does not list its domain"
	}
	return r.Status, views.Refused, ri
}
