-- Single-use ids (a portal token's jti) are remembered until they expire,
-- on every instance sharing the store. Set-password links are kept by the
-- SHA-256 of their token, never the token.

-- +goose Up
CREATE TABLE used_ids (
    kind  TEXT   NOT NULL,
    id    TEXT   NOT NULL,
    until BIGINT NOT NULL,
    PRIMARY KEY (kind, id)
);

CREATE TABLE password_links (
    id         TEXT   PRIMARY KEY,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    expires_at BIGINT NOT NULL
);
CREATE INDEX password_links_account ON password_links(account_id);

-- +goose Down
DROP TABLE password_links;
DROP TABLE used_ids;
