package lti

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/launch/provision"
	"github.com/ssobridge/ssobridge/store"
)

// RosterEvery is how often a course's roster is read at most (on every
// instance together): an instructor's launches within it start nothing.
const RosterEvery = 10 * time.Minute

// rosterKind spends a course's roster read once per RosterEvery.
const rosterKind = "lti-roster"

// Roster provisions a course's members ahead of their first launch: when
// an instructor launches, the course's roster (NRPS) is read and handed to
// the provisioning pipeline (provision.Roster: each active member with an
// email admitted as a launch of theirs would be, never an admin role; the
// platform users made by a background job; at most the platform's roster
// cap, lti.roster_max, past which the course waits for an admin's
// confirmation in the console). An unreadable token endpoint or roster is
// logged and audited; launches are not affected.
type Roster struct {
	provision.Roster
	Services *Services
	// Record writes the audit (store.Store's Record).
	Record func(ctx context.Context, ev store.Event) error
	// Courses keeps the courses instructors launched from and their last
	// roster reads, for the console (a store.Store).
	Courses *Records
	UseOnce func(ctx context.Context, kind, id string, until time.Time) error
	Logger  *slog.Logger
	Now     func() time.Time
	// Max is the cap of a platform whose RosterMax is 0 (DefaultRosterMax
	// unless set).
	Max int
}

// DefaultRosterMax is the members one roster read admits unless the
// platform or lti.roster_max says otherwise.
const DefaultRosterMax = 500

// rosterKey is the one-time key of a course's roster read: a hash, so any
// issuer, client id and context id make text every database keeps.
func rosterKey(p Platform, contextID string) string {
	sum := sha256.Sum256([]byte(p.Issuer + "\x00" + p.ClientID + "\x00" + contextID))
	return hex.EncodeToString(sum[:])
}

// Start records the course of an instructor's launch and reads and
// provisions its roster in the background, unless it was read within
// RosterEvery (here or on another instance).
func (r *Roster) Start(id Identity, src signin.Source) {
	now := r.Now()
	if err := r.Courses.SeeCourse(context.Background(), Course{Issuer: id.Platform.Issuer, ClientID: id.Platform.ClientID,
		ContextID: id.ContextID, Title: id.ContextTitle, MembershipsURL: id.MembershipsURL, LaunchedBy: id.Email, LastLaunchAt: now}); err != nil {
		r.Logger.Warn("LTI roster: the course was not recorded", "err", err)
	}
	switch err := r.UseOnce(context.Background(), rosterKind, rosterKey(id.Platform, id.ContextID), now.Add(RosterEvery)); {
	case errors.Is(err, store.ErrUsed):
		return // read lately, here or on another instance
	case err != nil:
		r.Logger.Warn("LTI roster: not read", "err", err)
		r.finish(id, provision.Result{}, fmt.Errorf("the read could not be claimed: %w", err))
		return
	}
	r.StartNow(id, src, 0)
}

// cap is the members one read of p's rosters admits.
func (r *Roster) cap(p Platform) int {
	return cmp.Or(p.RosterMax, r.Max, DefaultRosterMax)
}

// StartNow reads and provisions a course's roster in the background at
// once (an admin's action in the console). confirmed is the number of
// people an admin confirmed (0: none, the platform's cap holds).
func (r *Roster) StartNow(id Identity, src signin.Source, confirmed int) {
	r.Roster.Start(RosterEvery, func(ctx context.Context) (provision.Result, error) {
		return r.Run(ctx, id, src, max(r.cap(id.Platform), confirmed))
	}, func(res provision.Result, err error) { r.finish(id, res, err) })
}

// finish logs, audits and records on the course's row what a read gave.
func (r *Roster) finish(id Identity, res provision.Result, err error) {
	course := fmt.Sprintf("LTI roster of %q (%s)", id.ContextTitle, id.Platform.Name)
	ev := store.Event{Kind: store.KindProvision, Email: id.Email, Outcome: "ok", Detail: course + ": " + res.String()}
	read := RosterRead{Result: res.String(), At: r.Now()}
	switch {
	case err != nil:
		ev.Outcome, ev.Detail = "failed", course+": "+err.Error()
		read.Result = "not read: " + err.Error()
		r.Logger.Warn("LTI roster: not provisioned; its members' first launches provision them", "course", id.ContextTitle, "lms", id.Platform.Name, "err", err)
	case res.Waiting():
		ev.Outcome = "waiting"
		read.Waiting = res.Eligible
		r.Logger.Warn("LTI roster: more people than the cap; the rest wait for an admin's confirmation in the console", "course", id.ContextTitle,
			"lms", id.Platform.Name, "people", res.Eligible, "cap", res.Cap, "accounts", res.Accounts)
	default:
		r.Logger.Info("LTI roster provisioned", "course", id.ContextTitle, "lms", id.Platform.Name, "members", res.Members,
			"accounts", res.Accounts, "skipped", res.Skipped, "no_email", res.NoEmail)
	}
	if aerr := r.Record(context.Background(), ev); aerr != nil {
		r.Logger.Warn("audit write failed", "err", aerr)
	}
	if cerr := r.Courses.RecordRoster(context.Background(), id.Platform.Issuer, id.Platform.ClientID, id.ContextID, read); cerr != nil {
		r.Logger.Warn("LTI roster: the result was not recorded", "err", cerr)
	}
}

// Run reads the course's roster member by member, admits its active
// members with an email up to limit (the rest are counted), and starts
// the provisioning job for their accounts (waiting while another job
// runs).
func (r *Roster) Run(ctx context.Context, id Identity, src signin.Source, limit int) (provision.Result, error) {
	members := func(ctx context.Context, yield func(provision.Member) error) error {
		return r.Services.EachMember(ctx, id.Platform, id.MembershipsURL, func(m Member) error {
			return yield(provision.Member{Subject: m.UserID, Email: m.Email, GivenName: m.GivenName, FamilyName: m.FamilyName, Name: m.Name, Active: m.Active()})
		})
	}
	return r.Roster.Run(ctx, provision.Read{Members: members, Source: src, Cap: limit, CapSetting: "lti roster_max",
		By: fmt.Sprintf("LTI roster of %q (%s), launched by %s", id.ContextTitle, id.Platform.Name, id.Email)})
}
