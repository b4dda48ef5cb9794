package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
)

// The console follows the authority that made the admin. An LMS trusted
// for school.example reaches that domain's local partner admin (by design
// of its trust), but it holds no admin rule: the session it makes lands
// in the editor and opens no console until the admin's password upgrades
// it. An LMS whose admin_roles grant the role at this launch opens the
// console at once.
func TestConsoleNeedsTheAuthorityThatMadeTheAdmin(t *testing.T) {
	plat := startLMS(t)
	plat.AddUser("dean", ltiplatformtest.User{Sub: "canvas-user-9", Email: "dean@school.example", GivenName: "Dee", FamilyName: "Dean",
		Roles: []string{ltiplatformtest.RoleAdministrator}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	plat.SetTool("http://" + ln.Addr().String())
	yaml := func(adminRoles string) string {
		return fmt.Sprintf("lti:\n  platforms:\n    - name: Springfield Canvas\n      issuer: %q\n      client_id: %q\n      deployment_ids: [%q]\n      auth_url: %q\n      jwks_url: %q\n      email_domains: [school.example]\n      admin_roles: [%s]\n",
			plat.Issuer, plat.ClientID, plat.DeploymentID, plat.AuthURL(), plat.JWKSURL(), adminRoles)
	}

	t.Run("an LMS without an admin rule", func(t *testing.T) {
		ta := startTestApp(t, testOptions{listener: ln, yaml: yaml("")})
		ta.addAccount(t, "teacher@school.example", true) // made admin locally, with a password
		b := ta.browser(t)
		r, _ := b.lmsLaunch(t, plat, "teacher")
		path, _ := b.follow(t, ta, r)
		require.Equal(t, "/editor", path, "the LMS's launch lands in the editor")

		for _, p := range []string{"/admin/", "/admin/accounts", "/admin/lti"} {
			got := b.get(p)
			assert.Equal(t, http.StatusSeeOther, got.status, p)
			assert.Equal(t, "/login?reauth=1&next="+url.QueryEscape(p), got.header.Get("Location"), p)
		}
		form := url.Values{"_csrf": {b.csrf("/")}}
		assert.Equal(t, http.StatusSeeOther, b.post("/admin/accounts/1/disable", form).status, "no console action either")
		login := b.get("/login?reauth=1&next=%2Fadmin%2F")
		require.Equal(t, http.StatusOK, login.status, "the password form, though a session stands")
		assert.Contains(t, login.body, "The way you arrived does not grant the admin role")
		assert.Contains(t, login.body, `name="password"`)

		// The password upgrades the session.
		up := b.post("/login", url.Values{"_csrf": {b.csrf("/login?reauth=1&next=%2Fadmin%2Faccounts")}, "email": {"teacher@school.example"},
			"password": {testPassword}, "next": {"/admin/accounts"}})
		require.Equal(t, http.StatusSeeOther, up.status, up.body)
		assert.Equal(t, "/admin/accounts", up.header.Get("Location"))
		assert.Equal(t, http.StatusOK, b.get("/admin/accounts").status)
	})

	t.Run("an LMS whose admin_roles grant the role", func(t *testing.T) {
		ln2, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		plat.SetTool("http://" + ln2.Addr().String())
		ta := startTestApp(t, testOptions{listener: ln2, yaml: yaml("Administrator")})
		ta.addAccount(t, "root@partner.example", true) // another admin: the dean is not the last
		b := ta.browser(t)
		r, _ := b.lmsLaunch(t, plat, "dean")
		path, _ := b.follow(t, ta, r)
		require.Equal(t, "/editor", path)
		got := b.get("/admin/accounts")
		assert.Equal(t, http.StatusOK, got.status, got.header.Get("Location"))
		assert.True(t, strings.Contains(got.body, "dean@school.example"))

		// The teacher's launch under the same LMS: its rule says no admin.
		teacher := ta.browser(t)
		r, _ = teacher.lmsLaunch(t, plat, "teacher")
		teacher.follow(t, ta, r)
		assert.Equal(t, http.StatusForbidden, teacher.get("/admin/accounts").status, "not an admin at all")
	})
}
