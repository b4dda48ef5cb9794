package scim

import (
	"strconv"
	"strings"

	"github.com/elimity-com/scim"
	filter "github.com/scim2/filter-parser/v2"

	"github.com/ssobridge/ssobridge/store"
)

// PATCH operations (add, replace, remove; with a path or, without one, a
// value object of attributes), as Entra ID and Okta send them, turned
// into one change of the store. Attributes the bridge does not keep (the
// enterprise extension, phone numbers, titles) are accepted and ignored:
// an identity provider's default mappings send them.

// userPatch is the account change of ops.
func userPatch(ops []scim.PatchOperation) (store.AccountUpdate, error) {
	var up store.AccountUpdate
	for _, op := range ops {
		if op.Path == nil {
			attrs, ok := op.Value.(map[string]any)
			if !ok {
				return up, invalidValue("An operation without a path needs an object of attributes as its value.")
			}
			for k, v := range attrs {
				p, err := filter.ParsePath([]byte(k))
				if err != nil {
					continue // an attribute name the schema knows but no path can name: not ours
				}
				if err := applyUser(&up, op.Op, &p, v); err != nil {
					return up, err
				}
			}
			continue
		}
		if err := applyUser(&up, op.Op, op.Path, op.Value); err != nil {
			return up, err
		}
	}
	return up, nil
}

// applyUser applies one operation on path to up.
func applyUser(up *store.AccountUpdate, op string, path *filter.Path, value any) error {
	if path.AttributePath.URIPrefix != nil && !strings.EqualFold(path.AttributePath.URI(), "urn:ietf:params:scim:schemas:core:2.0:User") {
		return nil // an extension's attribute
	}
	name := strings.ToLower(path.AttributePath.AttributeName)
	sub := strings.ToLower(path.AttributePath.SubAttributeName())
	if sub == "" {
		sub = strings.ToLower(path.SubAttributeName())
	}
	remove := op == scim.PatchOperationRemove
	switch name {
	case "username":
		if remove {
			return invalidValue("userName cannot be removed: it is the account's address.")
		}
		return setString(&up.Email, value, "userName")
	case "emails":
		if remove {
			return nil // the address stays the userName
		}
		if sub == "value" {
			return setString(&up.Email, value, "emails.value")
		}
		if e := pickEmail(asList(value)); e != "" {
			up.Email = &e
		}
		return nil
	case "name":
		return applyName(up, remove, sub, value)
	case "active":
		if remove {
			return nil
		}
		b, ok := value.(bool)
		if !ok {
			return invalidValue("active must be true or false.")
		}
		up.Disabled = ptr(!b)
		return nil
	case "externalid":
		if remove {
			up.ExternalID = ptr("")
			return nil
		}
		return setString(&up.ExternalID, value, "externalId")
	}
	return nil // displayName (made of the names), and what the bridge does not keep
}

// applyName applies an operation on name or one of its parts.
func applyName(up *store.AccountUpdate, remove bool, sub string, value any) error {
	if remove {
		return nil // an account keeps a name
	}
	switch sub {
	case "givenname":
		return setString(&up.FirstName, value, "name.givenName")
	case "familyname":
		return setString(&up.LastName, value, "name.familyName")
	case "":
		m, _ := value.(map[string]any)
		if g, ok := lookup(m, "givenName").(string); ok {
			up.FirstName = &g
		}
		if f, ok := lookup(m, "familyName").(string); ok {
			up.LastName = &f
		}
	}
	return nil
}

// setString sets *dst to value, a string.
func setString(dst **string, value any, what string) error {
	s, ok := value.(string)
	if !ok {
		return invalidValue("%s must be a string.", what)
	}
	*dst = &s
	return nil
}

// asList is value as a list (a single object is a list of one).
func asList(value any) []any {
	switch v := value.(type) {
	case []any:
		return v
	case map[string]any:
		return []any{v}
	}
	return nil
}

// groupPatch is the group change of ops.
func groupPatch(ops []scim.PatchOperation) (store.GroupUpdate, error) {
	var up store.GroupUpdate
	for _, op := range ops {
		if op.Path == nil {
			attrs, ok := op.Value.(map[string]any)
			if !ok {
				return up, invalidValue("An operation without a path needs an object of attributes as its value.")
			}
			for k, v := range attrs {
				p, err := filter.ParsePath([]byte(k))
				if err != nil {
					continue
				}
				if err := applyGroup(&up, op.Op, &p, v); err != nil {
					return up, err
				}
			}
			continue
		}
		if err := applyGroup(&up, op.Op, op.Path, op.Value); err != nil {
			return up, err
		}
	}
	return up, nil
}

// applyGroup applies one operation on path to up.
func applyGroup(up *store.GroupUpdate, op string, path *filter.Path, value any) error {
	switch strings.ToLower(path.AttributePath.AttributeName) {
	case "displayname":
		if op == scim.PatchOperationRemove {
			return invalidValue("displayName cannot be removed.")
		}
		return setString(&up.DisplayName, value, "displayName")
	case "externalid":
		if op == scim.PatchOperationRemove {
			up.ExternalID = ptr("")
			return nil
		}
		return setString(&up.ExternalID, value, "externalId")
	case "members":
		return applyMembers(up, op, path, value)
	}
	return nil
}

// applyMembers adds, removes or replaces members: by value list, or (to
// remove) by a path such as members[value eq "42"].
func applyMembers(up *store.GroupUpdate, op string, path *filter.Path, value any) error {
	ids, err := memberIDs(value)
	if err != nil {
		return err
	}
	if path.ValueExpression != nil {
		if op != scim.PatchOperationRemove {
			return invalidValue("Only remove takes a filtered members path.")
		}
		a, ok := path.ValueExpression.(*filter.AttributeExpression)
		var v string
		if ok {
			v, ok = a.CompareValue.(string)
		}
		if !ok || !strings.EqualFold(a.AttributePath.AttributeName, "value") || a.Operator != filter.EQ {
			return invalidValue("A members path filters by value eq \"<user id>\".")
		}
		id, err := memberID(v)
		if err != nil {
			return err
		}
		up.Remove = append(up.Remove, id)
		return nil
	}
	switch op {
	case scim.PatchOperationAdd:
		up.Add = append(up.Add, ids...)
	case scim.PatchOperationRemove:
		if value == nil {
			up.Members, up.Add = &[]int64{}, nil // every member goes
			return nil
		}
		up.Remove = append(up.Remove, ids...)
	default:
		up.Members, up.Add, up.Remove = &ids, nil, nil
	}
	return nil
}

// memberIDs reads a members value: a list of {"value": "<user id>"}.
func memberIDs(value any) ([]int64, error) {
	ids := []int64{}
	for _, m := range asList(value) {
		o, _ := m.(map[string]any)
		v, ok := lookup(o, "value").(string)
		if !ok {
			return nil, invalidValue("A member is {\"value\": \"<user id>\"}.")
		}
		id, err := memberID(v)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// memberID reads a member's user id.
func memberID(v string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || id <= 0 {
		return 0, invalidValue("Member %q is not a user id of this bridge.", v)
	}
	return id, nil
}

func ptr[T any](v T) *T { return &v }
