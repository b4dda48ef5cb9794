-- Who an LTI platform launched: its issuer and the user's sub there,
-- linked to an account so a later launch finds it even if the address
-- changed. And values kept once for every instance (the LTI tool's
-- generated key).

-- +goose Up
CREATE TABLE identities (
    issuer     TEXT    NOT NULL,
    subject    TEXT    NOT NULL,
    account_id BIGINT  NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    linked_at  BIGINT  NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX identities_account ON identities(account_id);

CREATE TABLE kept_values (
    name       TEXT    PRIMARY KEY,
    value      TEXT    NOT NULL,
    created_at BIGINT  NOT NULL
);

-- +goose Down
DROP TABLE kept_values;
DROP TABLE identities;
