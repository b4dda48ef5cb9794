package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ssobridge/ssobridge/store"
)

// CreateTicket stores a waiting ticket.
func (s *sqlStore) CreateTicket(ctx context.Context, t store.Ticket) error {
	_, err := s.exec(ctx, `INSERT INTO launch_tickets (id, account_id, session_id, return_to, arrived_at, eta, owner, seen_at, state, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, t.ID, t.AccountID, t.SessionID, t.ReturnTo, ms(t.ArrivedAt), ms(t.ETA), t.Owner, ms(t.SeenAt), store.TicketWaiting, ms(t.ExpiresAt))
	if err != nil {
		return fmt.Errorf("accounts: create ticket: %w", err)
	}
	return nil
}

const ticketColumns = "id, account_id, session_id, return_to, arrived_at, eta, owner, seen_at, state, sealed, failure, expires_at"

func scanTicket(sc interface{ Scan(...any) error }) (store.Ticket, error) {
	var t store.Ticket
	var arrived, eta, seen, expires int64
	err := sc.Scan(&t.ID, &t.AccountID, &t.SessionID, &t.ReturnTo, &arrived, &eta, &t.Owner, &seen, &t.State, &t.Sealed, &t.Failure, &expires)
	if err != nil {
		return store.Ticket{}, notFoundIfNoRows(err)
	}
	t.ArrivedAt, t.ETA, t.SeenAt, t.ExpiresAt = time.UnixMilli(arrived).UTC(), time.UnixMilli(eta).UTC(), time.UnixMilli(seen).UTC(), time.UnixMilli(expires).UTC()
	return t, nil
}

// TicketByID reads a ticket (ErrNotFound once taken or pruned).
func (s *sqlStore) TicketByID(ctx context.Context, id string) (store.Ticket, error) {
	t, err := scanTicket(s.row(ctx, "SELECT "+ticketColumns+" FROM launch_tickets WHERE id = $1", id))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.Ticket{}, fmt.Errorf("accounts: ticket: %w", err)
	}
	return t, err
}

// ClaimTicket makes owner the ticket's owner if it still waits and its
// owner was last seen before staleBefore (it stopped); ErrNotFound if not.
func (s *sqlStore) ClaimTicket(ctx context.Context, id, owner string, staleBefore, now time.Time) error {
	n, err := s.exec(ctx, "UPDATE launch_tickets SET owner = $1, seen_at = $2 WHERE id = $3 AND state = $4 AND seen_at < $5",
		owner, ms(now), id, store.TicketWaiting, ms(staleBefore))
	if err != nil {
		return fmt.Errorf("accounts: claim ticket: %w", err)
	}
	if n != 1 {
		return store.ErrNotFound
	}
	return nil
}

// FinishTicket records the end of the ticket's launch, if owner still
// holds it: state TicketDone with the sealed exchange URL, or
// TicketFailed with the failure. ErrNotFound if owner does not hold it.
func (s *sqlStore) FinishTicket(ctx context.Context, id, owner, state, sealed, failure string) error {
	if state != store.TicketDone && state != store.TicketFailed {
		return fmt.Errorf("%w: ticket state %q", store.ErrInvalid, state)
	}
	n, err := s.exec(ctx, "UPDATE launch_tickets SET state = $1, sealed = $2, failure = $3 WHERE id = $4 AND owner = $5 AND state = $6",
		state, sealed, failure, id, owner, store.TicketWaiting)
	if err != nil {
		return fmt.Errorf("accounts: finish ticket: %w", err)
	}
	if n != 1 {
		return store.ErrNotFound
	}
	return nil
}

// TakeTicket deletes a finished ticket of the account and returns it: its
// result is used once, even by two refreshes at once. ErrNotFound if the
// ticket is not finished, not the account's, or taken already.
func (s *sqlStore) TakeTicket(ctx context.Context, id string, accountID int64) (store.Ticket, error) {
	var t store.Ticket
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		t, err = scanTicket(s.txRow(ctx, tx, "DELETE FROM launch_tickets WHERE id = $1 AND account_id = $2 AND state <> $3 RETURNING "+ticketColumns,
			id, accountID, store.TicketWaiting))
		return err
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.Ticket{}, fmt.Errorf("accounts: take ticket: %w", err)
	}
	return t, err
}

// KeepTickets is the owner's heartbeat on its waiting tickets.
func (s *sqlStore) KeepTickets(ctx context.Context, owner string, now time.Time) error {
	if _, err := s.exec(ctx, "UPDATE launch_tickets SET seen_at = $1 WHERE owner = $2 AND state = $3", ms(now), owner, store.TicketWaiting); err != nil {
		return fmt.Errorf("accounts: keep tickets: %w", err)
	}
	return nil
}

// PruneTickets deletes tickets that expired before a time.
func (s *sqlStore) PruneTickets(ctx context.Context, before time.Time) (int64, error) {
	n, err := s.exec(ctx, "DELETE FROM launch_tickets WHERE expires_at < $1", ms(before))
	if err != nil {
		return 0, fmt.Errorf("accounts: prune tickets: %w", err)
	}
	return n, nil
}

// StartProvisionJob records j (state JobRunning) as the job, unless one
// runs whose owner was seen at or after staleBefore (ErrJobRunning).
func (s *sqlStore) StartProvisionJob(ctx context.Context, j store.ProvisionJob, staleBefore time.Time) error {
	n, err := s.exec(ctx, `INSERT INTO provision_job (id, state, started_by, owner, seen_at, started_at, total)
		VALUES (1, $1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET state = excluded.state, started_by = excluded.started_by, owner = excluded.owner,
			seen_at = excluded.seen_at, started_at = excluded.started_at, finished_at = 0, total = excluded.total,
			done = 0, created = 0, existed = 0, failed = 0, rate_limited = 0
		WHERE provision_job.state <> $1 OR provision_job.seen_at < $7`,
		store.JobRunning, j.StartedBy, j.Owner, ms(j.SeenAt), ms(j.StartedAt), j.Total, ms(staleBefore))
	if err != nil {
		return fmt.Errorf("accounts: start provisioning job: %w", err)
	}
	if n != 1 {
		return store.ErrJobRunning
	}
	return nil
}

// UpdateProvisionJob records the job's progress (and its end, when its
// state is no longer JobRunning), if j.Owner still runs it; ErrNotFound
// if not.
func (s *sqlStore) UpdateProvisionJob(ctx context.Context, j store.ProvisionJob) error {
	n, err := s.exec(ctx, `UPDATE provision_job SET state = $1, seen_at = $2, finished_at = $3, total = $4, done = $5,
		created = $6, existed = $7, failed = $8, rate_limited = $9 WHERE id = 1 AND owner = $10 AND state = $11`,
		j.State, ms(j.SeenAt), ms(j.FinishedAt), j.Total, j.Done, j.Created, j.Existed, j.Failed, j.RateLimited, j.Owner, store.JobRunning)
	if err != nil {
		return fmt.Errorf("accounts: update provisioning job: %w", err)
	}
	if n != 1 {
		return store.ErrNotFound
	}
	return nil
}

// LatestProvisionJob reads the job (ErrNotFound: there never was one).
func (s *sqlStore) LatestProvisionJob(ctx context.Context) (store.ProvisionJob, error) {
	var j store.ProvisionJob
	var seen, started, finished int64
	err := s.row(ctx, `SELECT state, started_by, owner, seen_at, started_at, finished_at, total, done, created, existed, failed, rate_limited
		FROM provision_job WHERE id = 1`).Scan(&j.State, &j.StartedBy, &j.Owner, &seen, &started, &finished,
		&j.Total, &j.Done, &j.Created, &j.Existed, &j.Failed, &j.RateLimited)
	if err != nil {
		err = notFoundIfNoRows(err)
		if !errors.Is(err, store.ErrNotFound) {
			err = fmt.Errorf("accounts: provisioning job: %w", err)
		}
		return store.ProvisionJob{}, err
	}
	j.SeenAt, j.StartedAt = time.UnixMilli(seen).UTC(), time.UnixMilli(started).UTC()
	j.FinishedAt = fromMS(sql.NullInt64{Int64: finished, Valid: finished != 0})
	return j, nil
}

// UnlinkedAccounts lists up to limit enabled accounts with no link to a
// platform user, by id after afterID (for provisioning, page by page).
func (s *sqlStore) UnlinkedAccounts(ctx context.Context, afterID int64, limit int) ([]store.Account, error) {
	rows, err := s.query(ctx, "SELECT "+accountCols+` FROM accounts a WHERE a.id > $1 AND NOT a.disabled
		AND NOT EXISTS (SELECT 1 FROM links l WHERE l.account_id = a.id) ORDER BY a.id LIMIT $2`, afterID, max(1, min(limit, 1000)))
	if err != nil {
		return nil, fmt.Errorf("accounts: unlinked: %w", err)
	}
	defer rows.Close()
	var out []store.Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, fmt.Errorf("accounts: unlinked: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// CountLinks counts the accounts linked to a platform user, and the
// enabled accounts that are not.
func (s *sqlStore) CountLinks(ctx context.Context) (linked, unlinked int, err error) {
	err = s.row(ctx, `SELECT (SELECT count(*) FROM links),
		(SELECT count(*) FROM accounts a WHERE NOT a.disabled AND NOT EXISTS (SELECT 1 FROM links l WHERE l.account_id = a.id))`).Scan(&linked, &unlinked)
	if err != nil {
		return 0, 0, fmt.Errorf("accounts: count links: %w", err)
	}
	return linked, unlinked, nil
}
