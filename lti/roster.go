package lti

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/signin"
	"github.com/ssobridge/ssobridge/store"
)

// RosterEvery is how often a course's roster is read at most (on every
// instance together): an instructor's launches within it start nothing.
const RosterEvery = 10 * time.Minute

// rosterKind spends a course's roster read once per RosterEvery.
const rosterKind = "lti-roster"

// Roster provisions a course's members ahead of their first launch: when
// an instructor launches, the course's roster (NRPS) is read, each
// active member with an email is admitted as a launch of theirs would be
// (the platform's email_domains and create_accounts; never an admin
// role), and their platform users are created by a background job at
// background priority under the shared budget. A member the admission
// refuses is skipped and counted; members who left are not deleted. An
// unreadable token endpoint or roster is logged and audited; launches
// are not affected.
//
// Platform users are what the partner pays for, so one read admits at
// most the platform's roster cap (lti.roster_max): the members past it
// are counted, not admitted, and the course waits for an admin's
// confirmation of the whole number in the console. The roster is read
// member by member (never whole in memory), and at most RostersAtOnce
// rosters are read at once on an instance.
type Roster struct {
	Services *Services
	// Admit is the admission (signin.Admission's Admit).
	Admit func(ctx context.Context, a signin.Arrival) (store.Account, error)
	// Provision starts the console's provisioning job for the accounts
	// (store.ErrJobRunning while one runs).
	Provision func(ctx context.Context, startedBy string, accts []store.Account) error
	// Record writes the audit (store.Store's Record).
	Record func(ctx context.Context, ev store.Event) error
	// Courses keeps the courses instructors launched from and their last
	// roster reads, for the console (a store.Store).
	Courses *Records
	UseOnce func(ctx context.Context, kind, id string, until time.Time) error
	Logger  *slog.Logger
	Now     func() time.Time
	// RetryEvery is how often a roster waiting for a running job tries
	// again (15 s unless set), for at most RosterEvery.
	RetryEvery time.Duration
	// Max is the cap of a platform whose RosterMax is 0 (DefaultRosterMax
	// unless set).
	Max int

	slots     chan struct{}
	slotsOnce sync.Once
}

// DefaultRosterMax is the members one roster read admits unless the
// platform or lti.roster_max says otherwise.
const DefaultRosterMax = 500

// RostersAtOnce bounds the rosters one instance reads at once; the others
// wait their turn (within RosterEvery).
const RostersAtOnce = 2

// RosterResult is what a roster read gave.
type RosterResult struct {
	Members  int // listed
	Inactive int // not active in the course
	NoEmail  int // active, without an email
	Skipped  int // refused by the admission (outside email_domains, no account, disabled)
	Accounts int // provisioned by the job
	// Eligible are the active members with an email; past Cap, only
	// Cap of them were admitted and the rest wait for a confirmation.
	Eligible int
	Cap      int
}

// Waiting reports whether the roster went past its cap: the course waits
// for an admin to confirm Eligible people.
func (r RosterResult) Waiting() bool { return r.Cap > 0 && r.Eligible > r.Cap }

func (r RosterResult) String() string {
	s := fmt.Sprintf("%d members: %d accounts provisioned, %d skipped by the admission rules, %d without an email, %d inactive",
		r.Members, r.Accounts, r.Skipped, r.NoEmail, r.Inactive)
	if r.Waiting() {
		s += fmt.Sprintf("; %d people are more than the cap of %d (lti roster_max): the rest wait for an admin's confirmation in the console", r.Eligible, r.Cap)
	}
	return s
}

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
		r.finish(id, RosterResult{}, fmt.Errorf("the read could not be claimed: %w", err))
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
	r.slotsOnce.Do(func() { r.slots = make(chan struct{}, RostersAtOnce) })
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), RosterEvery)
		defer cancel()
		select {
		case r.slots <- struct{}{}:
			defer func() { <-r.slots }()
		case <-ctx.Done():
			r.finish(id, RosterResult{}, fmt.Errorf("%d other rosters were read all the while", RostersAtOnce))
			return
		}
		res, err := r.Run(ctx, id, src, max(r.cap(id.Platform), confirmed))
		r.finish(id, res, err)
	}()
}

// finish logs, audits and records on the course's row what a read gave.
func (r *Roster) finish(id Identity, res RosterResult, err error) {
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
func (r *Roster) Run(ctx context.Context, id Identity, src signin.Source, limit int) (RosterResult, error) {
	res := RosterResult{Cap: limit}
	src.AdminAuthority = false // a roster grants and removes no admin role
	seen := map[int64]bool{}
	var accts []store.Account
	err := r.Services.EachMember(ctx, id.Platform, id.MembershipsURL, func(m Member) error {
		res.Members++
		switch {
		case !m.Active():
			res.Inactive++
			return nil
		case m.Email == "":
			res.NoEmail++
			return nil
		case len(m.UserID) > store.MaxKey || m.UserID == "":
			res.Skipped++
			return nil
		}
		res.Eligible++
		if res.Eligible > limit {
			return nil // counted, never admitted: past the cap nothing is made
		}
		acct, err := r.Admit(ctx, signin.Arrival{Source: src, Subject: m.UserID, Email: m.Email,
			Names: accounts.Names{Given: m.GivenName, Family: m.FamilyName, Full: m.Name}})
		switch {
		case errors.Is(err, signin.ErrNotTrusted), errors.Is(err, signin.ErrNotAdoptable), errors.Is(err, signin.ErrNoAccount),
			errors.Is(err, signin.ErrBadAddress), errors.Is(err, signin.ErrDisabled):
			res.Skipped++
			return nil
		case err != nil:
			return err
		}
		if !seen[acct.ID] {
			seen[acct.ID] = true
			accts = append(accts, acct)
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	res.Accounts = len(accts)
	if len(accts) == 0 {
		return res, nil
	}
	every := r.RetryEvery
	if every <= 0 {
		every = 15 * time.Second
	}
	by := fmt.Sprintf("LTI roster of %q (%s), launched by %s", id.ContextTitle, id.Platform.Name, id.Email)
	for {
		err := r.Provision(ctx, by, accts)
		if !errors.Is(err, store.ErrJobRunning) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("another provisioning job ran all the while: %w", err)
		case <-time.After(every):
		}
	}
}
