-- An account's id is never given to another account: SQLite gives a new
-- row the highest id + 1, so deleting the newest account would hand its id
-- (and with it whatever another process still holds for that id in its
-- cache: a link, a session, audit events) to the next one. The highest id
-- ever given is kept here, and new accounts count on from it.

-- +goose Up
CREATE TABLE account_id_high (last INTEGER NOT NULL);
INSERT INTO account_id_high SELECT coalesce(max(id), 0) FROM accounts;
-- +goose StatementBegin
CREATE TRIGGER account_id_high_after_insert AFTER INSERT ON accounts
BEGIN
    UPDATE account_id_high SET last = NEW.id WHERE NEW.id > last;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER account_id_high_after_insert;
DROP TABLE account_id_high;
