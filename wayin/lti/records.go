package lti

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/store"
)

// Records keeps lti's own records in the store's module record space,
// shared by every instance: the LMSs registered by Dynamic Registration
// ("platform", keyed "issuer\nclient_id"), the courses instructors
// launched from ("course", keyed "issuer\nclient_id\ncontext_id", listed
// by their last launch) and what each course's last roster read gave
// ("roster", under the course's key: a record of its own, so a launch and
// a roster read that end at once never undo each other).
type Records struct {
	Store store.ModuleRecords
}

// recordModule is lti's name in the store's record space.
const recordModule = "lti"

// The kinds of lti's records.
const (
	kindPlatform = "platform"
	kindCourse   = "course"
	kindRoster   = "roster"
)

// ErrPlatformTaken: an LMS with this issuer and client id is registered
// already.
var ErrPlatformTaken = errors.New("lti: this LMS (issuer and client id) is registered already")

// Registered is an LMS registered by Dynamic Registration: what the LMS's
// OpenID configuration and registration answered, and the rules the admin
// who made the registration URL chose.
type Registered struct {
	Name         string `json:"name"`
	Issuer       string `json:"issuer"`
	ClientID     string `json:"client_id"`
	DeploymentID string `json:"deployment_id"`
	AuthURL      string `json:"auth_url"`
	JWKSURL      string `json:"jwks_url"`
	TokenURL     string `json:"token_url"`
	// EmailDomains (space-separated) and CreateAccounts are its admission
	// rules, as lti.platforms' keys of the same names.
	EmailDomains   string    `json:"email_domains"`
	CreateAccounts bool      `json:"create_accounts"`
	RegisteredAt   time.Time `json:"-"`             // the record's time
	RegisteredBy   string    `json:"registered_by"` // the admin who made the registration URL
	Disabled       bool      `json:"disabled"`
}

// Course is a course of an LMS an instructor launched from, whose roster
// the bridge may read (NRPS), with what its last roster read gave.
type Course struct {
	Issuer         string    `json:"issuer"`
	ClientID       string    `json:"client_id"`
	ContextID      string    `json:"context_id"`
	Title          string    `json:"title"`
	MembershipsURL string    `json:"memberships_url"`
	LaunchedBy     string    `json:"launched_by"` // the instructor's address at the last launch
	LastLaunchAt   time.Time `json:"-"`           // the record's time
	// LastRoster is what the last roster read gave, or why it failed.
	LastRoster   string    `json:"-"`
	LastRosterAt time.Time `json:"-"`
	// RosterWaiting is how many people the last read found past the
	// platform's cap, waiting for an admin's confirmation (0: none).
	RosterWaiting int `json:"-"`
}

// RosterRead is what one read of a course's roster gave.
type RosterRead struct {
	Result  string    `json:"result"`
	Waiting int       `json:"waiting"` // the people waiting for an admin's confirmation (0: none)
	At      time.Time `json:"-"`       // the record's time
}

// recordKey joins an LMS's issuer and client id, and a course's context
// id when given. An issuer or client id with a line break is refused (no
// LMS sends one), so two keys never collide.
func recordKey(issuer, clientID string, contextID ...string) (string, error) {
	parts := append([]string{issuer, clientID}, contextID...)
	for i, p := range parts {
		if len(p) > store.MaxKey {
			return "", fmt.Errorf("%w: an LMS's issuer, client id and course id are limited to %d bytes each", store.ErrInvalid, store.MaxKey)
		}
		if i < 2 && strings.Contains(p, "\n") {
			return "", fmt.Errorf("%w: an LMS's issuer or client id holds a line break", store.ErrInvalid)
		}
	}
	return strings.Join(parts, "\n"), nil
}

// put keeps v as lti's record of kind under key.
func (r *Records) put(ctx context.Context, kind, key string, at time.Time, v any, mode store.PutMode) error {
	value, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return r.Store.PutRecord(ctx, store.Record{Module: recordModule, Kind: kind, Key: key, Value: value, At: at}, mode)
}

