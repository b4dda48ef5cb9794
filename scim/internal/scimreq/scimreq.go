// Package scimreq reads what a SCIM request asks, in the store's terms:
// a filter as the equalities it selects by, PATCH operations as one
// change of an account or a group, and the forms identity providers send
// that RFC 7644 does not (rewritten to the RFC's before the protocol
// library reads them). Pure functions: no store, no HTTP answer.
package scimreq

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/elimity-com/scim"
	scimerrors "github.com/elimity-com/scim/errors"
	filter "github.com/scim2/filter-parser/v2"

	"github.com/ssobridge/ssobridge/store"
)

// PickEmail is the primary email of a SCIM emails value, else the work
// one, else the first.
func PickEmail(emails any) string {
	list, _ := emails.([]any)
	var work, first string
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		v, _ := Lookup(m, "value").(string)
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if p, _ := Lookup(m, "primary").(bool); p {
			return v
		}
		if t, _ := Lookup(m, "type").(string); strings.EqualFold(t, "work") && work == "" {
			work = v
		}
		if first == "" {
			first = v
		}
	}
	if work != "" {
		return work
	}
	return first
}

// InvalidValue is a 400 invalidValue saying what.
func InvalidValue(format string, args ...any) error {
	return scimerrors.ScimError{Status: http.StatusBadRequest, ScimType: scimerrors.ScimTypeInvalidValue, Detail: fmt.Sprintf(format, args...)}
}

// InvalidFilter is a 400 invalidFilter saying what.
func InvalidFilter(format string, args ...any) error {
	return scimerrors.ScimError{Status: http.StatusBadRequest, ScimType: scimerrors.ScimTypeInvalidFilter, Detail: fmt.Sprintf(format, args...)}
}

// Query is what a supported filter selects: equalities (empty: any).
type Query struct {
	Email, ExternalID, ID, DisplayName, Member string
	None                                       bool // two equalities that cannot both hold
}

// set sets a field of q once; a second, different value selects nothing.
func (q *Query) set(field *string, v string) {
	if *field != "" && *field != v {
		q.None = true
	}
	*field = v
}

// UserQuery reads a Users filter: equalities on userName, externalId,
// id, emails.value or a value path on emails, joined by and.
func UserQuery(e filter.Expression) (Query, error) {
	var q Query
	err := walkAnd(e, func(a *filter.AttributeExpression, within string) error {
		name := strings.ToLower(a.AttributePath.AttributeName)
		sub := strings.ToLower(a.AttributePath.SubAttributeName())
		v, ok := a.CompareValue.(string)
		switch {
		case !ok || a.Operator != filter.EQ:
		case within == "emails" && name == "type":
			return nil // the type of address: every account's is work
		case within == "emails" && name == "value", name == "emails" && sub == "value", name == "username" && sub == "":
			q.set(&q.Email, strings.TrimSpace(v))
			return nil
		case name == "externalid" && within == "":
			q.set(&q.ExternalID, v)
			return nil
		case name == "id" && within == "":
			q.set(&q.ID, v)
			return nil
		}
		return InvalidFilter("Filter %q is not supported: use eq on userName, externalId, id or emails[type eq \"work\"].value, joined by and.", a.String())
	})
	return q, err
}

// walkAnd calls fn for every comparison of an expression made of
// comparisons and value paths joined by and; within is the value path's
// attribute, lower-cased ("" at the top).
func walkAnd(e filter.Expression, fn func(a *filter.AttributeExpression, within string) error) error {
	var walk func(e filter.Expression, within string) error
	walk = func(e filter.Expression, within string) error {
		switch x := e.(type) {
		case *filter.AttributeExpression:
			return fn(x, within)
		case *filter.LogicalExpression:
			if x.Operator != filter.AND {
				return InvalidFilter("Filters joined by or are not supported.")
			}
			if err := walk(x.Left, within); err != nil {
				return err
			}
			return walk(x.Right, within)
		case *filter.ValuePath:
			if within != "" {
				return InvalidFilter("Nested value paths are not supported.")
			}
			return walk(x.ValueFilter, strings.ToLower(x.AttributePath.AttributeName))
		}
		return InvalidFilter("This filter is not supported.")
	}
	return walk(e, "")
}

