-- The courses instructors launched from, whose rosters (NRPS) the bridge
-- provisions ahead, and what the last roster read gave.

-- +goose Up
CREATE TABLE lti_courses (
    issuer          TEXT    NOT NULL,
    client_id       TEXT    NOT NULL,
    context_id      TEXT    NOT NULL,
    title           TEXT    NOT NULL,
    memberships_url TEXT    NOT NULL,
    launched_by     TEXT    NOT NULL,
    last_launch_at  INTEGER  NOT NULL,
    last_roster     TEXT    NOT NULL DEFAULT '',
    last_roster_at  INTEGER  NOT NULL DEFAULT 0,
    PRIMARY KEY (issuer, client_id, context_id)
);
CREATE INDEX lti_courses_last_launch ON lti_courses(last_launch_at);

-- +goose Down
DROP TABLE lti_courses;
