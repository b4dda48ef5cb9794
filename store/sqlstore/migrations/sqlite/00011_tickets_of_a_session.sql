-- A waiting launch's ticket belongs to the session that made it: only
-- that session redeems it, and it goes with the session (sign-out, the
-- sessions ended, a new password, the account disabled). Tickets made
-- before this have no session and are no one's: they are dropped.

-- +goose Up
DELETE FROM launch_tickets;
ALTER TABLE launch_tickets ADD COLUMN session_id TEXT NOT NULL DEFAULT '';
CREATE INDEX launch_tickets_account ON launch_tickets (account_id);

-- +goose Down
DROP INDEX launch_tickets_account;
ALTER TABLE launch_tickets DROP COLUMN session_id;
