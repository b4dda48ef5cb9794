-- The modules' own records: a way in keeps its records (an LMS's
-- registration, a course and its roster's last read) as values the store
-- does not read, under (module, kind, key). The LTI tables' rows are
-- copied in: an LMS keyed "issuer\nclient_id", a course
-- "issuer\nclient_id\ncontext_id", its roster's last read a record of its
-- own under the course's key. The tables stay, unwritten from now on, so
-- that the previous version runs on this schema during a rolling upgrade;
-- a later version removes them.

-- +goose Up
CREATE TABLE module_records (
    module TEXT   NOT NULL,
    kind   TEXT   NOT NULL,
    rkey   TEXT   NOT NULL,
    value  BYTEA  NOT NULL,
    at     BIGINT NOT NULL,
    PRIMARY KEY (module, kind, rkey)
);
CREATE INDEX module_records_at ON module_records(module, kind, at);

INSERT INTO module_records (module, kind, rkey, value, at)
SELECT 'lti', 'platform', issuer || chr(10) || client_id,
       convert_to(json_build_object('name', name, 'issuer', issuer, 'client_id', client_id, 'deployment_id', deployment_id,
           'auth_url', auth_url, 'jwks_url', jwks_url, 'token_url', token_url, 'email_domains', email_domains,
           'create_accounts', create_accounts, 'registered_by', registered_by, 'disabled', disabled)::text, 'UTF8'),
       registered_at
FROM lti_platforms;

INSERT INTO module_records (module, kind, rkey, value, at)
SELECT 'lti', 'course', issuer || chr(10) || client_id || chr(10) || context_id,
       convert_to(json_build_object('issuer', issuer, 'client_id', client_id, 'context_id', context_id, 'title', title,
           'memberships_url', memberships_url, 'launched_by', launched_by)::text, 'UTF8'),
       last_launch_at
FROM lti_courses;

INSERT INTO module_records (module, kind, rkey, value, at)
SELECT 'lti', 'roster', issuer || chr(10) || client_id || chr(10) || context_id,
       convert_to(json_build_object('result', last_roster, 'waiting', roster_waiting)::text, 'UTF8'),
       last_roster_at
FROM lti_courses WHERE last_roster_at <> 0;

-- +goose Down
DELETE FROM lti_platforms;
INSERT INTO lti_platforms
SELECT v->>'issuer', v->>'client_id', v->>'name', v->>'deployment_id', v->>'auth_url', v->>'jwks_url', v->>'token_url',
       v->>'email_domains', (v->>'create_accounts')::boolean, at, v->>'registered_by', (v->>'disabled')::boolean
FROM (SELECT convert_from(value, 'UTF8')::json AS v, at FROM module_records WHERE module = 'lti' AND kind = 'platform') p;

DELETE FROM lti_courses;
INSERT INTO lti_courses
SELECT c.v->>'issuer', c.v->>'client_id', c.v->>'context_id', c.v->>'title', c.v->>'memberships_url', c.v->>'launched_by', c.at,
       COALESCE(r.v->>'result', ''), COALESCE(r.at, 0), COALESCE((r.v->>'waiting')::integer, 0)
FROM (SELECT rkey, convert_from(value, 'UTF8')::json AS v, at FROM module_records WHERE module = 'lti' AND kind = 'course') c
LEFT JOIN (SELECT rkey, convert_from(value, 'UTF8')::json AS v, at FROM module_records WHERE module = 'lti' AND kind = 'roster') r
    ON r.rkey = c.rkey;

DROP TABLE module_records;
