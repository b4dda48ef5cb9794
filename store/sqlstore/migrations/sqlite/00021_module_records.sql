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
    module TEXT    NOT NULL,
    kind   TEXT    NOT NULL,
    rkey   TEXT    NOT NULL,
    value  BLOB    NOT NULL,
    at     INTEGER NOT NULL,
    PRIMARY KEY (module, kind, rkey)
);
CREATE INDEX module_records_at ON module_records(module, kind, at);

INSERT INTO module_records (module, kind, rkey, value, at)
SELECT 'lti', 'platform', issuer || char(10) || client_id,
       CAST(json_object('name', name, 'issuer', issuer, 'client_id', client_id, 'deployment_id', deployment_id,
           'auth_url', auth_url, 'jwks_url', jwks_url, 'token_url', token_url, 'email_domains', email_domains,
           'create_accounts', json(CASE WHEN create_accounts <> 0 THEN 'true' ELSE 'false' END), 'registered_by', registered_by,
           'disabled', json(CASE WHEN disabled <> 0 THEN 'true' ELSE 'false' END)) AS BLOB),
       registered_at
FROM lti_platforms;

INSERT INTO module_records (module, kind, rkey, value, at)
SELECT 'lti', 'course', issuer || char(10) || client_id || char(10) || context_id,
       CAST(json_object('issuer', issuer, 'client_id', client_id, 'context_id', context_id, 'title', title,
           'memberships_url', memberships_url, 'launched_by', launched_by) AS BLOB),
       last_launch_at
FROM lti_courses;

INSERT INTO module_records (module, kind, rkey, value, at)
SELECT 'lti', 'roster', issuer || char(10) || client_id || char(10) || context_id,
       CAST(json_object('result', last_roster, 'waiting', roster_waiting) AS BLOB),
       last_roster_at
FROM lti_courses WHERE last_roster_at <> 0;

-- +goose Down
DELETE FROM lti_platforms;
INSERT INTO lti_platforms
SELECT json_extract(v, '$.issuer'), json_extract(v, '$.client_id'), json_extract(v, '$.name'), json_extract(v, '$.deployment_id'),
       json_extract(v, '$.auth_url'), json_extract(v, '$.jwks_url'), json_extract(v, '$.token_url'), json_extract(v, '$.email_domains'),
       json_extract(v, '$.create_accounts'), at, json_extract(v, '$.registered_by'), json_extract(v, '$.disabled')
FROM (SELECT CAST(value AS TEXT) AS v, at FROM module_records WHERE module = 'lti' AND kind = 'platform');

DELETE FROM lti_courses;
INSERT INTO lti_courses
SELECT json_extract(c.v, '$.issuer'), json_extract(c.v, '$.client_id'), json_extract(c.v, '$.context_id'), json_extract(c.v, '$.title'),
       json_extract(c.v, '$.memberships_url'), json_extract(c.v, '$.launched_by'), c.at,
       COALESCE(json_extract(r.v, '$.result'), ''), COALESCE(r.at, 0), COALESCE(json_extract(r.v, '$.waiting'), 0)
FROM (SELECT rkey, CAST(value AS TEXT) AS v, at FROM module_records WHERE module = 'lti' AND kind = 'course') c
LEFT JOIN (SELECT rkey, CAST(value AS TEXT) AS v, at FROM module_records WHERE module = 'lti' AND kind = 'roster') r
    ON r.rkey = c.rkey;

DROP TABLE module_records;
