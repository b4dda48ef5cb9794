package accounts_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
)

// heldFollow is a store whose first FollowAdminGroup waits until released:
// the follow of one change to the admin group held back while another
// change runs, as two SCIM requests can interleave.
type heldFollow struct {
	store.Store
	once    sync.Once
	held    chan struct{}
	release chan struct{}
}

func (s *heldFollow) FollowAdminGroup(ctx context.Context, id int64, group string) (bool, error) {
	first := false
	s.once.Do(func() { first = true })
	if first {
		close(s.held)
		<-s.release
	}
	return s.Store.FollowAdminGroup(ctx, id, group)
}

// TestAdminGroupChangesThatRace: two changes to the admin group whose
// follows run in the wrong order leave the admin role as the group stands,
// never a role on someone who left the group (nor none on a member).
func TestAdminGroupChangesThatRace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		member bool // before the two changes; the first change flips it, the second flips it back
	}{
		{name: "added, then removed while the add's follow is held", member: false},
		{name: "removed, then added while the remove's follow is held", member: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := openStore(t)
			var err error
			_, err = db.CreateAccount(ctx, store.NewAccount{Email: "boss@example.com", FirstName: "Bo", LastName: "Ss", PasswordHash: "h", Admin: true})
			require.NoError(t, err)
			ada, err := db.CreateAccount(ctx, store.NewAccount{Email: "ada@example.com", FirstName: "Ada", LastName: "Lovelace", PasswordHash: "h"})
			require.NoError(t, err)
			plain := &accounts.Directory{Store: db, AdminGroup: "Bridge Admins"}
			var members []int64
			if tc.member {
				members = []int64{ada.ID}
			}
			g, err := plain.CreateGroup(ctx, store.Group{DisplayName: "Bridge Admins", Members: members})
			require.NoError(t, err)
			before, err := db.AccountByID(ctx, ada.ID)
			require.NoError(t, err)
			require.Equal(t, tc.member, before.Admin, "the group's members are admins to start with")

			add, remove := store.GroupUpdate{Add: []int64{ada.ID}}, store.GroupUpdate{Remove: []int64{ada.ID}}
			first, second := add, remove
			if tc.member {
				first, second = remove, add
			}
			held := &heldFollow{Store: db, held: make(chan struct{}), release: make(chan struct{})}
			dir := &accounts.Directory{Store: held, AdminGroup: "Bridge Admins"}
			done := make(chan error, 1)
			go func() {
				_, err := dir.UpdateGroup(ctx, g.ID, first)
				done <- err
			}()
			<-held.held // the first change is committed; its follow waits
			_, err = dir.UpdateGroup(ctx, g.ID, second)
			require.NoError(t, err)
			close(held.release)
			require.NoError(t, <-done)

			now, err := db.GroupByID(ctx, g.ID)
			require.NoError(t, err)
			assert.Equal(t, tc.member, len(now.Members) == 1, "back where it started")
			a, err := db.AccountByID(ctx, ada.ID)
			require.NoError(t, err)
			assert.Equal(t, tc.member, a.Admin, "the admin role is the group's membership as it stands")
		})
	}
}

// cutOff is a store that ends the request's context the moment a group's
// change commits: the IdP's connection reset while the bridge answers.
type cutOff struct {
	store.Store
	cancel context.CancelFunc
}

func (s *cutOff) UpdateGroup(ctx context.Context, id string, u store.GroupUpdate) (store.GroupChange, error) {
	ch, err := s.Store.UpdateGroup(ctx, id, u)
	s.cancel()
	return ch, err
}

// A member removed from the admin group by a request whose connection is
// cut right after the change commits is no longer an admin: the follow-up
// does not run on the request's context.
func TestAdminGroupRemovalCutOffStillTakesTheRole(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	var err error
	_, err = db.CreateAccount(ctx, store.NewAccount{Email: "boss@example.com", FirstName: "Bo", LastName: "Ss", PasswordHash: "h", Admin: true})
	require.NoError(t, err)
	ada, err := db.CreateAccount(ctx, store.NewAccount{Email: "ada@example.com", FirstName: "Ada", LastName: "L", PasswordHash: "h", ManagedBy: store.ManagedBySCIM})
	require.NoError(t, err)
	plain := &accounts.Directory{Store: db, AdminGroup: "Bridge Admins"}
	g, err := plain.CreateGroup(ctx, store.Group{DisplayName: "Bridge Admins", Members: []int64{ada.ID}})
	require.NoError(t, err)
	a, err := db.AccountByID(ctx, ada.ID)
	require.NoError(t, err)
	require.True(t, a.Admin)

	reqCtx, cancel := context.WithCancel(ctx)
	cut := &accounts.Directory{Store: &cutOff{Store: db, cancel: cancel}, AdminGroup: "Bridge Admins"}
	_, err = cut.UpdateGroup(reqCtx, g.ID, store.GroupUpdate{Remove: []int64{ada.ID}})
	require.NoError(t, err)
	a, err = db.AccountByID(ctx, ada.ID)
	require.NoError(t, err)
	assert.False(t, a.Admin, "the role followed the committed change")
}

