package store

import (
	"errors"
	"strings"
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

// The failed SCIM token checks of a client IP count under an address of
// that IP's own (and under the IP): one per IP, so that the failures of
// one client never stop the count of another's. The bans list shows it.
const (
	scimTokenPrefix = "scim-token+"
	scimTokenDomain = "@scim.invalid"
)

// SCIMTokenAddress is the address the failed SCIM token checks of ip
// count under.
func SCIMTokenAddress(ip string) string {
	return scimTokenPrefix + strings.NewReplacer(":", "-", "%", "-").Replace(ip) + scimTokenDomain
}

// SCIMClient is the client IP of a ban on a SCIM client's failed token
// checks (ok false for any other ban). An IPv6 address reads back with
// its colons; a zone is not told apart from one.
func (b Ban) SCIMClient() (ip string, ok bool) {
	if b.Kind != BanEmail {
		return "", false
	}
	rest, found := strings.CutPrefix(b.Value, scimTokenPrefix)
	if !found {
		return "", false
	}
	ip, found = strings.CutSuffix(rest, scimTokenDomain)
	if !found || ip == "" {
		return "", false
	}
	if !strings.Contains(ip, ".") {
		ip = strings.ReplaceAll(ip, "-", ":")
	}
	return ip, true
}
