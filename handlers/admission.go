package handlers

import (
	"strings"

	"errors"
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/internal/outside"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
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
		byDirectory := acct.ManagedBy == store.ManagedBySCIM && sourceKind(a.Source) == "idp"
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

// sourceKind is what a person knows a way in as: "portal", "idp" (their
// organisation's sign-in, OIDC or SAML), "lti", or "" (SCIM, none).
func sourceKind(src signin.Source) string {
	switch id := src.ID; {
	case strings.HasPrefix(id, "portal:"):
		return "portal"
	case strings.HasPrefix(id, "oidc:"), id == "saml", strings.HasPrefix(id, "saml:"):
		return "idp"
	case strings.HasPrefix(id, "lti:"):
		return "lti"
	}
	return ""
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

// admissionPage is the page of a refused arrival, whichever way it came.
// The detail names the configuration key to change, never why an
// account could not be taken (that it has a password or is an admin is
// not the arriving person's to learn: the log says it).
func admissionPage(e admissionError, info views.ErrorInfo) (int, func(views.Page, views.ErrorInfo) templ.Component, views.ErrorInfo) {
	switch {
	case errors.Is(e.err, signin.ErrDisabled):
		info.ByIdP = errors.Is(e.err, store.ErrDisabledByIdP)
		return http.StatusForbidden, views.AccountDisabled, info
	case errors.Is(e.err, signin.ErrBadAddress):
		info.Detail = e.err.Error()
		return http.StatusBadRequest, views.IdPInvalidAnswer, info
	case errors.Is(e.err, signin.ErrNoAccount):
		info.Detail = "no account has this address, and " + e.src.Key + ".create_accounts is off"
		return http.StatusForbidden, views.IdPDenied, info
	case errors.Is(e.err, signin.ErrNotTrusted):
		info.Detail = "the address is not of a domain in " + e.src.Key + ".email_domains"
	default: // signin.ErrNotAdoptable
		info.Detail = "the account of this address belongs to another way in; " + e.src.Key + ".email_domains does not list its domain"
	}
	info.Source, info.SourceKind = e.src.Name, sourceKind(e.src)
	if info.SourceKind == "lti" {
		info.LMS = strings.TrimPrefix(e.src.Name, "LTI: ")
	}
	return http.StatusForbidden, views.ArrivalRefused, info
}
