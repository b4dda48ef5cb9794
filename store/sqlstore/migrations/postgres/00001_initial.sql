-- The PostgreSQL schema: the same tables as SQLite's migrations 1-4 leave,
-- in PostgreSQL's types. Times are unix milliseconds, as on SQLite, so
-- both backends read and write them alike.

-- +goose Up
CREATE TABLE accounts (
    id            BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email         TEXT    NOT NULL,
    email_key     TEXT    NOT NULL UNIQUE, -- lower-cased email: unique case-insensitively
    first_name    TEXT    NOT NULL,
    last_name     TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,
    is_admin      BOOLEAN NOT NULL DEFAULT false,
    disabled      BOOLEAN NOT NULL DEFAULT false,
    session_epoch BIGINT  NOT NULL DEFAULT 0, -- raised to end the account's sessions
    created_at    BIGINT  NOT NULL,
    updated_at    BIGINT  NOT NULL
);

CREATE TABLE links (
    account_id       BIGINT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    platform_user_id TEXT   NOT NULL,
    linked_at        BIGINT NOT NULL,
    last_launch_at   BIGINT
);

-- No per-account index: every launch writes one row, and an index on
-- (account_id, at) costs each a write to a random page (SQLite's fix 11).
CREATE TABLE audit_log (
    id             BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at             BIGINT  NOT NULL,
    kind           TEXT    NOT NULL,
    account_id     BIGINT,
    email          TEXT    NOT NULL DEFAULT '',
    outcome        TEXT    NOT NULL,
    platform_calls INTEGER NOT NULL DEFAULT 0,
    latency_ms     BIGINT  NOT NULL DEFAULT 0,
    detail         TEXT    NOT NULL DEFAULT '',
    request_id     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at ON audit_log(at);

CREATE TABLE sign_in_attempts (
    id     BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email  TEXT    NOT NULL,
    ip     TEXT    NOT NULL,
    at     BIGINT  NOT NULL,
    failed BOOLEAN NOT NULL DEFAULT false
);
CREATE INDEX sign_in_attempts_email ON sign_in_attempts(email, at);
CREATE INDEX sign_in_attempts_ip ON sign_in_attempts(ip, at);

CREATE TABLE bans (
    kind  TEXT   NOT NULL CHECK (kind IN ('email', 'ip')),
    value TEXT   NOT NULL,
    until BIGINT NOT NULL,
    PRIMARY KEY (kind, value)
);

CREATE TABLE sessions (
    id           TEXT   PRIMARY KEY,
    account_id   BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    user_agent   TEXT   NOT NULL DEFAULT ''
);
CREATE INDEX sessions_account ON sessions(account_id);
CREATE INDEX sessions_last_seen ON sessions(last_seen_at);

-- +goose Down
DROP TABLE sessions;
DROP TABLE bans;
DROP TABLE sign_in_attempts;
DROP TABLE audit_log;
DROP TABLE links;
DROP TABLE accounts;
