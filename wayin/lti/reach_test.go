package lti_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

// LTI is ready over https or on loopback (a trial, said so); plain http
// anywhere else is not, and says what to set.
func TestReach(t *testing.T) {
	for _, tc := range []struct {
		addr, public string
		ok           bool
		says         string
	}{
		{"127.0.0.1:8080", "", true, "loopback: only browsers on this machine reach http://127.0.0.1:8080"},
		{"localhost:8080", "", true, "loopback"},
		{":8080", "", false, "served over plain http at http://localhost:8080"},
		{"0.0.0.0:8080", "", false, "plain http"},
		{"10.0.0.5:8080", "", false, "plain http at http://10.0.0.5:8080"},
		{":8080", "http://127.0.0.1:8080", true, "loopback"},
		{":8080", "http://sso.partner.example", false, "set server.public_url to the https URL the LMS reaches"},
		{":8080", "https://sso.partner.example", true, ""},
	} {
		cfg := config.Defaults()
		cfg.Server.Addr, cfg.Server.PublicURL = tc.addr, tc.public
		ok, note := lti.Reach(cfg)
		assert.Equal(t, tc.ok, ok, "%s %s", tc.addr, tc.public)
		if tc.says == "" {
			assert.Empty(t, note)
		} else {
			assert.Contains(t, note, tc.says, "%s %s", tc.addr, tc.public)
		}
	}
}
