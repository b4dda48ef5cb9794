-- +goose Up
CREATE TABLE accounts (
    id            INTEGER PRIMARY KEY,
    email         TEXT    NOT NULL,
    email_key     TEXT    NOT NULL UNIQUE, -- lower-cased email: unique case-insensitively
    first_name    TEXT    NOT NULL,
    last_name     TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,
    is_admin      INTEGER NOT NULL DEFAULT 0,
    disabled      INTEGER NOT NULL DEFAULT 0,
    session_epoch INTEGER NOT NULL DEFAULT 0, -- raised to end the account's sessions
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);

CREATE TABLE links (
    account_id       INTEGER PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    platform_user_id TEXT    NOT NULL,
    linked_at        INTEGER NOT NULL,
    last_launch_at   INTEGER
);

CREATE TABLE audit_log (
    id             INTEGER PRIMARY KEY,
    at             INTEGER NOT NULL,
    kind           TEXT    NOT NULL,
    account_id     INTEGER,
    email          TEXT    NOT NULL DEFAULT '',
    outcome        TEXT    NOT NULL,
    platform_calls INTEGER NOT NULL DEFAULT 0,
    latency_ms     INTEGER NOT NULL DEFAULT 0,
    detail         TEXT    NOT NULL DEFAULT '',
    request_id     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at ON audit_log(at);
CREATE INDEX audit_log_account ON audit_log(account_id, at);

-- +goose Down
DROP TABLE audit_log;
DROP TABLE links;
DROP TABLE accounts;
