package lti

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	Courses Courses
	UseOnce func(ctx context.Context, kind, id string, until time.Time) error
	Logger  *slog.Logger
	Now     func() time.Time
	// RetryEvery is how often a roster waiting for a running job tries
	// again (15 s unless set), for at most RosterEvery.
	RetryEvery time.Duration
}

// RosterResult is what a roster read gave.
type RosterResult struct {
	Members  int // listed
	Inactive int // not active in the course
	NoEmail  int // active, without an email
	Skipped  int // refused by the admission (outside email_domains, no account, disabled)
	Accounts int // provisioned by the job
}

func (r RosterResult) String() string {
	return fmt.Sprintf("%d members: %d accounts provisioned, %d skipped by the admission rules, %d without an email, %d inactive",
		r.Members, r.Accounts, r.Skipped, r.NoEmail, r.Inactive)
}

// Courses keeps the courses instructors launched from (a store.Store).
type Courses interface {
	SeeLTICourse(ctx context.Context, c store.LTICourse) error
	LTICourses(ctx context.Context, limit int) ([]store.LTICourse, error)
	RecordLTIRoster(ctx context.Context, issuer, clientID, contextID, result string, at time.Time) error
}

// Start records the course of an instructor's launch and reads and
// provisions its roster in the background, unless it was read within
// RosterEvery (here or on another instance).
func (r *Roster) Start(id Identity, src signin.Source) {
	now := r.Now()
	if err := r.Courses.SeeLTICourse(context.Background(), store.LTICourse{Issuer: id.Platform.Issuer, ClientID: id.Platform.ClientID,
		ContextID: id.ContextID, Title: id.ContextTitle, MembershipsURL: id.MembershipsURL, LaunchedBy: id.Email, LastLaunchAt: now}); err != nil {
		r.Logger.Warn("LTI roster: the course was not recorded", "err", err)
	}
	key := id.Platform.Issuer + "\x00" + id.Platform.ClientID + "\x00" + id.ContextID
	switch err := r.UseOnce(context.Background(), rosterKind, key, now.Add(RosterEvery)); {
	case errors.Is(err, store.ErrUsed):
		return // read lately, here or on another instance
	case err != nil:
		r.Logger.Warn("LTI roster: not read", "err", err)
		return
	}
	r.StartNow(id, src)
}

// StartNow reads and provisions a course's roster in the background at
// once (an admin's action in the console).
func (r *Roster) StartNow(id Identity, src signin.Source) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), RosterEvery)
		defer cancel()
		res, err := r.Run(ctx, id, src)
		course := fmt.Sprintf("LTI roster of %q (%s)", id.ContextTitle, id.Platform.Name)
		ev := store.Event{Kind: store.KindProvision, Email: id.Email, Outcome: "ok", Detail: course + ": " + res.String()}
		if err != nil {
			ev.Outcome, ev.Detail = "failed", course+": "+err.Error()
			r.Logger.Warn("LTI roster: not provisioned; its members' first launches provision them", "course", id.ContextTitle, "lms", id.Platform.Name, "err", err)
		} else {
			r.Logger.Info("LTI roster provisioned", "course", id.ContextTitle, "lms", id.Platform.Name, "members", res.Members,
				"accounts", res.Accounts, "skipped", res.Skipped, "no_email", res.NoEmail)
		}
		if aerr := r.Record(context.Background(), ev); aerr != nil {
			r.Logger.Warn("audit write failed", "err", aerr)
		}
		said := res.String()
		if err != nil {
			said = "failed: " + err.Error()
		}
		if cerr := r.Courses.RecordLTIRoster(context.Background(), id.Platform.Issuer, id.Platform.ClientID, id.ContextID, said, r.Now()); cerr != nil {
			r.Logger.Warn("LTI roster: the result was not recorded", "err", cerr)
		}
	}()
}

// Run reads the course's roster, admits its active members with an email
// and starts the provisioning job for their accounts (waiting while
// another job runs).
func (r *Roster) Run(ctx context.Context, id Identity, src signin.Source) (RosterResult, error) {
	var res RosterResult
	members, err := r.Services.Members(ctx, id.Platform, id.MembershipsURL)
	if err != nil {
		return res, err
	}
	src.AdminAuthority = false // a roster grants and removes no admin role
	seen := map[int64]bool{}
	var accts []store.Account
	for _, m := range members {
		res.Members++
		switch {
		case !m.Active():
			res.Inactive++
			continue
		case m.Email == "":
			res.NoEmail++
			continue
		}
		acct, err := r.Admit(ctx, signin.Arrival{Source: src, Subject: m.UserID, Email: m.Email,
			Names: accounts.Names{Given: m.GivenName, Family: m.FamilyName, Full: m.Name}})
		switch {
		case errors.Is(err, signin.ErrNotTrusted), errors.Is(err, signin.ErrNotAdoptable), errors.Is(err, signin.ErrNoAccount),
			errors.Is(err, signin.ErrBadAddress), errors.Is(err, signin.ErrDisabled):
			res.Skipped++
			continue
		case err != nil:
			return res, err
		}
		if !seen[acct.ID] {
			seen[acct.ID] = true
			accts = append(accts, acct)
		}
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
