package scim

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/elimity-com/scim"
	scimerrors "github.com/elimity-com/scim/errors"
	"github.com/elimity-com/scim/optional"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/scim/internal/scimreq"
	"github.com/ssobridge/ssobridge/store"
)

// userHandler serves /Users: every account of the bridge is a User (an
// identity provider finds an account made before it by userName and takes
// it over), its id the account's id, its userName and work email the
// account's address.
type userHandler struct {
	dir *accounts.Directory
	st  store.Accounts
}

// userResource is the SCIM User of a.
func userResource(a store.Account) scim.Resource {
	created, updated := a.CreatedAt, a.UpdatedAt
	res := scim.Resource{
		ID: strconv.FormatInt(a.ID, 10),
		Attributes: scim.ResourceAttributes{
			"userName":    a.Email,
			"displayName": a.Name(),
			"name":        map[string]any{"givenName": a.FirstName, "familyName": a.LastName, "formatted": a.Name()},
			"emails":      []any{map[string]any{"value": a.Email, "type": "work", "primary": true}},
			"active":      !a.Disabled,
		},
		Meta: scim.Meta{Created: &created, LastModified: &updated, Version: version(updated)},
	}
	if a.ExternalID != "" {
		res.ExternalID = optional.NewString(a.ExternalID)
	}
	return res
}

// version is a resource's entity tag: its last change, to the millisecond.
func version(t time.Time) string { return `W/"` + strconv.FormatInt(t.UnixMilli(), 10) + `"` }

// directoryUser reads a User's attributes (POST, PUT): the address is the
// userName when it is one, else the primary or work email.
func directoryUser(attrs scim.ResourceAttributes) (accounts.DirectoryUser, error) {
	u := accounts.DirectoryUser{Active: true}
	if v, ok := scimreq.Lookup(attrs, "active").(bool); ok {
		u.Active = v
	}
	u.ExternalID, _ = scimreq.Lookup(attrs, "externalId").(string)
	if name, ok := scimreq.Lookup(attrs, "name").(map[string]any); ok {
		u.Names.Given, _ = scimreq.Lookup(name, "givenName").(string)
		u.Names.Family, _ = scimreq.Lookup(name, "familyName").(string)
		u.Names.Full, _ = scimreq.Lookup(name, "formatted").(string)
	}
	if u.Names.Full == "" {
		u.Names.Full, _ = scimreq.Lookup(attrs, "displayName").(string)
	}
	userName, _ := scimreq.Lookup(attrs, "userName").(string)
	u.Email = address(userName, scimreq.Lookup(attrs, "emails"))
	if u.Email == "" {
		return u, accounts.ErrNotAnAddress
	}
	return u, nil
}

// address is userName when it is an email address, else the primary (or
// work, or first) email of emails.
func address(userName string, emails any) string {
	if userName = strings.TrimSpace(userName); mailaddr.Problem(userName) == "" {
		return userName
	}
	return scimreq.PickEmail(emails)
}

// Create makes an account owned by the identity provider.
func (h *userHandler) Create(r *http.Request, attrs scim.ResourceAttributes) (scim.Resource, error) {
	u, err := directoryUser(attrs)
	if err != nil {
		return scim.Resource{}, fail(r, err)
	}
	a, err := h.dir.CreateUser(r.Context(), u)
	if err != nil {
		return scim.Resource{}, fail(r, err)
	}
	return userResource(a), nil
}

// Get reads one account.
func (h *userHandler) Get(r *http.Request, id string) (scim.Resource, error) {
	a, err := h.account(r.Context(), id)
	if err != nil {
		return scim.Resource{}, fail(r, err)
	}
	return userResource(a), nil
}

// account reads the account of a User id (ErrNotFound for an id that is
// no account's).
func (h *userHandler) account(ctx context.Context, id string) (store.Account, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return store.Account{}, store.ErrNotFound
	}
	return h.st.AccountByID(ctx, n)
}

// GetAll pages through the accounts a filter selects.
func (h *userHandler) GetAll(r *http.Request, p scim.ListRequestParams) (scim.Page, error) {
	f := store.AccountFilter{Offset: max(p.StartIndex, 1) - 1, Limit: min(max(p.Count, 1), maxResults)}
	if p.FilterValidator != nil {
		q, err := scimreq.UserQuery(p.FilterValidator.GetFilter())
		if err != nil {
			return scim.Page{}, err
		}
		if q.None {
			return scim.Page{Resources: []scim.Resource{}}, nil
		}
		if q.ID != "" {
			return h.byID(r, q, f.Offset, p.Count)
		}
		f.Email, f.ExternalID = q.Email, q.ExternalID
	}
	list, total, err := h.st.ListAccounts(r.Context(), f)
	if err != nil {
		return scim.Page{}, fail(r, err)
	}
	page := scim.Page{TotalResults: total, Resources: []scim.Resource{}}
	if p.Count == 0 {
		return page, nil // the count only
	}
	for _, a := range list {
		page.Resources = append(page.Resources, userResource(a))
	}
	return page, nil
}