// GroupQuery reads a Groups filter.
func GroupQuery(e filter.Expression) (Query, error) {
	var q Query
	err := walkAnd(e, func(a *filter.AttributeExpression, within string) error {
		name := strings.ToLower(a.AttributePath.AttributeName)
		v, ok := a.CompareValue.(string)
		switch {
		case !ok || a.Operator != filter.EQ:
		case within == "members" && name == "value":
			q.set(&q.Member, v)
			return nil
		case within == "" && name == "displayname":
			q.set(&q.DisplayName, v)
			return nil
		case within == "" && name == "externalid":
			q.set(&q.ExternalID, v)
			return nil
		case within == "" && name == "id":
			q.set(&q.ID, v)
			return nil
		}
		return InvalidFilter("Filter %q is not supported: use eq on displayName, externalId or id, and members[value eq \"…\"], joined by and.", a.String())
	})
	if err == nil && q.Member != "" && q.ID == "" {
		return q, InvalidFilter("members[value eq \"…\"] is taken with id eq \"…\" (a membership check).")
	}
	return q, err
}

// PATCH operations (add, replace, remove; with a path or, without one, a
// value object of attributes), as Entra ID and Okta send them, turned
// into one change of the store. Attributes the bridge does not keep (the
// enterprise extension, phone numbers, titles) are accepted and ignored:
// an identity provider's default mappings send them.

// UserPatch is the account change of ops.
func UserPatch(ops []scim.PatchOperation) (store.AccountUpdate, error) {
	var up store.AccountUpdate
	err := eachOp(addressOnce(ops), func(op string, path *filter.Path, value any) error { return applyUser(&up, op, path, value) })
	return up, err
}

// addressOnce applies POST's and PUT's address rule to an operation
// without a path that names both userName and emails: the address is
// userName when it is an email address, else the primary (or work)
// email. The other attribute is left out, so the address never depends
// on the order a map is read in.
func addressOnce(ops []scim.PatchOperation) []scim.PatchOperation {
	out := slices.Clone(ops)
	for i, op := range out {
		attrs, ok := op.Value.(map[string]any)
		if op.Path != nil || !ok {
			continue
		}
		userKey, emailsKey := keyOf(attrs, "userName"), keyOf(attrs, "emails")
		if userKey == "" || emailsKey == "" {
			continue
		}
		drop := userKey
		if u, ok := attrs[userKey].(string); ok && store.ValidateEmail(strings.TrimSpace(u)) == nil {
			drop = emailsKey
		}
		rest := maps.Clone(attrs)
		delete(rest, drop)
		out[i].Value = rest
	}
	return out
}

// keyOf is the key of m that is name in any case ("" if none).
func keyOf(m map[string]any, name string) string {
	for k := range m {
		if strings.EqualFold(k, name) {
			return k
		}
	}
	return ""
}

// eachOp calls apply for each operation, and for each attribute of the
// value object of one without a path, as if that attribute were its path.
func eachOp(ops []scim.PatchOperation, apply func(op string, path *filter.Path, value any) error) error {
	for _, op := range ops {
		name := strings.ToLower(op.Op) // as the library does before it
		if op.Path != nil {
			if err := apply(name, op.Path, op.Value); err != nil {
				return err
			}
			continue
		}
		attrs, ok := op.Value.(map[string]any)
		if !ok {
			return InvalidValue("An operation without a path needs an object of attributes as its value.")
		}
		for _, k := range slices.Sorted(maps.Keys(attrs)) { // the same order every time
			p, err := filter.ParsePath([]byte(k))
			if err != nil {
				continue // an attribute name the schema knows but no path can name: not ours
			}
			if err := apply(name, &p, attrs[k]); err != nil {
				return err
			}
		}
	}
	return nil
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
			return InvalidValue("userName cannot be removed: it is the account's address.")
		}
		return setString(&up.Email, value, "userName")
	case "emails":
		if remove {
			return nil // the address stays the userName
		}
		if sub == "value" {
			return setString(&up.Email, value, "emails.value")
		}
		if e := PickEmail(asList(value)); e != "" {
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
			return InvalidValue("active must be true or false.")
		}
		up.Disabled = new(!b)
		return nil
	case "externalid":
		if remove {
			up.ExternalID = new("")
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
		if g, ok := Lookup(m, "givenName").(string); ok {
			up.FirstName = &g
		}
		if f, ok := Lookup(m, "familyName").(string); ok {
			up.LastName = &f
		}
	}
	return nil
}

