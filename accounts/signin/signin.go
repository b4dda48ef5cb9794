// Package signin holds the rules of signing in that every way in shares:
// a password sign-in under regulation (Password), a session's validity on
// every request (Session, Start), and a new password, set through a
// set-password link or by an admin (SetPasswordByLink, SetPassword,
// NewPasswordHash). The handlers parse the request, call the Service and
// render its answer; the cookie that carries a session is theirs.
package signin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/accounts/regulation"
	"github.com/ssobridge/ssobridge/store"
)

// Accounts are the accounts as signing in reads and changes them.
type Accounts interface {
	AccountByEmail(ctx context.Context, email string) (store.Account, error)
	AccountByID(ctx context.Context, id int64) (store.Account, error)
	SetPasswordHash(ctx context.Context, id int64, hash string) error
	LiftBans(ctx context.Context, email, ip string) (int, error)
}

// Sessions are the signed-in devices' records.
type Sessions interface {
	AccountByID(ctx context.Context, id int64) (store.Account, error)
	// FreshAccountByID reads past any cache in front of the database.
	FreshAccountByID(ctx context.Context, id int64) (store.Account, error)
	CreateSession(ctx context.Context, s store.Session) error
	SessionByID(ctx context.Context, id string) (store.Session, error)
	TouchSession(ctx context.Context, id string, at, seenBefore time.Time) (bool, error)
}

// PasswordLinks are the set-password links, stored by the SHA-256 of their
// token (accounts.SessionID).
type PasswordLinks interface {
	PasswordLink(ctx context.Context, id string, now time.Time) (int64, error)
	TakePasswordLink(ctx context.Context, id string, now time.Time) (int64, error)
}

// Passwords hashes and verifies passwords (passhash.Hasher). Verify and
// VerifyDummy answer passhash.ErrPasswordMismatch for a wrong password.
type Passwords interface {
	Hash(ctx context.Context, password string) (string, error)
	Verify(ctx context.Context, password, encoded string) error
	// VerifyDummy spends a verification's work for an unknown email.
	VerifyDummy(ctx context.Context, password string) error
}

// Regulator bans after repeated failed sign-ins (regulation.Regulator).
type Regulator interface {
	// Admit counts an attempt before its password is verified; a non-zero
	// bannedUntil refuses it.
	Admit(ctx context.Context, email, ip string) (a regulation.Attempt, bannedUntil time.Time, err error)
	// Fail records a wrong password and reports whether a ban started.
	Fail(ctx context.Context, a regulation.Attempt) (banStarted bool, err error)
	// Succeed clears the failures counted for the attempt's email.
	Succeed(ctx context.Context, a regulation.Attempt) error
}

// Config is what the Service is built from.
type Config struct {
	Accounts  Accounts
	Sessions  Sessions
	Links     PasswordLinks
	Passwords Passwords
	Regulator Regulator
	// MaxAge is a session's absolute lifetime, IdleTimeout its lifetime
	// without requests (at most MaxAge).
	MaxAge, IdleTimeout time.Duration
	Now                 func() time.Time // time.Now if nil
}

// Service applies the rules; safe for concurrent use.
type Service struct{ c Config }

// New returns the Service of c.
func New(c Config) *Service {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxAge <= 0 {
		c.MaxAge = 12 * time.Hour
	}
	if c.IdleTimeout <= 0 || c.IdleTimeout > c.MaxAge {
		c.IdleTimeout = c.MaxAge
	}
	return &Service{c: c}
}

// Limits of what a password sign-in takes: longer input fails (counted
// like a wrong password) without being looked up.
const (
	MaxEmail    = 254
	MaxPassword = 1024
)

// BannedError refuses a sign-in while a ban holds, even with the right
// password; it says only until when.
type BannedError struct{ Until time.Time }

func (e *BannedError) Error() string {
	return "signin: too many failed sign-ins; banned until " + e.Until.UTC().Format(time.RFC3339)
}

// FailedError is a failed password sign-in. Every failure answers the same
// page (it must not tell whether the email has an account); Reason is for
// the audit log and the server log only.
type FailedError struct {
	AccountID  int64  // 0 for an unknown email
	Reason     string // "unknown email", "wrong password", "account disabled", "input too long"
	BanStarted bool   // this failure started a ban
}

func (e *FailedError) Error() string { return "signin: sign-in failed: " + e.Reason }

