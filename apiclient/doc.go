// Package apiclient is the client of the video platform's Partner API
// (server-to-server, under {base_url}/api/5).
//
// It signs every attempt afresh (HMAC or simple method), retries by the
// platform's rules (429 with backoff and Retry-After, one retry of a 5xx or
// network error for safe calls, never a blind retry of user creation), maps
// HTTP statuses to typed errors that callers test with errors.Is/As, and
// implements the check-then-create user provisioning the SSO flow relies on.
//
// Secrets never appear in an error string: errors carry the method, the
// endpoint, the status and the platform's message, never the headers.
package apiclient
