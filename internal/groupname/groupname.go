// Package groupname is the one rule for comparing the name of an admin
// group (oidc.admin_group, saml.admin_group, scim.admin_group) with the
// groups an identity provider names: spaces around a name do not count,
// and letters compare without case, so an IdP that sends "bridge admins"
// and one that sends "Bridge Admins" grant the same role.
package groupname

import "strings"

// Equal reports whether two group names name the same group.
func Equal(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

// In reports whether groups hold the group named want ("" is never held).
func In(groups []string, want string) bool {
	if strings.TrimSpace(want) == "" {
		return false
	}
	for _, g := range groups {
		if Equal(g, want) {
			return true
		}
	}
	return false
}