// list reads lti's records of kind q selects into a T each, with its time.
func list[T any](ctx context.Context, st store.ModuleRecords, q store.RecordQuery, at func(*T, time.Time)) ([]T, []string, error) {
	q.Module = recordModule
	recs, err := st.Records(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	out, keys := make([]T, 0, len(recs)), make([]string, 0, len(recs))
	for _, rec := range recs {
		var v T
		if err := json.Unmarshal(rec.Value, &v); err != nil {
			return nil, nil, fmt.Errorf("lti: the %s record %q: %w", q.Kind, rec.Key, err)
		}
		at(&v, rec.At)
		out, keys = append(out, v), append(keys, rec.Key)
	}
	return out, keys, nil
}

// AddPlatform keeps an LMS registered by Dynamic Registration, for every
// instance (its name cut to store.MaxName); one with the same issuer and
// client id is ErrPlatformTaken.
func (r *Records) AddPlatform(ctx context.Context, p Registered) error {
	for _, v := range []string{p.DeploymentID, p.AuthURL, p.JWKSURL, p.TokenURL, p.EmailDomains, p.RegisteredBy} {
		if len(v) > store.MaxKey {
			return fmt.Errorf("%w: an LMS's deployment, URLs and domains are limited to %d bytes each", store.ErrInvalid, store.MaxKey)
		}
	}
	key, err := recordKey(p.Issuer, p.ClientID)
	if err != nil {
		return err
	}
	p.Name = store.Cut(p.Name, store.MaxName)
	if err := r.put(ctx, kindPlatform, key, p.RegisteredAt, p, store.Create); err != nil {
		if errors.Is(err, store.ErrRecordTaken) {
			return fmt.Errorf("%w: %s", ErrPlatformTaken, p.Issuer)
		}
		return fmt.Errorf("lti: register %s: %w", p.Issuer, err)
	}
	return nil
}

// Platforms lists the registered LMSs, oldest first.
func (r *Records) Platforms(ctx context.Context) ([]Registered, error) {
	out, _, err := list(ctx, r.Store, store.RecordQuery{Kind: kindPlatform}, func(p *Registered, at time.Time) { p.RegisteredAt = at })
	return out, err
}

// SetPlatformDisabled turns a registered LMS's launches off or on again
// (store.ErrNotFound: no such LMS).
func (r *Records) SetPlatformDisabled(ctx context.Context, issuer, clientID string, disabled bool) error {
	key, err := recordKey(issuer, clientID)
	if err != nil {
		return err
	}
	found, _, err := list(ctx, r.Store, store.RecordQuery{Kind: kindPlatform, Keys: []string{key}}, func(p *Registered, at time.Time) { p.RegisteredAt = at })
	switch {
	case err != nil:
		return err
	case len(found) == 0:
		return store.ErrNotFound
	}
	p := found[0]
	p.Disabled = disabled
	return r.put(ctx, kindPlatform, key, p.RegisteredAt, p, store.Replace)
}

// DeletePlatform removes a registered LMS (store.ErrNotFound: none).
func (r *Records) DeletePlatform(ctx context.Context, issuer, clientID string) error {
	key, err := recordKey(issuer, clientID)
	if err != nil {
		return err
	}
	return r.Store.DeleteRecord(ctx, recordModule, kindPlatform, key)
}

// SeeCourse records a course an instructor launched from (its roster's
// URL), or updates it; its roster's last read stays.
func (r *Records) SeeCourse(ctx context.Context, c Course) error {
	key, err := recordKey(c.Issuer, c.ClientID, c.ContextID)
	if err != nil {
		return err
	}
	if len(c.MembershipsURL) > store.MaxKey || len(c.LaunchedBy) > store.MaxKey {
		return fmt.Errorf("%w: a course's memberships URL and launcher are limited to %d bytes each", store.ErrInvalid, store.MaxKey)
	}
	c.Title = store.Cut(c.Title, store.MaxName)
	return r.put(ctx, kindCourse, key, c.LastLaunchAt, c, store.Upsert)
}

// Courses lists the courses seen, the latest launched first (at most
// limit, at most store.MaxRecordKeys), each with its roster's last read.
func (r *Records) Courses(ctx context.Context, limit int) ([]Course, error) {
	limit = min(limit, store.MaxRecordKeys)
	courses, keys, err := list(ctx, r.Store, store.RecordQuery{Kind: kindCourse, Newest: true, Limit: limit},
		func(c *Course, at time.Time) { c.LastLaunchAt = at })
	if err != nil || len(courses) == 0 {
		return courses, err
	}
	reads, readKeys, err := list(ctx, r.Store, store.RecordQuery{Kind: kindRoster, Keys: keys}, func(rd *RosterRead, at time.Time) { rd.At = at })
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]RosterRead, len(reads))
	for i, rd := range reads {
		byKey[readKeys[i]] = rd
	}
	for i, k := range keys {
		if rd, ok := byKey[k]; ok {
			courses[i].LastRoster, courses[i].LastRosterAt, courses[i].RosterWaiting = rd.Result, rd.At, rd.Waiting
		}
	}
	return courses, nil
}

// RecordRoster keeps what a course's last roster read gave (its result
// cut to store.MaxDetail).
func (r *Records) RecordRoster(ctx context.Context, issuer, clientID, contextID string, read RosterRead) error {
	key, err := recordKey(issuer, clientID, contextID)
	if err != nil {
		return err
	}
	read.Result, read.Waiting = store.Cut(read.Result, store.MaxDetail), max(read.Waiting, 0)
	return r.put(ctx, kindRoster, key, read.At, read, store.Upsert)
}

// Launchable are the registered LMSs that are not disabled, as platforms
// launches come from.
func (r *Records) Launchable(ctx context.Context) ([]Platform, error) {
	list, err := r.Platforms(ctx)
	if err != nil {
		return nil, err
	}
	var out []Platform
	for _, p := range list {
		if p.Disabled {
			continue
		}
		var deployments []string
		if p.DeploymentID != "" {
			deployments = []string{p.DeploymentID}
		}
		out = append(out, Platform{Name: store.Cut(p.Name, store.MaxName), Issuer: p.Issuer, ClientID: p.ClientID, DeploymentIDs: deployments, AuthURL: p.AuthURL,
			JWKSURL: p.JWKSURL, TokenURL: p.TokenURL, CreateAccounts: p.CreateAccounts, EmailDomains: strings.Fields(p.EmailDomains),
			Registered: true, Key: "the registered LMS " + store.Cut(p.Name, store.MaxName) + " (console, LTI page)"})
	}
	return out, nil
}
