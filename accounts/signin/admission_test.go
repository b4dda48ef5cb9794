package signin_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// The sources of one bridge, as an attacker with a second LMS meets them.
var (
	lmsA   = signin.Source{ID: "lti:https://a.lms.example", Name: "LTI: A", Key: "lti.platforms[0]", CreateAccounts: true}
	lmsB   = signin.Source{ID: "lti:https://b.lms.example", Name: "LTI: B", Key: "lti.platforms[1]", CreateAccounts: true}
	oidcIn = signin.Source{ID: "oidc:https://idp.partner.example", Name: "identity provider", Key: "oidc", CreateAccounts: true,
		EmailDomains: []string{"Partner.example"}, AdminAuthority: true}
	closed = signin.Source{ID: "portal:https://portal.example", Name: "portal", Key: "portal", CreateAccounts: false}
)

type admissionFixture struct {
	adm *signin.Admission
	st  store.Store
	// admin has a password and the admin role; imported has neither
	// (CSV import); scimUser is managed by SCIM.
	admin, imported, scimUser store.Account
}

func setupAdmission(t *testing.T) *admissionFixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	f := &admissionFixture{adm: signin.NewAdmission(st, nil), st: st}
	f.admin, err = st.CreateAccount(ctx, store.NewAccount{Email: "admin@partner.example", FirstName: "A", LastName: "D", PasswordHash: "$argon2id$x", Admin: true})
	require.NoError(t, err)
	f.imported, err = st.CreateAccount(ctx, store.NewAccount{Email: "imported@school.example", FirstName: "I", LastName: "M", PasswordHash: passhash.NoPassword})
	require.NoError(t, err)
	f.scimUser, err = st.CreateAccount(ctx, store.NewAccount{Email: "okta@partner.example", FirstName: "O", LastName: "K", PasswordHash: passhash.NoPassword, ManagedBy: store.ManagedBySCIM})
	require.NoError(t, err)
	return f
}

func arrive(src signin.Source, sub, email string) signin.Arrival {
	return signin.Arrival{Source: src, Subject: sub, Email: email, Names: accounts.Names{Full: "Some One"}}
}

func TestAdmitAnAddressReachesOnlyWhatItsSourceIsTrustedFor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		arrival signin.Arrival
		want    error  // nil: admitted
		account string // the address of the account admitted
	}{
		{"an open LMS does not reach the partner admin", arrive(lmsB, "evil", "admin@partner.example"), signin.ErrNotAdoptable, ""},
		{"an open LMS does not reach a SCIM account", arrive(lmsB, "evil", "okta@partner.example"), signin.ErrNotAdoptable, ""},
		{"an open LMS adopts an imported account without password or link", arrive(lmsA, "s1", "imported@school.example"), nil, "imported@school.example"},
		{"an open LMS creates a new account", arrive(lmsA, "s2", "new@school.example"), nil, "new@school.example"},
		{"a trusted IdP reaches the admin of its domain", arrive(oidcIn, "x", "ADMIN@partner.example"), nil, "admin@partner.example"},
		{"a trusted IdP reaches the SCIM account of its domain", arrive(oidcIn, "y", "okta@partner.example"), nil, "okta@partner.example"},
		{"a trusted IdP is refused outside its domains", arrive(oidcIn, "z", "imported@school.example"), signin.ErrNotTrusted, ""},
		{"a trusted IdP does not create outside its domains", arrive(oidcIn, "z", "new@elsewhere.example"), signin.ErrNotTrusted, ""},
		{"a subdomain is another domain", arrive(oidcIn, "z", "a@sub.partner.example"), signin.ErrNotTrusted, ""},
		{"a source that creates nothing", arrive(closed, "p", "nobody@school.example"), signin.ErrNoAccount, ""},
		{"no address", arrive(lmsA, "s3", "not an address"), signin.ErrBadAddress, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setupAdmission(t)
			ctx := context.Background()
			before, n, err := f.st.ListAccounts(ctx, store.AccountFilter{})
			require.NoError(t, err)
			// Check says beforehand what Admit will decide, and changes nothing.
			checked := f.adm.Check(ctx, tc.arrival)
			if tc.want != nil {
				assert.ErrorIs(t, checked, tc.want)
			} else {
				assert.NoError(t, checked)
			}
			unchanged, _, err := f.st.ListAccounts(ctx, store.AccountFilter{})
			require.NoError(t, err)
			assert.Equal(t, before, unchanged, "Check makes and changes nothing")
			_, err = f.st.AccountOfIdentity(ctx, tc.arrival.Source.ID, tc.arrival.Subject)
			assert.ErrorIs(t, err, store.ErrNotFound, "Check links nothing")
			acct, err := f.adm.Admit(ctx, tc.arrival)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
				after, m, err := f.st.ListAccounts(ctx, store.AccountFilter{})
				require.NoError(t, err)
				assert.Equal(t, n, m, "a refusal makes no account")
				assert.Equal(t, before, after, "a refusal changes no account")
				_, err = f.st.AccountOfIdentity(ctx, tc.arrival.Source.ID, tc.arrival.Subject)
				assert.ErrorIs(t, err, store.ErrNotFound, "a refusal links nothing")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.account, acct.Email)
			id, err := f.st.AccountOfIdentity(ctx, tc.arrival.Source.ID, tc.arrival.Subject)
			require.NoError(t, err)
			assert.Equal(t, acct.ID, id, "the identity is linked to the account admitted")
		})
	}
}

