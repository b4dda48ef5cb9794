-- Sign-in regulation lives in the store, so a ban holds on every instance
-- on the database and after a restart. An attempt is recorded before its
-- password is verified (failed = 0 while it is being verified), so
-- parallel attempts cannot test more passwords than the limit.

-- +goose Up
CREATE TABLE sign_in_attempts (
    id     INTEGER PRIMARY KEY,
    email  TEXT NOT NULL,              -- lower-cased as typed: unknown emails count too
    ip     TEXT NOT NULL,
    at     INTEGER NOT NULL,           -- unix ms
    failed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sign_in_attempts_email ON sign_in_attempts(email, at);
CREATE INDEX sign_in_attempts_ip ON sign_in_attempts(ip, at);

CREATE TABLE bans (
    kind  TEXT NOT NULL CHECK (kind IN ('email', 'ip')),
    value TEXT NOT NULL,
    until INTEGER NOT NULL,            -- unix ms
    PRIMARY KEY (kind, value)
);

-- +goose Down
DROP TABLE bans;
DROP TABLE sign_in_attempts;
