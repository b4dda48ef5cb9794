package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/ssobridge/ssobridge/store"
)

// AddLTIPlatform keeps an LMS registered by Dynamic Registration.
func (s *sqlStore) AddLTIPlatform(ctx context.Context, p store.LTIPlatform) error {
	for _, k := range []string{p.Issuer, p.ClientID, p.DeploymentID, p.AuthURL, p.JWKSURL, p.TokenURL, p.EmailDomains, p.RegisteredBy} {
		if len(k) > store.MaxKey {
			return fmt.Errorf("%w: an LMS's issuer, client id, deployment, URLs and domains are limited to %d bytes each", store.ErrInvalid, store.MaxKey)
		}
	}
	p.Name = plain(store.Cut(p.Name, store.MaxName))
	_, err := s.exec(ctx, `INSERT INTO lti_platforms (issuer, client_id, name, deployment_id, auth_url, jwks_url, token_url, email_domains,
		create_accounts, registered_at, registered_by, disabled) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		keyIn(p.Issuer), keyIn(p.ClientID), p.Name, keyIn(p.DeploymentID), plain(p.AuthURL), plain(p.JWKSURL), plain(p.TokenURL), plain(p.EmailDomains),
		p.CreateAccounts, ms(p.RegisteredAt), plain(p.RegisteredBy), p.Disabled)
	switch {
	case err != nil && s.d.unique(err):
		return fmt.Errorf("%w: %s", store.ErrLTIPlatformTaken, p.Issuer)
	case err != nil:
		return fmt.Errorf("lti platforms: add: %w", err)
	}
	return nil
}

// LTIPlatforms lists the registered LMSs, oldest first.
func (s *sqlStore) LTIPlatforms(ctx context.Context) ([]store.LTIPlatform, error) {
	rows, err := s.query(ctx, `SELECT issuer, client_id, name, deployment_id, auth_url, jwks_url, token_url, email_domains, create_accounts,
		registered_at, registered_by, disabled FROM lti_platforms ORDER BY registered_at, issuer, client_id`)
	if err != nil {
		return nil, fmt.Errorf("lti platforms: list: %w", err)
	}
	defer rows.Close()
	var out []store.LTIPlatform
	for rows.Next() {
		var p store.LTIPlatform
		var at int64
		if err := rows.Scan(&p.Issuer, &p.ClientID, &p.Name, &p.DeploymentID, &p.AuthURL, &p.JWKSURL, &p.TokenURL, &p.EmailDomains,
			&p.CreateAccounts, &at, &p.RegisteredBy, &p.Disabled); err != nil {
			return nil, fmt.Errorf("lti platforms: list: %w", err)
		}
		p.Issuer, p.ClientID, p.DeploymentID = keyOut(p.Issuer), keyOut(p.ClientID), keyOut(p.DeploymentID)
		p.RegisteredAt = time.UnixMilli(at).UTC()
		out = append(out, p)
	}
	return out, rows.Err()
}

// SetLTIPlatformDisabled turns a registered LMS off or on again.
func (s *sqlStore) SetLTIPlatformDisabled(ctx context.Context, issuer, clientID string, disabled bool) error {
	n, err := s.exec(ctx, "UPDATE lti_platforms SET disabled = $1 WHERE issuer = $2 AND client_id = $3", disabled, keyIn(issuer), keyIn(clientID))
	if err != nil {
		return fmt.Errorf("lti platforms: disable: %w", err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// DeleteLTIPlatform removes a registered LMS.
func (s *sqlStore) DeleteLTIPlatform(ctx context.Context, issuer, clientID string) error {
	n, err := s.exec(ctx, "DELETE FROM lti_platforms WHERE issuer = $1 AND client_id = $2", keyIn(issuer), keyIn(clientID))
	if err != nil {
		return fmt.Errorf("lti platforms: delete: %w", err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// SeeLTICourse records or updates a course an instructor launched from.
func (s *sqlStore) SeeLTICourse(ctx context.Context, c store.LTICourse) error {
	for _, k := range []string{c.Issuer, c.ClientID, c.ContextID, c.MembershipsURL, c.LaunchedBy} {
		if len(k) > store.MaxKey {
			return fmt.Errorf("%w: a course's ids, memberships URL and launcher are limited to %d bytes each", store.ErrInvalid, store.MaxKey)
		}
	}
	c.Title = plain(store.Cut(c.Title, store.MaxName))
	_, err := s.exec(ctx, `INSERT INTO lti_courses (issuer, client_id, context_id, title, memberships_url, launched_by, last_launch_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (issuer, client_id, context_id) DO UPDATE SET title = excluded.title, memberships_url = excluded.memberships_url,
		launched_by = excluded.launched_by, last_launch_at = excluded.last_launch_at`,
		keyIn(c.Issuer), keyIn(c.ClientID), keyIn(c.ContextID), c.Title, plain(c.MembershipsURL), plain(c.LaunchedBy), ms(c.LastLaunchAt))
	if err != nil {
		return fmt.Errorf("lti courses: see: %w", err)
	}
	return nil
}

// LTICourses lists the courses seen, the latest launched first.
func (s *sqlStore) LTICourses(ctx context.Context, limit int) ([]store.LTICourse, error) {
	rows, err := s.query(ctx, `SELECT issuer, client_id, context_id, title, memberships_url, launched_by, last_launch_at, last_roster, last_roster_at,
		roster_waiting FROM lti_courses ORDER BY last_launch_at DESC, issuer, client_id, context_id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("lti courses: list: %w", err)
	}
	defer rows.Close()
	var out []store.LTICourse
	for rows.Next() {
		var c store.LTICourse
		var launched, roster int64
		if err := rows.Scan(&c.Issuer, &c.ClientID, &c.ContextID, &c.Title, &c.MembershipsURL, &c.LaunchedBy, &launched, &c.LastRoster, &roster, &c.RosterWaiting); err != nil {
			return nil, fmt.Errorf("lti courses: list: %w", err)
		}
		c.Issuer, c.ClientID, c.ContextID = keyOut(c.Issuer), keyOut(c.ClientID), keyOut(c.ContextID)
		c.LastLaunchAt = time.UnixMilli(launched).UTC()
		if roster != 0 {
			c.LastRosterAt = time.UnixMilli(roster).UTC()
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// RecordLTIRoster keeps what a course's last roster read gave.
func (s *sqlStore) RecordLTIRoster(ctx context.Context, issuer, clientID, contextID string, read store.RosterRead) error {
	n, err := s.exec(ctx, "UPDATE lti_courses SET last_roster = $1, last_roster_at = $2, roster_waiting = $3 WHERE issuer = $4 AND client_id = $5 AND context_id = $6",
		plain(store.Cut(read.Result, store.MaxDetail)), ms(read.At), max(read.Waiting, 0), keyIn(issuer), keyIn(clientID), keyIn(contextID))
	if err != nil {
		return fmt.Errorf("lti courses: roster: %w", err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}
