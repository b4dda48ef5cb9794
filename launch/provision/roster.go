package provision

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/store"
)

// Roster provisions the members of a group ahead of their first arrival
// (a course's roster an LMS lists, or any way in that can list members):
// each active member with an email is admitted as an arrival of theirs
// would be (the source's email domains and create_accounts; never an
// admin role), and their platform users are made by the console's
// provisioning job at background priority under the shared budget. A
// member the admission refuses is skipped and counted; members who left
// are not deleted.
//
// Platform users are what the partner pays for, so one read admits at
// most its cap: the members past it are counted, not admitted, and the
// group waits for an admin's confirmation of the whole number. Members
// come one by one (never a whole roster in memory), and at most
// RostersAtOnce rosters are read at once on an instance.
type Roster struct {
	// Admit is the admission (signin.Admission's Admit).
	Admit func(ctx context.Context, a signin.Arrival) (store.Account, error)
	// Provision starts the console's provisioning job for the accounts
	// (store.ErrJobRunning while one runs; Jobs.StartFor).
	Provision func(ctx context.Context, startedBy string, accts []store.Account) error
	// RetryEvery is how often a roster waiting for a running job tries
	// again (15 s unless set), until its context ends.
	RetryEvery time.Duration

	slots     chan struct{}
	slotsOnce sync.Once
}

// RostersAtOnce bounds the rosters one instance reads at once; the others
// wait their turn.
const RostersAtOnce = 2

// Member is one person a roster lists.
type Member struct {
	Subject                     string // their stable id at the source
	Email                       string
	GivenName, FamilyName, Name string
	Active                      bool // active in the group
}

// Read is one roster to read.
type Read struct {
	// Members lists the roster, one member a call of yield (its error
	// ends the listing).
	Members func(ctx context.Context, yield func(Member) error) error
	Source  signin.Source // whom the members arrive by
	Cap     int           // the members one read admits (0: no cap)
	// CapSetting names the cap's setting in the result ("lti
	// roster_max").
	CapSetting string
	By         string // who started it, as the provisioning job says
}

// Result is what a roster read gave.
type Result struct {
	Members  int // listed
	Inactive int // not active in the group
	NoEmail  int // active, without an email
	Skipped  int // refused by the admission (outside email_domains, no account, disabled)
	Accounts int // provisioned by the job
	// Eligible are the active members with an email; past Cap, only Cap
	// of them were admitted and the rest wait for a confirmation.
	Eligible   int
	Cap        int
	CapSetting string
}

// Waiting reports whether the roster went past its cap: the group waits
// for an admin to confirm Eligible people.
func (r Result) Waiting() bool { return r.Cap > 0 && r.Eligible > r.Cap }

func (r Result) String() string {
	s := fmt.Sprintf("%d members: %d accounts provisioned, %d skipped by the admission rules, %d without an email, %d inactive",
		r.Members, r.Accounts, r.Skipped, r.NoEmail, r.Inactive)
	if r.Waiting() {
		s += fmt.Sprintf("; %d people are more than the cap of %d (%s): the rest wait for an admin's confirmation in the console", r.Eligible, r.Cap, r.CapSetting)
	}
	return s
}

// Start runs read in the background within d, once a slot of
// RostersAtOnce is free, and hands its outcome to done (an error when no
// slot came free within d).
func (r *Roster) Start(d time.Duration, read func(ctx context.Context) (Result, error), done func(Result, error)) {
	r.slotsOnce.Do(func() { r.slots = make(chan struct{}, RostersAtOnce) })
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		select {
		case r.slots <- struct{}{}:
			defer func() { <-r.slots }()
		case <-ctx.Done():
			done(Result{}, fmt.Errorf("%d other rosters were read all the while", RostersAtOnce))
			return
		}
		done(read(ctx))
	}()
}

// Run reads rd's members one by one, admits its active members with an
// email up to its cap (the rest are counted), and starts the
// provisioning job for their accounts (waiting while another job runs).
func (r *Roster) Run(ctx context.Context, rd Read) (Result, error) {
	res := Result{Cap: rd.Cap, CapSetting: rd.CapSetting}
	src := rd.Source
	src.AdminAuthority = false // a roster grants and removes no admin role
	seen := map[int64]bool{}
	var accts []store.Account
	err := rd.Members(ctx, func(m Member) error {
		res.Members++
		switch {
		case !m.Active:
			res.Inactive++
			return nil
		case m.Email == "":
			res.NoEmail++
			return nil
		case len(m.Subject) > store.MaxKey || m.Subject == "":
			res.Skipped++
			return nil
		}
		res.Eligible++
		if rd.Cap > 0 && res.Eligible > rd.Cap {
			return nil // counted, never admitted: past the cap nothing is made
		}
		acct, err := r.Admit(ctx, signin.Arrival{Source: src, Subject: m.Subject, Email: m.Email,
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
	for {
		err := r.Provision(ctx, rd.By, accts)
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