// setString sets *dst to value, a string.
func setString(dst **string, value any, what string) error {
	s, ok := value.(string)
	if !ok {
		return InvalidValue("%s must be a string.", what)
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

// GroupPatch is the group change of ops.
func GroupPatch(ops []scim.PatchOperation) (store.GroupUpdate, error) {
	var up store.GroupUpdate
	err := eachOp(ops, func(op string, path *filter.Path, value any) error { return applyGroup(&up, op, path, value) })
	return up, err
}

// applyGroup applies one operation on path to up.
func applyGroup(up *store.GroupUpdate, op string, path *filter.Path, value any) error {
	switch strings.ToLower(path.AttributePath.AttributeName) {
	case "displayname":
		if op == scim.PatchOperationRemove {
			return InvalidValue("displayName cannot be removed.")
		}
		return setString(&up.DisplayName, value, "displayName")
	case "externalid":
		if op == scim.PatchOperationRemove {
			up.ExternalID = new("")
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
	remove := op == scim.PatchOperationRemove
	if path.ValueExpression != nil {
		if !remove {
			return InvalidValue("Only remove takes a filtered members path.")
		}
		a, ok := path.ValueExpression.(*filter.AttributeExpression)
		var v string
		if ok {
			v, ok = a.CompareValue.(string)
		}
		if !ok || !strings.EqualFold(a.AttributePath.AttributeName, "value") || a.Operator != filter.EQ {
			return InvalidValue("A members path filters by value eq \"<user id>\".")
		}
		if id, err := memberID(v); err == nil {
			up.Remove = append(up.Remove, id)
		} // else no user of this bridge, so no member: nothing to remove
		return nil
	}
	if remove && value == nil {
		up.Members, up.Add = &[]int64{}, nil // every member goes
		return nil
	}
	ids, err := memberIDs(value, remove)
	if err != nil {
		return err
	}
	switch op {
	case scim.PatchOperationAdd:
		up.Add = append(up.Add, ids...)
	case scim.PatchOperationRemove:
		up.Remove = append(up.Remove, ids...)
	default:
		up.Members, up.Add, up.Remove = &ids, nil, nil
	}
	return nil
}

// MemberIDs reads a members value: a list of {"value": "<user id>"}.
func MemberIDs(value any) ([]int64, error) { return memberIDs(value, false) }

// memberIDs reads a members value; lenient skips a value that is no user
// id of this bridge (a removal of who cannot be a member changes nothing).
func memberIDs(value any, lenient bool) ([]int64, error) {
	ids := []int64{}
	for _, m := range asList(value) {
		o, _ := m.(map[string]any)
		v, ok := Lookup(o, "value").(string)
		if !ok {
			return nil, InvalidValue("A member is {\"value\": \"<user id>\"}.")
		}
		id, err := memberID(v)
		switch {
		case err == nil:
			ids = append(ids, id)
		case !lenient:
			return nil, err
		}
	}
	return ids, nil
}

// memberID reads a member's user id.
func memberID(v string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || id <= 0 {
		return 0, InvalidValue("Member %q is not a user id of this bridge.", v)
	}
	return id, nil
}

// The forms identity providers send that RFC 7644 does not, rewritten to
// the RFC's before the library reads them.

// NormalizeBody turns Entra ID's string booleans ("True", "False") for
// active into booleans: at the top of a user (POST, PUT) and in PATCH
// operations, with a path ("active") or without (a value object holding
// active). Anything else, and a body that is not a JSON object, is left
// as it came (the library then answers invalidSyntax or invalidValue).
func NormalizeBody(body []byte) []byte {
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return body
	}
	changed := fixActive(doc)
	for k, v := range doc {
		if !strings.EqualFold(k, "Operations") {
			continue
		}
		ops, _ := v.([]any)
		for _, op := range ops {
			m, ok := op.(map[string]any)
			if !ok {
				continue
			}
			if p, _ := Lookup(m, "path").(string); strings.EqualFold(strings.TrimSpace(p), "active") {
				changed = fixBool(m, "value") || changed
			}
			if val, ok := Lookup(m, "value").(map[string]any); ok {
				changed = fixActive(val) || changed
			}
		}
	}
	if !changed {
		return body
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return out
}

// fixActive turns m's active from a string boolean into a boolean.
func fixActive(m map[string]any) bool {
	for k := range m {
		if strings.EqualFold(k, "active") {
			return fixBool(m, k)
		}
	}
	return false
}

// fixBool turns m[key] from "true"/"false" (any case) into a boolean.
func fixBool(m map[string]any, key string) bool {
	for k, v := range m {
		if !strings.EqualFold(k, key) {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return false
		}
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true":
			m[k] = true
		case "false":
			m[k] = false
		default:
			return false
		}
		return true
	}
	return false
}

// Lookup is m[key] with key matched case-insensitively.
func Lookup(m map[string]any, key string) any {
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
}

// emailValueFilter is `emails[type eq "work"].value eq "…"`, which the
// issue's identity providers send and the RFC's grammar has not (a value
// path is not followed by a sub-attribute in a filter).
var emailValueFilter = regexp.MustCompile(`(?i)^\s*emails\[\s*type\s+eq\s+"([^"]*)"\s*\]\.value\s+eq\s+("(?:[^"\\]|\\.)*")\s*$`)

// NormalizeFilter rewrites that filter to the RFC's
// `emails[type eq "work" and value eq "…"]`.
func NormalizeFilter(r *http.Request) {
	q := r.URL.Query()
	f := q.Get("filter")
	m := emailValueFilter.FindStringSubmatch(f)
	if m == nil {
		return
	}
	q.Set("filter", `emails[type eq "`+m[1]+`" and value eq `+m[2]+`]`)
	r.URL.RawQuery = q.Encode()
}

// Bounds of a filter, checked before any parser sees it: the parser's cost
// grows steeply with nesting (4,000 levels took 2.5 s of CPU, 30,000 did
// not finish in 30 s) and it does not watch the request's context. An
// identity provider's filters are one or two comparisons.
const (
	MaxFilter      = 4096 // bytes
	MaxFilterDepth = 32   // nested parentheses and brackets
)

// ErrFilterTooLarge: a filter over MaxFilter bytes or MaxFilterDepth
// levels.
var ErrFilterTooLarge = errors.New("scimreq: filter too large")

// CheckFilter refuses a filter over the bounds, counting the nesting of
// parentheses and brackets outside quoted strings.
func CheckFilter(f string) error {
	if len(f) > MaxFilter {
		return fmt.Errorf("%w: %d bytes, over %d", ErrFilterTooLarge, len(f), MaxFilter)
	}
	depth, quoted, escaped := 0, false, false
	for _, r := range f {
		switch {
		case escaped:
			escaped = false
		case quoted && r == '\\':
			escaped = true
		case r == '"':
			quoted = !quoted
		case quoted:
		case r == '(' || r == '[':
			if depth++; depth > MaxFilterDepth {
				return fmt.Errorf("%w: nested deeper than %d", ErrFilterTooLarge, MaxFilterDepth)
			}
		case r == ')' || r == ']':
			depth--
		}
	}
	return nil
}

// SearchFilter is the filter of a POST .../.search body ("" if none or
// not JSON: the library answers that).
func SearchFilter(body []byte) string {
	var req struct {
		Filter string `json:"filter"`
	}
	_ = json.Unmarshal(body, &req)
	return req.Filter
}