// Password signs in with an email and a password from ip. The attempt
// takes its place in the regulation's count before its password is
// verified, so parallel attempts cannot test more passwords than the
// limit; an unknown email spends one verification against a dummy hash, so
// both failures cost the same. Errors: *BannedError, *FailedError, or the
// store's and the hasher's own (passhash.ErrBusy, store.ErrBusy, ...).
func (s *Service) Password(ctx context.Context, email, password, ip string) (store.Account, error) {
	attempt, until, err := s.c.Regulator.Admit(ctx, email, ip)
	if err != nil {
		return store.Account{}, err
	}
	if !until.IsZero() {
		return store.Account{}, &BannedError{Until: until}
	}
	acct, reason, err := s.checkPassword(ctx, email, password)
	if err != nil {
		return store.Account{}, err
	}
	if reason != "" {
		banned, err := s.c.Regulator.Fail(ctx, attempt)
		if err != nil {
			return store.Account{}, err
		}
		return store.Account{}, &FailedError{AccountID: acct.ID, Reason: reason, BanStarted: banned}
	}
	if err := s.c.Regulator.Succeed(ctx, attempt); err != nil {
		return store.Account{}, err
	}
	return acct, nil
}

// checkPassword returns the account and "" when the password is its, or
// why not (with the account when there is one).
func (s *Service) checkPassword(ctx context.Context, email, password string) (store.Account, string, error) {
	if len(email) > MaxEmail || len(password) > MaxPassword {
		return store.Account{}, "input too long", nil
	}
	acct, err := s.c.Accounts.AccountByEmail(ctx, email)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// Spend the same hashing work as for a wrong password.
		if err := s.c.Passwords.VerifyDummy(ctx, password); !errors.Is(err, passhash.ErrPasswordMismatch) {
			return store.Account{}, "", err
		}
		return store.Account{}, "unknown email", nil
	case err != nil:
		return store.Account{}, "", err
	}
	if err := s.c.Passwords.Verify(ctx, password, acct.PasswordHash); err != nil {
		if !errors.Is(err, passhash.ErrPasswordMismatch) {
			return store.Account{}, "", err
		}
		return acct, "wrong password", nil
	}
	if acct.Disabled {
		return acct, "account disabled", nil
	}
	return acct, "", nil
}

// Cookie is what a session cookie says of its session.
type Cookie struct {
	AccountID int64
	Epoch     int64     // the account's session epoch at sign-in
	Issued    time.Time // sign-in
	LastSeen  time.Time // the last request the cookie knows of
	Token     string    // the session's random token (accounts.SessionID names its record)
}

// ErrSessionEnded: the cookie no longer names a valid session (timed out,
// the account disabled or gone, this device signed out, or every device).
var ErrSessionEnded = errors.New("signin: the session has ended")

// Valid is a valid session.
type Valid struct {
	Account   store.Account
	SessionID string // the stored session's ID (this device)
	// Touched is when the session's last-seen time moved (zero: it did
	// not); the cookie is to carry it.
	Touched time.Time
}

// TouchEvery is how often a session's last-seen time is written at most.
const TouchEvery = time.Minute