// Reconcile, run at start, repairs what a crash between a change and its
// follow-up left: a member without the role gets it, a SCIM-managed admin
// outside the group loses it; accounts the console manages outside the
// group keep theirs.
func TestReconcileBringsRolesInLineWithTheGroup(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	var err error
	local, err := db.CreateAccount(ctx, store.NewAccount{Email: "boss@example.com", FirstName: "Bo", LastName: "Ss", PasswordHash: "h", Admin: true})
	require.NoError(t, err)
	member, err := db.CreateAccount(ctx, store.NewAccount{Email: "m@example.com", FirstName: "M", LastName: "M", PasswordHash: "h", ManagedBy: store.ManagedBySCIM})
	require.NoError(t, err)
	left, err := db.CreateAccount(ctx, store.NewAccount{Email: "l@example.com", FirstName: "L", LastName: "L", PasswordHash: "h", ManagedBy: store.ManagedBySCIM, Admin: true})
	require.NoError(t, err)
	// The store as a crash left it: the group changed, no role followed.
	_, err = db.CreateGroup(ctx, store.Group{ID: "g", DisplayName: "bridge admins", Members: []int64{member.ID}})
	require.NoError(t, err)

	d := &accounts.Directory{Store: db, AdminGroup: "Bridge Admins"}
	require.NoError(t, d.Reconcile(ctx))
	for _, tc := range []struct {
		id    int64
		admin bool
	}{{local.ID, true}, {member.ID, true}, {left.ID, false}} {
		a, err := db.AccountByID(ctx, tc.id)
		require.NoError(t, err)
		assert.Equal(t, tc.admin, a.Admin, a.Email)
	}
}

// The IdP takes over an account it does not manage only as the admission
// allows (scim.email_domains), never a local admin while scim.admin_group
// is empty; a refusal changes nothing.
func TestTheIdPTakesOverOnlyWhatItMay(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	var err error
	admin, err := db.CreateAccount(ctx, store.NewAccount{Email: "boss@example.com", FirstName: "Bo", LastName: "Ss", PasswordHash: "h", Admin: true})
	require.NoError(t, err)
	plain, err := db.CreateAccount(ctx, store.NewAccount{Email: "ada@example.com", FirstName: "Ada", LastName: "L", PasswordHash: "h"})
	require.NoError(t, err)
	refuse := func(context.Context, store.Account) error { return errors.New("outside scim.email_domains") }
	allow := func(context.Context, store.Account) error { return nil }

	d := &accounts.Directory{Store: db, MayAdopt: allow}
	_, err = d.UpdateUser(ctx, admin, store.AccountUpdate{FirstName: new("Mallory")})
	require.ErrorIs(t, err, accounts.ErrNotTheIdPs, "no admin group: a local admin is not the IdP's")
	require.ErrorIs(t, d.DeleteUser(ctx, admin), accounts.ErrNotTheIdPs)

	d = &accounts.Directory{Store: db, MayAdopt: refuse}
	_, err = d.UpdateUser(ctx, plain, store.AccountUpdate{FirstName: new("Mallory")})
	require.ErrorIs(t, err, accounts.ErrNotTheIdPs)
	a, err := db.AccountByID(ctx, plain.ID)
	require.NoError(t, err)
	assert.Equal(t, "Ada", a.FirstName, "nothing changed")
	assert.Empty(t, a.ManagedBy)

	d = &accounts.Directory{Store: db, MayAdopt: allow}
	a, err = d.UpdateUser(ctx, plain, store.AccountUpdate{FirstName: new("Adaline")})
	require.NoError(t, err)
	assert.Equal(t, store.ManagedBySCIM, a.ManagedBy, "taken over")
	_, err = d.UpdateUser(ctx, a, store.AccountUpdate{FirstName: new("Ada")})
	require.NoError(t, err, "its own account from now on")
}

// openStore is a SQLite store of the test's own.
func openStore(t *testing.T) *sqlstore.SQLite {
	t.Helper()
	db, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "ssobridge.db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}
