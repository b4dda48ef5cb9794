package groupname

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIn(t *testing.T) {
	for _, tc := range []struct {
		groups []string
		want   string
		in     bool
	}{
		{[]string{"Bridge Admins"}, "Bridge Admins", true},
		{[]string{"bridge admins"}, "Bridge Admins", true},
		{[]string{" Bridge Admins "}, "Bridge Admins", true},
		{[]string{"Bridge Admins Team"}, "Bridge Admins", false},
		{[]string{"Admins"}, "Bridge Admins", false},
		{[]string{""}, "", false},
		{nil, "Bridge Admins", false},
	} {
		assert.Equal(t, tc.in, In(tc.groups, tc.want), "%q in %q", tc.want, tc.groups)
	}
}
