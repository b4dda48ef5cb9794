package provision_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/launch/provision"
	"github.com/ssobridge/ssobridge/store"
)

// listing lists ms.
func listing(ms ...provision.Member) func(context.Context, func(provision.Member) error) error {
	return func(_ context.Context, yield func(provision.Member) error) error {
		for _, m := range ms {
			if err := yield(m); err != nil {
				return err
			}
		}
		return nil
	}
}

// A read admits the active members with an email and a subject, up to its
// cap, never as admins; the admission's refusals are skipped and counted,
// one account twice is provisioned once, and the job is started once for
// all, waiting while another runs.
func TestRosterRun(t *testing.T) {
	var admitted []signin.Arrival
	var jobs [][]store.Account
	busy := 2
	r := &provision.Roster{RetryEvery: time.Millisecond,
		Admit: func(_ context.Context, a signin.Arrival) (store.Account, error) {
			admitted = append(admitted, a)
			switch a.Email {
			case "outside@elsewhere.example":
				return store.Account{}, fmt.Errorf("refused: %w", signin.ErrNotTrusted)
			case "again@school.example":
				return store.Account{ID: 1, Email: "p1@school.example"}, nil
			}
			return store.Account{ID: int64(len(admitted)), Email: a.Email}, nil
		},
		Provision: func(_ context.Context, by string, accts []store.Account) error {
			if busy > 0 {
				busy--
				return store.ErrJobRunning
			}
			assert.Equal(t, "the test", by)
			jobs = append(jobs, accts)
			return nil
		}}
	members := listing(
		provision.Member{Subject: "u1", Email: "p1@school.example", Active: true},
		provision.Member{Subject: "u2", Email: "outside@elsewhere.example", Active: true},
		provision.Member{Subject: "u3", Email: "again@school.example", Active: true},
		provision.Member{Subject: "u4", Email: "left@school.example"},
		provision.Member{Subject: "u5", Active: true},
		provision.Member{Email: "nosubject@school.example", Active: true},
		provision.Member{Subject: "u7", Email: "p7@school.example", Active: true},
		provision.Member{Subject: "u8", Email: "p8@school.example", Active: true},
	)
	res, err := r.Run(t.Context(), provision.Read{Members: members, Source: signin.Source{ID: "lms", AdminAuthority: true}, Cap: 4, CapSetting: "roster_max", By: "the test"})
	require.NoError(t, err)
	assert.Equal(t, provision.Result{Members: 8, Inactive: 1, NoEmail: 1, Skipped: 2, Accounts: 2, Eligible: 5, Cap: 4, CapSetting: "roster_max"}, res)
	require.Len(t, admitted, 4, "the cap: the fifth eligible member is counted, not admitted")
	for _, a := range admitted {
		assert.False(t, a.Source.AdminAuthority, "a roster grants no admin role")
	}
	require.Len(t, jobs, 1, "one job, after the running ones")
	assert.Len(t, jobs[0], 2, "an account admitted twice is provisioned once")
	assert.True(t, res.Waiting())
	assert.Contains(t, res.String(), "5 people are more than the cap of 4 (roster_max)")

	busy = 1000
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err = r.Run(ctx, provision.Read{Members: members, Source: signin.Source{ID: "lms"}, Cap: 10})
	assert.ErrorIs(t, err, store.ErrJobRunning, "another job ran all the while")

	boom := errors.New("the roster broke off")
	_, err = r.Run(t.Context(), provision.Read{Source: signin.Source{ID: "lms"}, Members: func(context.Context, func(provision.Member) error) error { return boom }})
	assert.ErrorIs(t, err, boom)
}

// At most RostersAtOnce reads run at once; one that finds no slot within
// its time is done with an error.
func TestRosterStartBoundsReadsAtOnce(t *testing.T) {
	r := &provision.Roster{}
	release := make(chan struct{})
	started := make(chan struct{}, provision.RostersAtOnce)
	done := make(chan error, provision.RostersAtOnce+1)
	for range provision.RostersAtOnce {
		r.Start(time.Minute, func(context.Context) (provision.Result, error) {
			started <- struct{}{}
			<-release
			return provision.Result{}, nil
		}, func(_ provision.Result, err error) { done <- err })
	}
	for range provision.RostersAtOnce {
		<-started
	}
	r.Start(10*time.Millisecond, func(context.Context) (provision.Result, error) {
		t.Error("a third read ran while two did")
		return provision.Result{}, nil
	}, func(_ provision.Result, err error) { done <- err })
	assert.ErrorContains(t, <-done, "other rosters were read all the while")
	close(release)
	for range provision.RostersAtOnce {
		assert.NoError(t, <-done)
	}
}
