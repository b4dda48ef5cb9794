-- Every way in links the identities it admits (OIDC, SAML, the portal,
-- LTI, SCIM), so an identity's source is named by its kind: an LTI
-- platform's issuer becomes "lti:<issuer>".

-- +goose Up
UPDATE identities SET issuer = 'lti:' || issuer WHERE issuer NOT LIKE 'lti:%';

-- +goose Down
DELETE FROM identities WHERE issuer NOT LIKE 'lti:%';
UPDATE identities SET issuer = substr(issuer, 5);
