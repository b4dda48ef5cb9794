package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ssobridge/ssobridge/store"
)

// The groups the partner's identity provider keeps through SCIM, with
// their members.

const groupCols = "id, display_name, external_id, created_at, updated_at"

func scanGroup(row scanner) (store.Group, error) {
	var g store.Group
	var created, updated int64
	err := row.Scan(&g.ID, &g.DisplayName, &g.ExternalID, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Group{}, store.ErrNotFound
	}
	g.CreatedAt, g.UpdatedAt = fromMS(sql.NullInt64{Int64: created, Valid: true}), fromMS(sql.NullInt64{Int64: updated, Valid: true})
	return g, err
}

// CreateGroup stores a new group with its members.
func (s *sqlStore) CreateGroup(ctx context.Context, g store.Group) (store.Group, error) {
	g.DisplayName = strings.TrimSpace(g.DisplayName)
	if err := store.CheckGroupName(g.DisplayName); err != nil {
		return store.Group{}, err
	}
	if g.ID == "" {
		return store.Group{}, fmt.Errorf("%w: a group needs an id", store.ErrInvalid)
	}
	var out store.Group
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := ms(s.now())
		if _, err := s.txExec(ctx, tx, "INSERT INTO scim_groups (id, display_name, name_key, external_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)",
			g.ID, g.DisplayName, strings.ToLower(g.DisplayName), g.ExternalID, now); err != nil {
			if s.d.unique(err) {
				return fmt.Errorf("%w: %s", store.ErrGroupNameTaken, g.DisplayName)
			}
			return fmt.Errorf("groups: insert: %w", err)
		}
		if err := s.addMembers(ctx, tx, g.ID, g.Members); err != nil {
			return err
		}
		var err error
		out, err = s.groupTx(ctx, tx, g.ID)
		return err
	})
	return out, err
}

// addMembers adds accounts to a group in tx (those already in it stay).
func (s *sqlStore) addMembers(ctx context.Context, tx *sql.Tx, id string, members []int64) error {
	for _, m := range members {
		var exists bool
		if err := s.txRow(ctx, tx, "SELECT EXISTS (SELECT 1 FROM accounts WHERE id = $1)", m).Scan(&exists); err != nil {
			return fmt.Errorf("groups: read member: %w", err)
		}
		if !exists {
			return fmt.Errorf("%w: no account %d", store.ErrNotFound, m)
		}
		if _, err := s.txExec(ctx, tx, "INSERT INTO scim_group_members (group_id, account_id) VALUES ($1, $2) ON CONFLICT DO NOTHING", id, m); err != nil {
			return fmt.Errorf("groups: add member: %w", err)
		}
	}
	return nil
}

// querier reads, in a transaction or not.
type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// groupTx reads a group with its members through tx.
func (s *sqlStore) groupTx(ctx context.Context, tx querier, id string) (store.Group, error) {
	return s.readGroup(ctx, tx, id, "")
}

