package e2e

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

// Who may arrive as whom, tried from outside as an attacker with a second
// registered LMS would, on one bridge with two LMSs (no email_domains:
// the default), the portal's handoff and SCIM (no admin group, no
// domains): no way in reaches the partner admin, a learner of one LMS
// never lands in the account the other made, and SCIM takes over neither.
func TestNoWayInIsAMasterKey(t *testing.T) {
	a, b := startLMS(t), startLMS(t)
	const adminEmail = "admin@partner.example"
	mallory := ltiplatformtest.User{Sub: "b-666", Email: adminEmail, GivenName: "Mal", FamilyName: "Lory", Roles: []string{ltiplatformtest.RoleLearner}}
	b.AddUser("mallory", mallory)
	fakeAlice := ltiplatformtest.User{Sub: "b-777", Email: ltiPupil.Email, GivenName: "Not", FamilyName: "Pia", Roles: []string{ltiplatformtest.RoleLearner}}
	b.AddUser("fake-pupil", fakeAlice)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	a.SetTool("http://" + ln.Addr().String())
	b.SetTool("http://" + ln.Addr().String())
	second := strings.Replace(strings.TrimPrefix(ltiYAML(b, b.JWKSURL()), "lti:\n  platforms:\n"), "Springfield Canvas", "Shelbyville Moodle", 1)
	yaml := ltiYAML(a, a.JWKSURL()) + second + "scim:\n  enabled: true\n"
	ta := startTestApp(t, testOptions{listener: ln, yaml: yaml, env: []string{"SSOBRIDGE_SCIM_TOKEN=" + scimToken}})
	admin := ta.addAccount(t, adminEmail, true)
	// Both LMSs' key sets are read in the background at start: launch
	// once they are.
	require.Eventually(t, func() bool { return strings.Contains(ta.browser(t).get("/readyz").body, `"lti":"ok"`) },
		10*time.Second, 20*time.Millisecond, "the key sets read")

	t.Run("the second LMS's learner claiming the admin's address", func(t *testing.T) {
		br := ta.browser(t)
		r, _ := br.lmsLaunch(t, b, "mallory")
		assert.Equal(t, http.StatusForbidden, r.status, r.body)
		assert.Contains(t, r.body, `data-class="arrival-refused"`)
		assert.NotEqual(t, http.StatusOK, br.get("/admin/accounts").status, "no console")
		assert.Equal(t, http.StatusSeeOther, br.get("/").status, "no session")
		assert.Empty(t, ta.sim.Users(adminEmail), "no editor opened for the admin")
	})

	t.Run("a learner of one LMS never lands in the other's account", func(t *testing.T) {
		r, _ := ta.browser(t).lmsLaunch(t, a, "pupil")
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		pia, err := ta.store.AccountByEmail(t.Context(), ltiPupil.Email)
		require.NoError(t, err)

		br := ta.browser(t)
		r, _ = br.lmsLaunch(t, b, "fake-pupil")
		assert.Equal(t, http.StatusForbidden, r.status, r.body)
		assert.Equal(t, http.StatusSeeOther, br.get("/").status, "no session")
		_, err = ta.store.AccountOfIdentity(t.Context(), lti.SourceID(b.Issuer, b.ClientID), fakeAlice.Sub)
		assert.ErrorIs(t, err, store.ErrNotFound, "B's subject is linked to nothing")
		ids, err := ta.store.IdentitiesOf(t.Context(), pia.ID)
		require.NoError(t, err)
		require.Len(t, ids, 1)
		assert.Equal(t, lti.SourceID(a.Issuer, a.ClientID), ids[0].Source)
	})

	t.Run("SCIM without an admin group or domains takes over neither", func(t *testing.T) {
		for _, id := range []int64{admin.ID} {
			status, body := scimCall(t, ta, "PATCH", fmt.Sprintf("/Users/%d", id), patchOp+`[{"op":"Replace","path":"active","value":false}]}`)
			assert.Equal(t, http.StatusForbidden, status, "%v", body)
			status, _ = scimCall(t, ta, "DELETE", fmt.Sprintf("/Users/%d", id), "")
			assert.Equal(t, http.StatusForbidden, status)
		}
		got, err := ta.store.AccountByID(t.Context(), admin.ID)
		require.NoError(t, err)
		assert.True(t, got.Admin && !got.Disabled && got.ManagedBy == "", "the admin is as it was")
	})
}
