-- A course's roster past its platform's cap waits for an admin's
-- confirmation: how many people the last read found.

-- +goose Up
ALTER TABLE lti_courses ADD COLUMN roster_waiting INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE lti_courses DROP COLUMN roster_waiting;
