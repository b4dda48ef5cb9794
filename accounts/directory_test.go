package accounts_test

import (
	"context"
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
			db, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "ssobridge.db"), nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = db.Close() })
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
