-- The platform's rate limit is shared by every process calling it with
-- the one credential: each counts the others through its heartbeat row
-- here and takes its share of the rate; a 429's pause is kept here for
-- all of them. Times are unix milliseconds.

-- +goose Up
CREATE TABLE platform_callers (
    id      TEXT    PRIMARY KEY,
    seen_at INTEGER NOT NULL
);
CREATE TABLE platform_pause (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    until INTEGER NOT NULL
);
INSERT INTO platform_pause (id, until) VALUES (1, 0);

-- +goose Down
DROP TABLE platform_pause;
DROP TABLE platform_callers;
