-- Accounts and groups kept by the partner's identity provider through
-- SCIM: an account's identity-provider id (externalId, searchable) and
-- who owns its details; the groups with their members (the admin group's
-- members are partner admins).

-- +goose Up
ALTER TABLE accounts ADD COLUMN external_id TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN managed_by TEXT NOT NULL DEFAULT '';
CREATE INDEX accounts_external_id ON accounts(external_id) WHERE external_id <> '';

CREATE TABLE scim_groups (
    id           TEXT    PRIMARY KEY,
    display_name TEXT    NOT NULL,
    name_key     TEXT    NOT NULL UNIQUE, -- lower-cased name: unique case-insensitively
    external_id  TEXT    NOT NULL DEFAULT '',
    created_at   BIGINT  NOT NULL,
    updated_at   BIGINT  NOT NULL
);

CREATE TABLE scim_group_members (
    group_id   TEXT    NOT NULL REFERENCES scim_groups(id) ON DELETE CASCADE,
    account_id BIGINT  NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, account_id)
);
CREATE INDEX scim_group_members_account ON scim_group_members(account_id);

-- +goose Down
DROP TABLE scim_group_members;
DROP TABLE scim_groups;
DROP INDEX accounts_external_id;
ALTER TABLE accounts DROP COLUMN managed_by;
ALTER TABLE accounts DROP COLUMN external_id;
