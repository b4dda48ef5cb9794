package store

import (
	"errors"
	"time"
)

// Ticket is a launch waiting its turn for the platform's pace (package
// waitline): it lets any instance answer the waiting user's refresh, and
// another instance take the launch over when its own stopped.
type Ticket struct {
	ID        string // random; in the waiting page's URL, bound to the account
	AccountID int64
	SessionID string // the session that made it (Session.ID): only it redeems the ticket
	ReturnTo  string
	ArrivedAt time.Time // its place in the line
	ETA       time.Time // when its instance expects it done
	Owner     string    // the instance running the launch
	SeenAt    time.Time // the owner's last heartbeat
	State     string    // TicketWaiting, TicketDone or TicketFailed
	Sealed    string    // done: the exchange URL, sealed; never in the clear
	Failure   string    // failed: what the page needs (package waitline's encoding)
	ExpiresAt time.Time // pruned after
}

// Ticket states.
const (
	TicketWaiting = "waiting"
	TicketDone    = "done"
	TicketFailed  = "failed"
)

// ProvisionJob is the console's background provisioning of every
// unlinked account: one at a time, its progress kept in the store so
// every instance shows it.
type ProvisionJob struct {
	State       string // JobRunning or JobDone
	StartedBy   string // the admin's email
	Owner       string // the instance running it
	SeenAt      time.Time
	StartedAt   time.Time
	FinishedAt  time.Time
	Total       int
	Done        int // accounts handled, whatever their outcome
	Created     int
	Existed     int
	Failed      int
	RateLimited int // 429s the instance met while it ran
}

// Provisioning job states.
const (
	JobRunning = "running"
	JobDone    = "done"
)

// ErrJobRunning: a provisioning job runs already.
var ErrJobRunning = errors.New("accounts: a provisioning job is running")
