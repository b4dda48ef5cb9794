package scim

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/elimity-com/scim"
	"github.com/elimity-com/scim/optional"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/scim/internal/scimreq"
	"github.com/ssobridge/ssobridge/store"
)

// groupHandler serves /Groups: the groups the identity provider keeps,
// with their members (User ids).
type groupHandler struct {
	dir *accounts.Directory
	st  store.Groups
}

// groupResource is the SCIM Group of g, with its members unless the
// request leaves them out (withMembers).
func groupResource(g store.Group, members bool) scim.Resource {
	attrs := scim.ResourceAttributes{"displayName": g.DisplayName}
	if members {
		list := []any{}
		for _, m := range g.Members {
			list = append(list, map[string]any{"value": strconv.FormatInt(m, 10)})
		}
		attrs["members"] = list
	}
	created, updated := g.CreatedAt, g.UpdatedAt
	res := scim.Resource{ID: g.ID, Attributes: attrs,
		Meta: scim.Meta{Created: &created, LastModified: &updated, Version: version(updated)}}
	if g.ExternalID != "" {
		res.ExternalID = optional.NewString(g.ExternalID)
	}
	return res
}

// groupOf reads a Group's attributes (POST, PUT).
func groupOf(attrs scim.ResourceAttributes) (store.Group, error) {
	var g store.Group
	g.DisplayName, _ = scimreq.Lookup(attrs, "displayName").(string)
	g.ExternalID, _ = scimreq.Lookup(attrs, "externalId").(string)
	ids, err := scimreq.MemberIDs(scimreq.Lookup(attrs, "members"))
	if err != nil {
		return g, err
	}
	g.Members = ids
	return g, nil
}

// Create makes a group.
func (h *groupHandler) Create(r *http.Request, attrs scim.ResourceAttributes) (scim.Resource, error) {
	g, err := groupOf(attrs)
	if err != nil {
		return scim.Resource{}, err
	}
	out, err := h.dir.CreateGroup(r.Context(), g)
	if err != nil {
		return scim.Resource{}, fail(r, err)
	}
	return groupResource(out, withMembers(r)), nil
}

// Get reads a group.
func (h *groupHandler) Get(r *http.Request, id string) (scim.Resource, error) {
	g, err := h.st.GroupByID(r.Context(), id)
	if err != nil {
		return scim.Resource{}, fail(r, err)
	}
	return groupResource(g, withMembers(r)), nil
}

// GetAll pages through the groups a filter selects: displayName,
// externalId or id equalities, and Entra ID's membership check
// (id eq "…" and members[value eq "…"]), which reads the one group.
func (h *groupHandler) GetAll(r *http.Request, p scim.ListRequestParams) (scim.Page, error) {
	f := store.GroupFilter{Offset: max(p.StartIndex, 1) - 1, Limit: min(max(p.Count, 1), maxResults)}
	var q scimreq.Query
	if p.FilterValidator != nil {
		var err error
		if q, err = scimreq.GroupQuery(p.FilterValidator.GetFilter()); err != nil {
			return scim.Page{}, err
		}
		f.DisplayName, f.ExternalID = q.DisplayName, q.ExternalID
	}
	var list []store.Group
	var total int
	var err error
	if q.ID != "" {
		var g store.Group
		if g, err = h.st.GroupByID(r.Context(), q.ID); err == nil && groupMatches(g, q) {
			total = 1
			if f.Offset == 0 {
				list = []store.Group{g}
			}
		}
		if errors.Is(err, store.ErrNotFound) {
			err = nil
		}
	} else if !q.None {
		list, total, err = h.st.ListGroups(r.Context(), f)
	}
	if err != nil {
		return scim.Page{}, fail(r, err)
	}
	page := scim.Page{TotalResults: total, Resources: []scim.Resource{}}
	if p.Count == 0 {
		return page, nil
	}
	for _, g := range list {
		page.Resources = append(page.Resources, groupResource(g, withMembers(r)))
	}
	return page, nil
}

// groupMatches reports whether g meets the parts of q a group read by id
// must meet too.
func groupMatches(g store.Group, q scimreq.Query) bool {
	if q.None || (q.DisplayName != "" && !strings.EqualFold(q.DisplayName, g.DisplayName)) || (q.ExternalID != "" && q.ExternalID != g.ExternalID) {
		return false
	}
	if q.Member == "" {
		return true
	}
	id, err := strconv.ParseInt(q.Member, 10, 64)
	return err == nil && slices.Contains(g.Members, id)
}

// Replace sets a group's name, external id and members.
func (h *groupHandler) Replace(r *http.Request, id string, attrs scim.ResourceAttributes) (scim.Resource, error) {
	g, err := groupOf(attrs)
	if err != nil {
		return scim.Resource{}, err
	}
	out, err := h.dir.UpdateGroup(r.Context(), id, store.GroupUpdate{DisplayName: &g.DisplayName, ExternalID: &g.ExternalID, Members: &g.Members})
	if err != nil {
		return scim.Resource{}, fail(r, err)
	}
	return groupResource(out, withMembers(r)), nil
}

// Delete removes a group.
func (h *groupHandler) Delete(r *http.Request, id string) error {
	return fail(r, h.dir.DeleteGroup(r.Context(), id))
}

// Patch changes a group's name or members.
func (h *groupHandler) Patch(r *http.Request, id string, ops []scim.PatchOperation) (scim.Resource, error) {
	up, err := scimreq.GroupPatch(ops)
	if err != nil {
		return scim.Resource{}, err
	}
	out, err := h.dir.UpdateGroup(r.Context(), id, up)
	if err != nil {
		return scim.Resource{}, fail(r, err)
	}
	return groupResource(out, withMembers(r)), nil
}

// withMembers reports whether a group's answer lists its members: not
// when the request's excludedAttributes names members (Entra ID asks so,
// to keep large groups out of its reads), nor when its attributes list
// leaves them out (RFC 7644, section 3.9).
func withMembers(r *http.Request) bool {
	q := r.URL.Query()
	names := func(param string) []string {
		var out []string
		for _, a := range strings.Split(q.Get(param), ",") {
			a = strings.ToLower(strings.TrimSpace(a))
			out = append(out, a[strings.LastIndex(a, ":")+1:]) // the URN's attribute name
		}
		return out
	}
	if slices.Contains(names("excludedAttributes"), "members") {
		return false
	}
	return q.Get("attributes") == "" || slices.Contains(names("attributes"), "members")
}
