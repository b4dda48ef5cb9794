-- An address is unique by its ASCII letters folded to lower case, nothing
-- more: the keys written before folded every Unicode letter, which maps
-- different addresses onto one ("kİm" and "Kim" with the Kelvin sign to
-- "kim"). SQLite's lower() folds ASCII only. No two keys can collide: a
-- finer fold of distinct keys stays distinct.

-- +goose Up
UPDATE accounts SET email_key = lower(email) WHERE email_key <> lower(email);

-- +goose Down
SELECT 1; -- the finer keys are valid under the old rule's lookups of ASCII addresses
