-- The per-account index on the audit log cost every launch a write to a
-- random page of it (one account's events sit together and the accounts
-- interleave): at 64 launches in flight about 6 of the 16 pages each group
-- commit wrote, and the checkpoints that copied and synced them were the
-- launch latency's tail (docs/performance.md, fix 11). Listing one
-- account's events now scans the log, as the kind and outcome filters
-- already did: 2 million events, 3 ms -> 0.38-0.55 s.

-- +goose Up
DROP INDEX audit_log_account;

-- +goose Down
CREATE INDEX audit_log_account ON audit_log(account_id, at);
