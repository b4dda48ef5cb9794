package apiclient

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Error classes. Test an error with errors.Is(err, ErrForbidden) and so on;
// *APIError answers for its status class, *ClockSkewError for
// ErrClockSkew and ErrUnauthorized, *TransportError for ErrUnreachable or
// ErrTimeout.
var (
	ErrBadRequest   = errors.New("platform rejected the request (400)")
	ErrUnauthorized = errors.New("platform refused the credentials (401)")
	ErrClockSkew    = errors.New("platform refused the request: clocks differ")
	ErrForbidden    = errors.New("API user is not an admin of the Instance (403)")
	ErrNotFound     = errors.New("platform resource not found (404)")
	ErrConflict     = errors.New("platform resource already exists (409)")
	ErrRateLimited  = errors.New("platform rate limit reached (429)")
	ErrServer       = errors.New("platform server error (5xx)")
	ErrUnexpected   = errors.New("platform answered an unexpected status")
	ErrUnreachable  = errors.New("platform unreachable")
	ErrTimeout      = errors.New("platform did not answer in time")
	ErrBadResponse  = errors.New("platform answer could not be read")
)

// APIError is a non-success answer of the platform.
type APIError struct {
	Endpoint   string        // stable endpoint name, e.g. "list_users"
	Method     string        // HTTP method
	Status     int           // HTTP status code
	Message    string        // the platform's "message", if any
	Body       []byte        // the raw body, read through a size limit
	RetryAfter time.Duration // from Retry-After, when present
	ServerDate time.Time     // from the response Date header, when present
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("platform %s %s: %d: %s", e.Method, e.Endpoint, e.Status, msg)
}

// Is matches the error class of the status.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrBadRequest:
		return e.Status == http.StatusBadRequest
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	case ErrForbidden:
		return e.Status == http.StatusForbidden
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrConflict:
		return e.Status == http.StatusConflict
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	case ErrServer:
		return e.Status >= 500
	case ErrUnexpected:
		return !knownStatus(e.Status)
	}
	return false
}

func knownStatus(s int) bool {
	switch s {
	case 400, 401, 403, 404, 409, 429:
		return true
	}
	return s >= 500
}

// ClockSkewError is a 401 whose response Date shows the clocks more than
// MaxClockSkew apart: the cause is the clock, not the secret.
type ClockSkewError struct {
	Offset time.Duration // platform clock minus ours
	Err    *APIError
}

// MaxClockSkew is how far the clocks may differ before a 401 is blamed on
// the clock.
const MaxClockSkew = time.Minute

func (e *ClockSkewError) Error() string {
	return fmt.Sprintf("%v (the platform's clock is %s from ours)", e.Err, e.Offset.Round(time.Second))
}

// Is reports ErrClockSkew.
func (e *ClockSkewError) Is(target error) bool { return target == ErrClockSkew }

// Unwrap gives the underlying 401.
func (e *ClockSkewError) Unwrap() error { return e.Err }

// TransportError is a failure to get any answer: DNS, connection, TLS or
// a timeout.
type TransportError struct {
	Endpoint string
	Method   string
	Timeout  bool
	Err      error
}

func (e *TransportError) Error() string {
	what := "unreachable"
	if e.Timeout {
		what = "timed out"
	}
	return fmt.Sprintf("platform %s %s: %s: %v", e.Method, e.Endpoint, what, e.Err)
}

// Is reports ErrTimeout or ErrUnreachable.
func (e *TransportError) Is(target error) bool {
	if e.Timeout {
		return target == ErrTimeout
	}
	return target == ErrUnreachable
}

// Unwrap gives the cause.
func (e *TransportError) Unwrap() error { return e.Err }

// Retryable reports whether a later attempt may succeed without any change
// of configuration: rate limits, server errors and transport failures.
func Retryable(err error) bool {
	return errors.Is(err, ErrRateLimited) || errors.Is(err, ErrServer) ||
		errors.Is(err, ErrUnreachable) || errors.Is(err, ErrTimeout)
}
