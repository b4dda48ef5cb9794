-- Provisioning leases, as on SQLite: a row per email being provisioned,
-- so that a holder waiting on the platform holds no connection (an
-- advisory lock held one each, and a rush of new users emptied the pool).
--
-- The platform's rate limit is shared by every process calling it with
-- the one credential: each counts the others through its heartbeat row
-- here and takes its share of the rate; a 429's pause is kept here for
-- all of them. Times are unix milliseconds.

-- +goose Up
CREATE TABLE platform_callers (
    id      TEXT   PRIMARY KEY,
    seen_at BIGINT NOT NULL
);
CREATE TABLE platform_pause (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    until BIGINT NOT NULL
);
INSERT INTO platform_pause (id, until) VALUES (1, 0);
CREATE TABLE provisioning_leases (
    email_key  TEXT   PRIMARY KEY,
    holder     TEXT   NOT NULL,
    expires_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE provisioning_leases;
DROP TABLE platform_pause;
DROP TABLE platform_callers;
