-- LMSs registered by LTI Dynamic Registration, for every instance.

-- +goose Up
CREATE TABLE lti_platforms (
    issuer          TEXT    NOT NULL,
    client_id       TEXT    NOT NULL,
    name            TEXT    NOT NULL,
    deployment_id   TEXT    NOT NULL,
    auth_url        TEXT    NOT NULL,
    jwks_url        TEXT    NOT NULL,
    token_url       TEXT    NOT NULL,
    email_domains   TEXT    NOT NULL,
    create_accounts BOOLEAN NOT NULL,
    registered_at   BIGINT  NOT NULL,
    registered_by   TEXT    NOT NULL,
    disabled        BOOLEAN NOT NULL DEFAULT false,
    PRIMARY KEY (issuer, client_id)
);

-- +goose Down
DROP TABLE lti_platforms;
