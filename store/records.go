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

// ErrLTIPlatformTaken: an LMS with this issuer and client id is
// registered already.
var ErrLTIPlatformTaken = errors.New("store: this LMS (issuer and client id) is registered already")

// LTIPlatform is an LMS registered by LTI Dynamic Registration: what the
// LMS's OpenID configuration and registration answered, and the rules
// the admin who made the registration URL chose.
type LTIPlatform struct {
	Name         string
	Issuer       string
	ClientID     string
	DeploymentID string
	AuthURL      string
	JWKSURL      string
	TokenURL     string
	// EmailDomains (space-separated) and CreateAccounts are its
	// admission rules, as lti.platforms' keys of the same names.
	EmailDomains   string
	CreateAccounts bool
	RegisteredAt   time.Time
	RegisteredBy   string // the admin who made the registration URL
	Disabled       bool
}

// LTICourse is a course of an LMS an instructor launched from, whose
// roster the bridge may read (NRPS).
type LTICourse struct {
	Issuer, ClientID, ContextID string
	Title                       string
	MembershipsURL              string
	LaunchedBy                  string // the instructor's address at the last launch
	LastLaunchAt                time.Time
	LastRoster                  string // what the last roster read gave, or why it failed
	LastRosterAt                time.Time
	// RosterWaiting is how many people the last read found past the
	// platform's cap, waiting for an admin's confirmation (0: none).
	RosterWaiting int
}

// RosterRead is what one read of a course's roster gave.
type RosterRead struct {
	Result  string
	Waiting int // the people waiting for an admin's confirmation (0: none)
	At      time.Time
}
