-- The line of launches waiting for the platform's pace: a ticket per
-- waiting user, so that whichever instance the user's refresh reaches
-- answers it, and another instance takes over a launch whose instance
-- stopped (its heartbeat, seen_at, gets old). The exchange URL of a
-- finished launch is kept sealed (authenticated encryption), never in
-- the clear. Times are unix milliseconds.
--
-- Callers of the platform say whether they serve users or only run
-- background work (provisioning), when they last called (an idle caller
-- takes no share from the others) and when they last had users waiting
-- (background work takes a small share while users wait anywhere).
--
-- The console's provisioning job: one row, the latest job.

-- +goose Up
CREATE TABLE launch_tickets (
    id         TEXT    PRIMARY KEY,
    account_id BIGINT NOT NULL,
    return_to  TEXT    NOT NULL DEFAULT '',
    arrived_at BIGINT NOT NULL,
    eta        BIGINT NOT NULL,
    owner      TEXT    NOT NULL,
    seen_at    BIGINT NOT NULL,
    state      TEXT    NOT NULL DEFAULT 'waiting',
    sealed     TEXT    NOT NULL DEFAULT '',
    failure    TEXT    NOT NULL DEFAULT '',
    expires_at BIGINT NOT NULL
);
CREATE INDEX launch_tickets_owner ON launch_tickets (owner);
CREATE INDEX launch_tickets_expires ON launch_tickets (expires_at);
ALTER TABLE platform_callers ADD COLUMN background BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE platform_callers ADD COLUMN busy_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE platform_callers ADD COLUMN active_at BIGINT NOT NULL DEFAULT 0;
CREATE TABLE provision_job (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    state       TEXT    NOT NULL,
    started_by  TEXT    NOT NULL DEFAULT '',
    owner       TEXT    NOT NULL,
    seen_at     BIGINT NOT NULL,
    started_at  BIGINT NOT NULL,
    finished_at BIGINT NOT NULL DEFAULT 0,
    total       BIGINT NOT NULL DEFAULT 0,
    done        BIGINT NOT NULL DEFAULT 0,
    created     BIGINT NOT NULL DEFAULT 0,
    existed     BIGINT NOT NULL DEFAULT 0,
    failed      BIGINT NOT NULL DEFAULT 0,
    rate_limited BIGINT NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE provision_job;
ALTER TABLE platform_callers DROP COLUMN active_at;
ALTER TABLE platform_callers DROP COLUMN busy_at;
ALTER TABLE platform_callers DROP COLUMN background;
DROP TABLE launch_tickets;