// byID is the page of a filter on id (and what else q asks of it).
func (h *userHandler) byID(r *http.Request, q scimreq.Query, offset, count int) (scim.Page, error) {
	a, err := h.account(r.Context(), q.ID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && ((q.Email != "" && !mailaddr.Equal(q.Email, a.Email)) || (q.ExternalID != "" && q.ExternalID != a.ExternalID))) {
		return scim.Page{Resources: []scim.Resource{}}, nil
	}
	if err != nil {
		return scim.Page{}, fail(r, err)
	}
	page := scim.Page{TotalResults: 1, Resources: []scim.Resource{}}
	if offset == 0 && count != 0 {
		page.Resources = append(page.Resources, userResource(a))
	}
	return page, nil
}

// Replace sets every detail of an account (Okta sends the whole user on
// each change).
func (h *userHandler) Replace(r *http.Request, id string, attrs scim.ResourceAttributes) (scim.Resource, error) {
	cur, err := h.account(r.Context(), id)
	if err != nil {
		return scim.Resource{}, fail(r, err)
	}
	u, err := directoryUser(attrs)
	if err != nil {
		return scim.Resource{}, fail(r, err)
	}
	a, err := h.dir.ReplaceUser(r.Context(), cur, u)
	if err != nil {
		return scim.Resource{}, fail(r, err)
	}
	return userResource(a), nil
}

// Delete removes an account.
func (h *userHandler) Delete(r *http.Request, id string) error {
	a, err := h.account(r.Context(), id)
	if err != nil {
		return fail(r, err)
	}
	return fail(r, h.dir.DeleteUser(r.Context(), a))
}

// Patch applies add, replace and remove operations to an account.
func (h *userHandler) Patch(r *http.Request, id string, ops []scim.PatchOperation) (scim.Resource, error) {
	cur, err := h.account(r.Context(), id)
	if err != nil {
		return scim.Resource{}, fail(r, err)
	}
	up, err := scimreq.UserPatch(ops)
	if err != nil {
		return scim.Resource{}, err
	}
	a, err := h.dir.UpdateUser(r.Context(), cur, up)
	if err != nil {
		return scim.Resource{}, fail(r, err)
	}
	return userResource(a), nil
}

// fail is the SCIM error of err: what the client sent is a 4xx with what
// was wrong; the store away (or its write lock held elsewhere past the
// busy timeout) marks the request for a 503; anything else is a 500 that
// says nothing of the cause (the log has it).
func fail(r *http.Request, err error) error {
	var se scimerrors.ScimError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return se
	case errors.Is(err, store.ErrNotFound):
		return scimerrors.ScimErrorResourceNotFound("/scim" + r.URL.Path) // the path the IdP called (mounted under /scim)
	case errors.Is(err, store.ErrEmailTaken):
		return scimerrors.ScimError{Status: http.StatusConflict, ScimType: scimerrors.ScimTypeUniqueness,
			Detail: "Another account has this email address: one address, one account."}
	case errors.Is(err, store.ErrGroupNameTaken):
		return scimerrors.ScimError{Status: http.StatusConflict, ScimType: scimerrors.ScimTypeUniqueness, Detail: "Another group has this displayName."}
	case errors.Is(err, accounts.ErrNotTheIdPs):
		return scimerrors.ScimError{Status: http.StatusForbidden, ScimType: scimerrors.ScimTypeMutability,
			Detail: "This account is not the identity provider's to change: " + err.Error() + ". The bridge's log says which setting would allow it (scim.email_domains, scim.admin_group)."}
	case errors.Is(err, store.ErrLastAdmin):
		return scimerrors.ScimError{Status: http.StatusConflict, ScimType: scimerrors.ScimTypeMutability,
			Detail: "This is the last partner admin: make another admin first."}
	case errors.Is(err, store.ErrInvalid), errors.Is(err, accounts.ErrNotAnAddress), errors.Is(err, accounts.ErrUnknownMember):
		return scimerrors.ScimError{Status: http.StatusBadRequest, ScimType: scimerrors.ScimTypeInvalidValue, Detail: err.Error()}
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, store.ErrStoreBusy):
		outcomeOf(r.Context()).unavailable = true
		return scimerrors.ScimErrorInternal
	}
	outcomeOf(r.Context()).logger.Error("scim: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	return scimerrors.ScimError{Status: http.StatusInternalServerError, Detail: "The bridge could not complete the request; its log says why."}
}
