package store

import (
	"errors"
	"log/slog"
	"time"
)

// RegulationConfig bounds failed sign-ins.
type RegulationConfig struct {
	MaxRetries      int           // attempts per email within FindTime before a ban; 0 = off
	MaxRetriesPerIP int           // attempts per client IP within FindTime before a ban; 0 = off
	FindTime        time.Duration // the window attempts are counted in
	BanTime         time.Duration // how long a ban lasts
}

// ErrUnavailable: the database did not answer in time, or refused the
// connection. It is temporary: the page says the service will be back in a
// moment (503 with Retry-After), and nothing was changed.
var ErrUnavailable = errors.New("accounts: the database is unavailable")

// FailureLevel is the level of a log line for a store failure: ERROR,
// except while the database is away, when the guard has logged the outage
// once and a line per request would bury it.
func FailureLevel(err error) slog.Level {
	if errors.Is(err, ErrUnavailable) {
		return slog.LevelDebug
	}
	return slog.LevelError
}

// DefaultTimeout is how long one store call may take unless store.timeout
// says otherwise.
const DefaultTimeout = 2 * time.Second

// OutageStats is what the store's guard (sqlstore.Guard) has seen of the
// database, for metrics.
type OutageStats struct {
	Up       bool
	Outages  int64         // outages begun
	Down     time.Duration // time unavailable, the current outage included
	Timeouts int64         // calls that ran past the deadline
	Lost     int64         // calls that found the connection refused or broken
	Refused  int64         // calls refused at once while the database was silent
}
