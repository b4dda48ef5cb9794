package provision

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/store"
)

// JobStore keeps the console's job (accounts.Store).
type JobStore interface {
	UnlinkedAccounts(ctx context.Context, afterID int64, limit int) ([]store.Account, error)
	StartProvisionJob(ctx context.Context, j store.ProvisionJob, staleBefore time.Time) error
	UpdateProvisionJob(ctx context.Context, j store.ProvisionJob) error
	LatestProvisionJob(ctx context.Context) (store.ProvisionJob, error)
}

// JobStale: a running job whose instance has not recorded progress for
// this long stopped with its instance; a new one may start (and goes on
// where it stopped: the accounts it linked are not unlinked).
const JobStale = 15 * time.Second

// jobBeat is how often a running job records its progress.
const jobBeat = time.Second

// Jobs runs the console's background provisioning of every unlinked
// account, one job at a time across the instances, its progress in the
// store for every instance's console.
type Jobs struct {
	store  JobStore
	p      Provisioner
	logger *slog.Logger
	now    func() time.Time
	owner  string
	// rateLimited counts the 429s this instance met (nil: not counted).
	rateLimited func() int64
	base        context.Context
	stop        context.CancelFunc
	wg          sync.WaitGroup
}

// NewJobs makes the job runner of this instance; Close stops its job.
// rateLimited, when set, counts the 429s this instance met: a job records
// those met while it ran.
func NewJobs(s JobStore, p Provisioner, logger *slog.Logger, now func() time.Time, rateLimited func() int64) *Jobs {
	if now == nil {
		now = time.Now
	}
	if rateLimited == nil {
		rateLimited = func() int64 { return 0 }
	}
	base, stop := context.WithCancel(context.Background())
	return &Jobs{store: s, p: p, logger: logger, now: now, owner: randid.Hex(8), rateLimited: rateLimited, base: base, stop: stop}
}

// Start starts provisioning every enabled unlinked account in the
// background, unless a job runs (accounts.ErrJobRunning).
func (j *Jobs) Start(ctx context.Context, startedBy string) error {
	var todo []store.Account
	for after := int64(0); ; {
		page, err := j.store.UnlinkedAccounts(ctx, after, 1000)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			break
		}
		todo = append(todo, page...)
		after = page[len(page)-1].ID
	}
	return j.StartFor(ctx, startedBy, todo)
}

// StartFor starts provisioning the accounts given (a course's roster) in
// the background, as Start does, unless a job runs
// (accounts.ErrJobRunning). Accounts linked already cost no platform call.
func (j *Jobs) StartFor(ctx context.Context, startedBy string, todo []store.Account) error {
	now := j.now()
	job := store.ProvisionJob{StartedBy: startedBy, Owner: j.owner, SeenAt: now, StartedAt: now, Total: len(todo), State: store.JobRunning}
	if err := j.store.StartProvisionJob(ctx, job, now.Add(-JobStale)); err != nil {
		return err
	}
	j.logger.Info("provisioning job started", "accounts", len(todo), "by", startedBy)
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		j.run(job, todo)
	}()
	return nil
}

// run provisions todo and records the progress every jobBeat.
func (j *Jobs) run(job store.ProvisionJob, todo []store.Account) {
	var mu sync.Mutex
	var tally Tally
	limitedAtStart := j.rateLimited()
	record := func(final bool) {
		job.RateLimited = int(j.rateLimited() - limitedAtStart)
		mu.Lock()
		job.Done, job.Created, job.Existed, job.Failed = tally.Done, tally.Created, tally.Existed+tally.Linked, tally.Failed
		mu.Unlock()
		job.SeenAt = j.now()
		if final {
			job.State, job.FinishedAt = store.JobDone, job.SeenAt
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := j.store.UpdateProvisionJob(ctx, job); err != nil {
			j.logger.Warn("provisioning job: progress not recorded", "err", err)
		}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(jobBeat)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				record(false)
			}
		}
	}()
	Run(j.base, j.p, todo, DefaultWorkers, func(r Row) {
		mu.Lock()
		tally.Add(r)
		mu.Unlock()
		if r.Outcome == Failed {
			j.logger.Warn("provisioning: an account failed", "email", r.Email, "reason", r.Reason)
		}
	})
	close(done)
	if j.base.Err() != nil {
		return // stopped with the instance: it shows as stopped once stale
	}
	record(true)
	j.logger.Info("provisioning job done", "created", tally.Created, "existed", tally.Existed, "failed", tally.Failed)
}

// Latest is the latest job, as the console shows it.
func (j *Jobs) Latest(ctx context.Context) (store.ProvisionJob, error) {
	return j.store.LatestProvisionJob(ctx)
}

// Close stops this instance's job (its accounts done so far stay linked).
func (j *Jobs) Close() {
	j.stop()
	j.wg.Wait()
}

// Describe says a job's state as the console shows it.
func Describe(job store.ProvisionJob, now time.Time) string {
	switch {
	case job.State == store.JobRunning && now.Sub(job.SeenAt) > JobStale:
		return "stopped (the instance running it stopped); start it again to go on"
	case job.State == store.JobRunning:
		return fmt.Sprintf("running, started by %s", job.StartedBy)
	default:
		return fmt.Sprintf("done at %s UTC", job.FinishedAt.UTC().Format("2006-01-02 15:04:05"))
	}
}