func TestAdmitKeepsOnePlatformsLearnersFromAnothers(t *testing.T) {
	f := setupAdmission(t)
	ctx := context.Background()
	alice, err := f.adm.Admit(ctx, arrive(lmsA, "alice-a", "alice@school.example"))
	require.NoError(t, err)

	_, err = f.adm.Admit(ctx, arrive(lmsB, "mallory-b", "alice@school.example"))
	require.ErrorIs(t, err, signin.ErrNotAdoptable, "B's learner claiming alice's address")
	_, err = f.adm.Admit(ctx, arrive(lmsA, "mallory-a", "alice@school.example"))
	require.ErrorIs(t, err, signin.ErrNotAdoptable, "another subject of the same open LMS")

	again, err := f.adm.Admit(ctx, arrive(lmsA, "alice-a", "alice.renamed@school.example"))
	require.NoError(t, err)
	assert.Equal(t, alice.ID, again.ID, "a linked identity wins whatever its address says now")
	ids, err := f.st.IdentitiesOf(ctx, alice.ID)
	require.NoError(t, err)
	assert.Len(t, ids, 1, "nobody else was linked")
}

func TestAdmitRenamesKeepOneAccountForEverySource(t *testing.T) {
	for _, src := range []signin.Source{lmsA, oidcIn, {ID: "saml:https://idp.example", Name: "SAML", Key: "saml", CreateAccounts: true, EmailDomains: []string{"partner.example", "partner.org"}}} {
		t.Run(src.Key, func(t *testing.T) {
			f := setupAdmission(t)
			ctx := context.Background()
			first, err := f.adm.Admit(ctx, arrive(src, "p-1", "pat@partner.example"))
			require.NoError(t, err)
			second, err := f.adm.Admit(ctx, arrive(src, "p-1", "pat.smith@partner.org"))
			require.NoError(t, err)
			assert.Equal(t, first.ID, second.ID)
		})
	}
}

func TestAdmitRefusesADisabledAccount(t *testing.T) {
	f := setupAdmission(t)
	ctx := context.Background()
	a, err := f.adm.Admit(ctx, arrive(lmsA, "d", "dis@school.example"))
	require.NoError(t, err)
	require.NoError(t, f.st.SetDisabled(ctx, a.ID, true))
	_, err = f.adm.Admit(ctx, arrive(lmsA, "d", "dis@school.example"))
	require.ErrorIs(t, err, signin.ErrDisabled)
	_, err = f.adm.Admit(ctx, arrive(oidcIn, "x", "admin@partner.example"))
	require.NoError(t, err, "the admin is enabled")
}

func TestAdmitTheAdminRoleBelongsToOnePlace(t *testing.T) {
	f := setupAdmission(t)
	ctx := context.Background()
	admin := func(email string) bool {
		a, err := f.st.AccountByEmail(ctx, email)
		require.NoError(t, err)
		return a.Admin
	}
	noAuthority := lmsA
	noAuthority.EmailDomains = []string{"partner.example"}

	// A source without an admin rule neither grants nor removes.
	a := arrive(noAuthority, "t", "teacher@partner.example")
	a.Admin = true
	_, err := f.adm.Admit(ctx, a)
	require.NoError(t, err)
	assert.False(t, admin("teacher@partner.example"))
	_, err = f.adm.Admit(ctx, arrive(noAuthority, "adm", "admin@partner.example"))
	require.NoError(t, err)
	assert.True(t, admin("admin@partner.example"))

	// The IdP's group grants and removes.
	a = arrive(oidcIn, "t2", "teacher@partner.example")
	a.Admin = true
	_, err = f.adm.Admit(ctx, a)
	require.NoError(t, err)
	assert.True(t, admin("teacher@partner.example"))
	a.Admin = false
	_, err = f.adm.Admit(ctx, a)
	require.NoError(t, err)
	assert.False(t, admin("teacher@partner.example"))

	// Never on an account SCIM manages.
	a = arrive(oidcIn, "o", "okta@partner.example")
	a.Admin = true
	_, err = f.adm.Admit(ctx, a)
	require.NoError(t, err)
	assert.False(t, admin("okta@partner.example"), "SCIM's group alone decides")

	// The last admin keeps the role.
	a = arrive(oidcIn, "x", "admin@partner.example")
	_, err = f.adm.Admit(ctx, a)
	require.NoError(t, err)
	assert.True(t, admin("admin@partner.example"), "the last admin stays")
}

func TestAdmitTwoFirstArrivalsAtOnceMakeOneAccount(t *testing.T) {
	f := setupAdmission(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	ids := make([]int64, 8)
	errs := make([]error, 8)
	for i := range ids {
		wg.Go(func() {
			a, err := f.adm.Admit(ctx, arrive(lmsA, "same", "twin@school.example"))
			ids[i], errs[i] = a.ID, err
		})
	}
	wg.Wait()
	for i := range ids {
		require.NoError(t, errs[i])
		assert.Equal(t, ids[0], ids[i])
	}
}

func TestAdmitAnAccountRemovedSinceItsLinkIsAFirstArrival(t *testing.T) {
	f := setupAdmission(t)
	ctx := context.Background()
	a, err := f.adm.Admit(ctx, arrive(lmsA, "gone", "gone@school.example"))
	require.NoError(t, err)
	require.NoError(t, f.st.DeleteAccount(ctx, a.ID))
	b, err := f.adm.Admit(ctx, arrive(lmsA, "gone", "gone@school.example"))
	require.NoError(t, err)
	assert.NotEqual(t, a.ID, b.ID)
}
