-- A session's last-seen time is written on a signed-in request (at most
-- once a minute per session): an index on it made each of those writes
-- an index write too (on PostgreSQL, never a HOT update). The idle-session
-- prune walks the table by its primary key in bounded chunks instead.

-- +goose Up
DROP INDEX sessions_last_seen;

-- +goose Down
CREATE INDEX sessions_last_seen ON sessions(last_seen_at);
