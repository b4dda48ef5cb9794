-- An address is unique by its ASCII letters folded to lower case, nothing
-- more: the keys written before folded every Unicode letter, which maps
-- different addresses onto one ("kİm" and "Kim" with the Kelvin sign to
-- "kim"). translate() folds ASCII only, whatever the database's collation.

-- +goose Up
UPDATE accounts SET email_key = translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
 WHERE email_key <> translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');

-- +goose Down
SELECT 1;