// Session checks a cookie on a request: its absolute age and idle time, the
// account (not disabled, the same epoch: a new password or "sign out
// everywhere" raises it) and this device's record. It moves the record's
// last-seen time at most once a TouchEvery, decided by the stored record
// (read on every request already), never by the cookie alone: a client that
// sends an old cookie back (a script, a kiosk, a browser that refuses the
// renewed cookie) costs no write. ErrSessionEnded, or the store's error.
func (s *Service) Session(ctx context.Context, c Cookie) (Valid, error) {
	now := s.c.Now()
	if now.Sub(c.Issued) > s.c.MaxAge || now.Sub(c.LastSeen) > s.c.IdleTimeout {
		return Valid{}, ErrSessionEnded
	}
	acct, err := s.c.Sessions.AccountByID(ctx, c.AccountID)
	if err == nil && acct.SessionEpoch < c.Epoch {
		// The cookie is newer than the account this instance holds: another
		// instance changed it (a sign-out, a new password) and has signed
		// in since. Read past the cache rather than void a valid session.
		acct, err = s.c.Sessions.FreshAccountByID(ctx, c.AccountID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return Valid{}, ErrSessionEnded
	}
	if err != nil {
		return Valid{}, err
	}
	if acct.Disabled || acct.SessionEpoch != c.Epoch {
		return Valid{}, ErrSessionEnded
	}
	// The device's session must still be on record (signing out one device
	// deletes only its record).
	sid := accounts.SessionID(c.Token)
	sess, err := s.c.Sessions.SessionByID(ctx, sid)
	if errors.Is(err, store.ErrNotFound) || (err == nil && sess.AccountID != c.AccountID) {
		return Valid{}, ErrSessionEnded
	}
	if err != nil {
		return Valid{}, err
	}
	v := Valid{Account: acct, SessionID: sid}
	if due := now.Add(-TouchEvery); !sess.LastSeenAt.After(due) {
		wrote, err := s.c.Sessions.TouchSession(ctx, sid, now, due)
		if err != nil {
			return Valid{}, err
		}
		if wrote { // else a request beside this one moved it
			v.Touched = now
		}
	}
	return v, nil
}

// Start records a new session of acct (a device) under a fresh random
// token, returned for the cookie with the session's stored ID and the
// start time.
func (s *Service) Start(ctx context.Context, acct store.Account, userAgent string) (token, id string, at time.Time, err error) {
	token, id = accounts.NewSessionToken()
	at = s.c.Now()
	if err := s.c.Sessions.CreateSession(ctx, store.Session{ID: id, AccountID: acct.ID, CreatedAt: at, LastSeenAt: at, UserAgent: userAgent}); err != nil {
		return "", "", time.Time{}, err
	}
	return token, id, at, nil
}

// ErrLinkGone: a set-password link that is unknown, used or expired.
var ErrLinkGone = errors.New("signin: the set-password link is used or expired")

// ErrDisabled: the account is disabled (a set-password link's, an
// arrival's).
var ErrDisabled = errors.New("signin: the account is disabled")

// ErrPasswordsDiffer: a new password and its confirmation differ.
var ErrPasswordsDiffer = errors.New("the two passwords differ")

// RefusedPasswordError is a new password that is not accepted; Reason is
// for the person who chose it (in English), and Why tells which rule:
// ErrPasswordsDiffer or one of passhash's ErrPassword errors.
type RefusedPasswordError struct {
	Reason string
	Why    error
}

func (e *RefusedPasswordError) Error() string { return e.Reason }
func (e *RefusedPasswordError) Unwrap() error { return e.Why }

// checkNew applies the rule of every new password.
func checkNew(password string) error {
	if err := passhash.CheckPassword(password); err != nil {
		return &RefusedPasswordError{Reason: err.Error(), Why: err}
	}
	return nil
}

// LinkAccount is the account of a valid set-password link (ErrLinkGone
// otherwise).
func (s *Service) LinkAccount(ctx context.Context, token string) (store.Account, error) {
	if token == "" || len(token) > 128 {
		return store.Account{}, ErrLinkGone
	}
	id, err := s.c.Links.PasswordLink(ctx, accounts.SessionID(token), s.c.Now())
	if errors.Is(err, store.ErrNotFound) {
		return store.Account{}, ErrLinkGone
	}
	if err != nil {
		return store.Account{}, err
	}
	acct, err := s.c.Accounts.AccountByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Account{}, ErrLinkGone
	}
	return acct, err
}

// SetPasswordByLink sets the password of a link's account: the rules of
// every new password, confirm the same, the account enabled. The link is
// taken (deleted) before it is acted on, so of two submissions at once one
// sets the password; a refused password leaves it usable. The new password
// ends the account's sessions and lifts its sign-in ban; the account is
// returned as it is now (its new epoch), for the session that follows;
// with a *RefusedPasswordError, as the link names it (the form shows its
// address again). Errors: ErrLinkGone, *RefusedPasswordError, ErrDisabled,
// or the store's.
func (s *Service) SetPasswordByLink(ctx context.Context, token, password, confirm string) (store.Account, error) {
	acct, err := s.LinkAccount(ctx, token)
	if err != nil {
		return store.Account{}, err
	}
	if err := checkNew(password); err != nil {
		return acct, err
	}
	if confirm != password {
		return acct, &RefusedPasswordError{Reason: "The two passwords differ.", Why: ErrPasswordsDiffer}
	}
	if acct.Disabled {
		return store.Account{}, ErrDisabled
	}
	hash, err := s.c.Passwords.Hash(ctx, password)
	if err != nil {
		return store.Account{}, err
	}
	if _, err := s.c.Links.TakePasswordLink(ctx, accounts.SessionID(token), s.c.Now()); errors.Is(err, store.ErrNotFound) {
		return store.Account{}, ErrLinkGone
	} else if err != nil {
		return store.Account{}, err
	}
	if err := accounts.SetPassword(ctx, s.c.Accounts, acct, hash); err != nil {
		return store.Account{}, err
	}
	return s.c.Accounts.AccountByID(ctx, acct.ID)
}

// SetPassword gives acct a new password (an admin's choice): the rules of
// every new password, then the hash, which ends the account's sessions
// and lifts its sign-in ban. *RefusedPasswordError for a refused one.
func (s *Service) SetPassword(ctx context.Context, acct store.Account, password string) error {
	hash, err := s.NewPasswordHash(ctx, password)
	if err != nil {
		return err
	}
	if err := accounts.SetPassword(ctx, s.c.Accounts, acct, hash); err != nil {
		return fmt.Errorf("signin: set password: %w", err)
	}
	return nil
}

// NewPasswordHash checks a new password against the rules of every
// password (*RefusedPasswordError) and hashes it.
func (s *Service) NewPasswordHash(ctx context.Context, password string) (string, error) {
	if err := checkNew(password); err != nil {
		return "", err
	}
	return s.c.Passwords.Hash(ctx, password)
}
