package lti

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// admin_roles match whole role URIs; a short name is the institution
// role of that name, never a context role, a sub-role or another
// vocabulary's role with the same ending.
func TestHoldsAnyMatchesWholeRoles(t *testing.T) {
	const (
		institutionAdmin = "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator"
		systemAdmin      = "http://purl.imsglobal.org/vocab/lis/v2/system/person#Administrator"
		courseAdmin      = "http://purl.imsglobal.org/vocab/lis/v2/membership#Administrator"
		learnerSubAdmin  = "http://purl.imsglobal.org/vocab/lis/v2/membership/Learner#Administrator"
		vendor           = "https://vendor.example/roles/Administrator"
		instructor       = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
	)
	for _, tc := range []struct {
		name  string
		roles []string
		want  []string
		holds bool
	}{
		{"short name: the institution role", []string{instructor, institutionAdmin}, []string{"Administrator"}, true},
		{"short name: not a course's administrator", []string{courseAdmin}, []string{"Administrator"}, false},
		{"short name: not a learner's sub-role", []string{learnerSubAdmin}, []string{"Administrator"}, false},
		{"short name: not a vendor's role", []string{vendor}, []string{"Administrator"}, false},
		{"short name: not the system role", []string{systemAdmin}, []string{"Administrator"}, false},
		{"short name: not the bare word", []string{"Administrator"}, []string{"Administrator"}, false},
		{"a whole URI matches itself", []string{systemAdmin}, []string{systemAdmin}, true},
		{"a whole URI matches nothing else", []string{institutionAdmin}, []string{systemAdmin}, false},
		{"case counts", []string{"http://purl.imsglobal.org/vocab/lis/v2/institution/person#administrator"}, []string{"Administrator"}, false},
		{"no admin_roles", []string{institutionAdmin}, nil, false},
	} {
		assert.Equal(t, tc.holds, holdsAny(tc.roles, tc.want), tc.name)
	}
}
