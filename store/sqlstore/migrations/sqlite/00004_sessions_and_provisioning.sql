-- Per-device sessions: a session is valid while its row exists, so one
-- device can be signed out alone and every instance on the store agrees.
-- Provisioning leases serialise the platform lookup/create of one email
-- across processes sharing the database file (PostgreSQL uses an advisory
-- lock instead); a lease left by a process that died expires.

-- +goose Up
CREATE TABLE sessions (
    id           TEXT    PRIMARY KEY,      -- SHA-256 of the cookie's token, hex
    account_id   INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,         -- unix ms
    last_seen_at INTEGER NOT NULL,         -- unix ms
    user_agent   TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX sessions_account ON sessions(account_id);
CREATE INDEX sessions_last_seen ON sessions(last_seen_at);

CREATE TABLE provisioning_leases (
    email_key  TEXT    PRIMARY KEY,        -- lower-cased email
    holder     TEXT    NOT NULL,           -- the process's random id
    expires_at INTEGER NOT NULL            -- unix ms
);

-- +goose Down
DROP TABLE provisioning_leases;
DROP TABLE sessions;
