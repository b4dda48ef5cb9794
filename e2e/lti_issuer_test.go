package e2e

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/ltiplatformtest"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

// platformYAML is one lti.platforms entry for plat.
func platformYAML(name string, plat *ltiplatformtest.Platform, domains string) string {
	return fmt.Sprintf("    - name: %s\n      issuer: %q\n      client_id: %q\n      deployment_ids: [%q]\n      auth_url: %q\n      jwks_url: %q\n      email_domains: [%s]\n",
		name, plat.Issuer, plat.ClientID, plat.DeploymentID, plat.AuthURL(), plat.JWKSURL(), domains)
}

// An LMS is (issuer, client_id): two schools on one hosted LMS share its
// issuer and are told apart by their client ids. Registered separately
// with their own email_domains, each is a source of its own: a learner of
// the second whose LMS subject is the same as a learner's of the first
// lands in an account of their own, never the first's; an address of the
// first school's domain is refused through the second.
func TestTwoLMSsOnOneIssuer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	tool := "http://" + ln.Addr().String()
	schoolA := ltiplatformtest.Start(t, tool)
	schoolB := ltiplatformtest.Start(t, tool)
	schoolB.Issuer, schoolB.ClientID = schoolA.Issuer, "client-of-school-b" // one hosted LMS, two customers
	schoolA.AddUser("ada", ltiplatformtest.User{Sub: "user-1", Email: "ada@a.example", GivenName: "Ada", FamilyName: "A", Roles: []string{ltiplatformtest.RoleLearner}})
	schoolB.AddUser("eve", ltiplatformtest.User{Sub: "user-1", Email: "eve@b.example", GivenName: "Eve", FamilyName: "B", Roles: []string{ltiplatformtest.RoleLearner}})
	schoolB.AddUser("mallory", ltiplatformtest.User{Sub: "user-2", Email: "ada@a.example", GivenName: "Ada?", FamilyName: "A", Roles: []string{ltiplatformtest.RoleLearner}})
	ta := startTestApp(t, testOptions{listener: ln, yaml: "lti:\n  platforms:\n" + platformYAML("School A", schoolA, "a.example") + platformYAML("School B", schoolB, "b.example")})

	a := ta.browser(t)
	r, _ := a.lmsLaunch(t, schoolA, "ada")
	_, editor := a.follow(t, ta, r)
	assert.Contains(t, editor, "Signed in as Ada A")

	b := ta.browser(t)
	r, _ = b.lmsLaunch(t, schoolB, "eve")
	_, editor = b.follow(t, ta, r)
	assert.Contains(t, editor, "Signed in as Eve B", "the same subject at another school is another person")
	ada, err := ta.store.AccountByEmail(t.Context(), "ada@a.example")
	require.NoError(t, err)
	eve, err := ta.store.AccountByEmail(t.Context(), "eve@b.example")
	require.NoError(t, err)
	assert.NotEqual(t, ada.ID, eve.ID)
	for acct, src := range map[int64]string{ada.ID: lti.SourceID(schoolA.Issuer, schoolA.ClientID), eve.ID: lti.SourceID(schoolB.Issuer, schoolB.ClientID)} {
		got, err := ta.store.AccountOfIdentity(t.Context(), src, "user-1")
		require.NoError(t, err)
		assert.Equal(t, acct, got)
	}

	m := ta.browser(t)
	r, _ = m.lmsLaunch(t, schoolB, "mallory")
	assert.Equal(t, http.StatusForbidden, r.status, "school B is not trusted for a.example")
	assert.Equal(t, http.StatusSeeOther, m.get("/").status, "and no session")
}

// Identities kept under an issuer alone (before this version) move to
// its one registration at the next start, and their people land in their
// accounts as before.
func TestLTIIdentitiesMoveToTheirRegistration(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	plat := startLMS(t)
	plat.SetTool("http://" + ln.Addr().String())
	dsn := filepath.Join(t.TempDir(), "data", "ssobridge.db")
	first := startTestApp(t, testOptions{dsn: dsn})
	acct := first.addNamedAccount(t, "pia@elsewhere.example", "Pia", "Pupil", false)
	require.NoError(t, first.store.LinkIdentity(t.Context(), lti.LegacySourceID(plat.Issuer), ltiPupil.Sub, acct.ID))
	first.stop()

	ta := startTestApp(t, testOptions{dsn: dsn, listener: ln, yaml: ltiYAML(plat, plat.JWKSURL())})
	got, err := ta.store.AccountOfIdentity(t.Context(), lti.SourceID(plat.Issuer, plat.ClientID), ltiPupil.Sub)
	require.NoError(t, err)
	assert.Equal(t, acct.ID, got)
	assert.Contains(t, ta.logs.String(), "LTI: identities moved")
	b := ta.browser(t)
	r, _ := b.lmsLaunch(t, plat, "pupil")
	_, editor := b.follow(t, ta, r)
	assert.Contains(t, editor, "Signed in as Pia Pupil", "the linked account, whatever the launch's address says")
}
