-- Every launch appends an audit row; an index on its time made each of
-- those appends an index write too, and no query needs it: the console
-- pages the log by id (newest first), and the retention pass walks it by
-- id in bounded chunks, deleting the expired rows of each chunk.

-- +goose Up
DROP INDEX audit_log_at;

-- +goose Down
CREATE INDEX audit_log_at ON audit_log(at);