// readGroup reads a group with its members through tx, its row read with
// lock (s.d.forUpdate, or "").
func (s *sqlStore) readGroup(ctx context.Context, tx querier, id, lock string) (store.Group, error) {
	g, err := scanGroup(tx.QueryRowContext(ctx, s.d.bind("SELECT "+groupCols+" FROM scim_groups WHERE id = $1"+lock), id))
	if err != nil {
		return store.Group{}, err
	}
	rows, err := tx.QueryContext(ctx, s.d.bind("SELECT account_id FROM scim_group_members WHERE group_id = $1 ORDER BY account_id"), id)
	if err != nil {
		return store.Group{}, fmt.Errorf("groups: members: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var m int64
		if err := rows.Scan(&m); err != nil {
			return store.Group{}, err
		}
		g.Members = append(g.Members, m)
	}
	return g, rows.Err()
}

// GroupByID reads a group with its members.
func (s *sqlStore) GroupByID(ctx context.Context, id string) (store.Group, error) {
	return s.groupTx(ctx, s.db, id)
}

// ListGroups pages through groups by name, each with its members.
func (s *sqlStore) ListGroups(ctx context.Context, f store.GroupFilter) ([]store.Group, int, error) {
	var conds []string
	var args []any
	if f.DisplayName != "" {
		args = append(args, strings.ToLower(strings.TrimSpace(f.DisplayName)))
		conds = append(conds, "name_key = $1")
	}
	if f.ExternalID != "" {
		args = append(args, f.ExternalID)
		conds = append(conds, fmt.Sprintf("external_id = $%d", len(args)))
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	var total int
	if err := s.row(ctx, "SELECT count(*) FROM scim_groups"+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("groups: count: %w", err)
	}
	rows, err := s.query(ctx, "SELECT id FROM scim_groups"+where+" ORDER BY name_key"+page(len(args)), append(args, limit(f.Limit), max(f.Offset, 0))...)
	if err != nil {
		return nil, 0, fmt.Errorf("groups: list: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	var out []store.Group
	for _, id := range ids {
		g, err := s.groupTx(ctx, s.db, id)
		if errors.Is(err, store.ErrNotFound) {
			total-- // deleted since
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		out = append(out, g)
	}
	return out, total, nil
}

// UpdateGroup changes a group in one transaction.
func (s *sqlStore) UpdateGroup(ctx context.Context, id string, u store.GroupUpdate) (store.GroupChange, error) {
	var out store.GroupChange
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		before, err := s.lockedGroup(ctx, tx, id)
		if err != nil {
			return err
		}
		out.Before = before
		cur := before
		if u.DisplayName != nil {
			cur.DisplayName = strings.TrimSpace(*u.DisplayName)
			if err := store.CheckGroupName(cur.DisplayName); err != nil {
				return err
			}
		}
		if u.ExternalID != nil {
			cur.ExternalID = strings.TrimSpace(*u.ExternalID)
		}
		if _, err := s.txExec(ctx, tx, "UPDATE scim_groups SET display_name = $1, name_key = $2, external_id = $3, updated_at = $4 WHERE id = $5",
			cur.DisplayName, strings.ToLower(cur.DisplayName), cur.ExternalID, ms(s.now()), id); err != nil {
			if s.d.unique(err) {
				return fmt.Errorf("%w: %s", store.ErrGroupNameTaken, cur.DisplayName)
			}
			return fmt.Errorf("groups: update: %w", err)
		}
		if u.Members != nil {
			if _, err := s.txExec(ctx, tx, "DELETE FROM scim_group_members WHERE group_id = $1", id); err != nil {
				return fmt.Errorf("groups: replace members: %w", err)
			}
			if err := s.addMembers(ctx, tx, id, *u.Members); err != nil {
				return err
			}
		}
		if err := s.addMembers(ctx, tx, id, u.Add); err != nil {
			return err
		}
		for _, m := range slices.Compact(slices.Sorted(slices.Values(u.Remove))) {
			if _, err := s.txExec(ctx, tx, "DELETE FROM scim_group_members WHERE group_id = $1 AND account_id = $2", id, m); err != nil {
				return fmt.Errorf("groups: remove member: %w", err)
			}
		}
		out.After, err = s.groupTx(ctx, tx, id)
		return err
	})
	return out, err
}

// lockedGroup reads a group with its members in tx, its row locked (on
// PostgreSQL; SQLite's one writer serializes the writes) until tx ends.
func (s *sqlStore) lockedGroup(ctx context.Context, tx *sql.Tx, id string) (store.Group, error) {
	return s.readGroup(ctx, tx, id, s.d.forUpdate)
}

// DeleteGroup removes a group (its members' accounts stay) and returns
// it as it was.
func (s *sqlStore) DeleteGroup(ctx context.Context, id string) (store.Group, error) {
	var out store.Group
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		g, err := s.lockedGroup(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := s.txExec(ctx, tx, "DELETE FROM scim_groups WHERE id = $1", id); err != nil {
			return fmt.Errorf("groups: delete: %w", err)
		}
		out = g
		return nil
	})
	return out, err
}

// FollowAdminGroup sets the account's admin role to its membership of the
// group named group, read after that group's row is locked: a change to
// its members still uncommitted is waited for, and the membership read by
// the next statement (a fresh snapshot on PostgreSQL) is the latest.
func (s *sqlStore) FollowAdminGroup(ctx context.Context, id int64, group string) (bool, error) {
	var changed bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		changed = false
		member := false
		var gid string
		err := s.txRow(ctx, tx, "SELECT id FROM scim_groups WHERE name_key = $1"+s.d.forUpdate, strings.ToLower(strings.TrimSpace(group))).Scan(&gid)
		switch {
		case err == nil:
			var n int
			if err := s.txRow(ctx, tx, "SELECT count(*) FROM scim_group_members WHERE group_id = $1 AND account_id = $2", gid, id).Scan(&n); err != nil {
				return fmt.Errorf("groups: membership: %w", err)
			}
			member = n > 0
		case errors.Is(err, sql.ErrNoRows):
			// No group by that name: nobody is a member.
		default:
			return fmt.Errorf("groups: admin group: %w", err)
		}
		var admin bool
		if err := s.txRow(ctx, tx, "SELECT is_admin FROM accounts WHERE id = $1"+s.d.forUpdate, id).Scan(&admin); err != nil {
			if err = notFoundIfNoRows(err); errors.Is(err, store.ErrNotFound) {
				return err
			}
			return fmt.Errorf("accounts: read account: %w", err)
		}
		if admin == member {
			return nil
		}
		// The role changes by the rules every change of it keeps (the last
		// enabled admin stays admin).
		if err := s.adminChangeTx(ctx, tx, id, !member, false, setAdminQuery, member, ms(s.now()), id); err != nil {
			return err
		}
		changed = true
		return nil
	})
	return changed, err
}
