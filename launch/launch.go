// Package launch is the "Open video editor" use-case: find or create the
// account's platform user (check-then-create), remember the link, issue a
// one-time login token, and build the exchange URL the browser goes to. It
// knows nothing of HTTP requests or pages.
package launch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/launch/pacing"
	"github.com/ssobridge/ssobridge/localpath"
	"github.com/ssobridge/ssobridge/store"
)

// Platform is what a launch needs of the Partner API (apiclient.Client).
type Platform interface {
	EnsureUser(ctx context.Context, nu apiclient.NewUser) (apiclient.EnsureResult, error)
	IssueLoginToken(ctx context.Context, userID apiclient.UserID, props apiclient.TokenProperties) (apiclient.LoginToken, error)
	ExchangeURL(t apiclient.LoginToken) string
}

// turnWaiter is a Platform that can take a turn of the platform's pace
// ahead of a call (apiclient.Client.WaitTurn).
type turnWaiter interface {
	WaitTurn(ctx context.Context) (context.Context, error)
}

// Errors of a launch that are not the platform's.
var (
	ErrInvalidReturnTo = errors.New("return_to must be a relative platform path")
	ErrAccountDisabled = errors.New("account is disabled")
	// ErrSessionEnded: the sessions of the launch's account were ended
	// (signed out everywhere, a new password) while it waited.
	ErrSessionEnded = errors.New("the session ended while the launch waited")
)

// recheckAfter: a launch that has taken this long reads its account again
// before asking for the login token, so an account disabled (or whose
// sessions were ended) while it waited gets none, on any instance. A
// quicker launch is not read twice.
const recheckAfter = time.Second

// MaxReturnTo bounds return_to.
const MaxReturnTo = localpath.MaxReturnTo

// Path tells how the platform user was found.
type Path string

// Launch paths, from cheapest to dearest in platform calls.
const (
	PathReturning Path = "returning" // stored link: token only
	PathFound     Path = "found"     // looked up: lookup + token
	PathCreated   Path = "created"   // created: lookup + create + token
	PathRelinked  Path = "relinked"  // the stored link was stale
)

// Result is a successful launch.
type Result struct {
	ExchangeURL    string // where to send the browser; holds the one-time token
	PlatformUserID string
	Path           Path
	PlatformCalls  int
}

// Service runs launches.
type Service struct {
	platform Platform
	store    Store
	logger   *slog.Logger
	now      func() time.Time
	onDone   func(outcome string, path Path, d time.Duration)
}

// Options configure a Service.
type Options struct {
	Logger *slog.Logger
	Now    func() time.Time
	// OnDone observes every launch (metrics).
	OnDone func(outcome string, path Path, d time.Duration)
}

// Store is what a launch keeps: the account, its link to its platform
// user (and the lock that makes it once), the launch's audit.
type Store interface {
	store.Accounts
	store.Links
	store.AuditLog
}

// New returns a Service.
func New(p Platform, st Store, o Options) *Service {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{platform: p, store: st, logger: o.Logger, now: o.Now, onDone: o.OnDone}
}

// ValidateReturnTo accepts an empty value or a relative platform path of
// at most MaxReturnTo bytes that passes localpath.Check: it stays on the
// platform's host however the platform or a browser reads it.
func ValidateReturnTo(s string) error {
	if s == "" {
		return nil
	}
	if err := localpath.CheckReturnTo(s); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidReturnTo, err)
	}
	return nil
}

// Launch sends account to the platform's editor. requestID goes into the
// audit log. Every launch, successful or not, is audited.
func (s *Service) Launch(ctx context.Context, account store.Account, returnTo, requestID string) (Result, error) {
	start := s.now()
	var calls atomic.Int32
	ctx = apiclient.WithCallCounter(ctx, &calls)
	res, err := s.launch(ctx, account, returnTo, start)
	if errors.Is(err, pacing.ErrWouldWait) || errors.Is(err, apiclient.ErrOutOfPatience) {
		// Run in its request and told not to wait for the platform's pace
		// (or cut off at its request's patience): not an outcome. Its caller runs it again in the line, from where
		// it stands (a link saved meanwhile is used), and that is audited.
		return res, err
	}
	res.PlatformCalls = int(calls.Load())
	elapsed := s.now().Sub(start)
	outcome := Classify(err)
	ev := store.Event{AccountID: account.ID, Email: account.Email, Outcome: outcome,
		PlatformCalls: res.PlatformCalls, Latency: elapsed, Detail: string(res.Path), RequestID: requestID}
	if err != nil {
		ev.Detail = err.Error()
	}
	// The audit write (which also stamps the link's last launch) must not be
	// lost to a client that went away. A launch without its audit row is
	// refused: the token goes unused and expires, the user tries again.
	if aerr := s.store.RecordLaunch(context.WithoutCancel(ctx), ev); aerr != nil {
		s.logger.Log(ctx, store.FailureLevel(aerr), "audit write failed", "err", aerr, "request_id", requestID)
		if err == nil {
			err = fmt.Errorf("launch: audit: %w", aerr)
			outcome = Classify(err)
			res = Result{Path: res.Path, PlatformCalls: res.PlatformCalls, PlatformUserID: res.PlatformUserID}
		}
	}
	if s.onDone != nil {
		s.onDone(outcome, res.Path, elapsed)
	}
	if err != nil {
		s.logger.Warn("launch failed", "account_id", account.ID, "outcome", outcome, "platform_calls", res.PlatformCalls, "err", err, "request_id", requestID)
		return res, err
	}
	// A launch that succeeded is logged by the caller, with its request
	// (handlers: one line a launch, not two).
	return res, nil
}

func (s *Service) launch(ctx context.Context, account store.Account, returnTo string, start time.Time) (Result, error) {
	if err := ValidateReturnTo(returnTo); err != nil {
		return Result{}, err
	}
	if account.Disabled {
		return Result{}, Disabled(account)
	}
	path := PathFound
	link, err := s.store.LinkFor(ctx, account.ID)
	switch {
	case err == nil:
		if err := s.stillAllowed(ctx, account, start); err != nil {
			return Result{Path: PathReturning}, err
		}
		tok, terr := s.platform.IssueLoginToken(ctx, apiclient.UserID(link.PlatformUserID), apiclient.TokenProperties{RedirectTo: returnTo})
		if terr == nil {
			return Result{ExchangeURL: s.platform.ExchangeURL(tok), PlatformUserID: link.PlatformUserID, Path: PathReturning}, nil
		}
		if !errors.Is(terr, apiclient.ErrNotFound) {
			return Result{Path: PathReturning}, terr
		}
		// The platform user is gone: the link is stale. Drop it (only if
		// nobody replaced it meanwhile) and find the user afresh.
		if derr := s.store.DeleteLink(ctx, account.ID, link.PlatformUserID); derr != nil {
			return Result{}, derr
		}
		path = PathRelinked
	case !errors.Is(err, store.ErrNotFound):
		return Result{}, fmt.Errorf("launch: read link: %w", err)
	}

	userID, created, err := s.ensureLinked(ctx, account)
	if err != nil {
		return Result{Path: path}, err
	}
	if created && path != PathRelinked {
		path = PathCreated
	}
	if err := s.stillAllowed(ctx, account, start); err != nil {
		return Result{Path: path, PlatformUserID: userID}, err
	}
	tok, err := s.platform.IssueLoginToken(ctx, apiclient.UserID(userID), apiclient.TokenProperties{RedirectTo: returnTo})
	if err != nil {
		return Result{Path: path, PlatformUserID: userID}, err
	}
	return Result{ExchangeURL: s.platform.ExchangeURL(tok), PlatformUserID: userID, Path: path}, nil
}

// stillAllowed reads again the account of a launch that has taken
// recheckAfter (it waited in the line, or for a slow platform): disabled,
// or its sessions ended, it gets no login token.
func (s *Service) stillAllowed(ctx context.Context, account store.Account, start time.Time) error {
	if s.now().Sub(start) < recheckAfter {
		return nil
	}
	cur, err := s.store.AccountByID(ctx, account.ID)
	switch {
	case err != nil:
		return fmt.Errorf("launch: read account: %w", err)
	case cur.Disabled:
		return Disabled(cur)
	case cur.SessionEpoch != account.SessionEpoch:
		return ErrSessionEnded
	}
	return nil
}

// ensureLinked finds or creates account's platform user and links it.
func (s *Service) ensureLinked(ctx context.Context, account store.Account) (userID string, created bool, err error) {
	if p, ok := pacing.PriorityOf(ctx); ok && p.Background {
		// Background work (provisioning ahead) waits for its turn before it
		// takes the lock, then makes its calls at a user's priority from
		// now: a launch waiting for the lock never waits behind the line's
		// background work.
		if tw, ok := s.platform.(turnWaiter); ok {
			if ctx, err = tw.WaitTurn(ctx); err != nil {
				return "", false, err
			}
		}
		ctx = pacing.WithPriority(ctx, pacing.Priority{Since: s.now()})
	}
	// One platform user per email across every instance on the store, even
	// when the platform's own duplicate check races: the lookup/create of
	// an email runs under the store's lock for it, held for no longer.
	unlock, err := s.store.LockProvisioning(ctx, account.Email)
	if err != nil {
		return "", false, fmt.Errorf("launch: provisioning lock: %w", err)
	}
	ens, err := s.platform.EnsureUser(ctx, apiclient.NewUser{FirstName: account.FirstName, LastName: account.LastName, Email: account.Email})
	unlock()
	if err != nil {
		return "", false, err
	}
	userID = string(ens.User.UserID)
	err = s.store.SaveLink(ctx, account.ID, userID)
	if errors.Is(err, store.ErrLinkTaken) {
		err = s.takeLink(ctx, account, userID)
	}
	if err != nil {
		return "", false, fmt.Errorf("launch: save link: %w", err)
	}
	return userID, ens.Created, nil
}

// takeLink links account to userID, which another account holds. The
// platform has just matched userID to account's address (EnsureUser looks
// up by exact address), so the other account's link is the wrong one: a
// platform that handed the id out again, or a demo emulator that forgot
// its users. That link is dropped (only if it still points there), so the
// other account's next launch finds its own platform user by its own
// address and never opens this person's editor.
func (s *Service) takeLink(ctx context.Context, account store.Account, userID string) error {
	holders, err := s.store.ListLinks(ctx, []string{userID})
	if err != nil {
		return err
	}
	if holder, ok := holders[userID]; ok && holder != account.ID {
		if err := s.store.DeleteLink(ctx, holder, userID); err != nil {
			return err
		}
		detail := fmt.Sprintf("link of account %d to platform user %s dropped: the platform gives that user the address %s", holder, userID, account.Email)
		s.logger.Warn("a platform user was linked to another account", "platform_user_id", userID, "account_id", account.ID, "other_account_id", holder)
		if err := s.store.Record(ctx, store.Event{Kind: store.KindProvision, AccountID: holder, Outcome: OutcomeOK, Detail: detail}); err != nil {
			s.logger.Log(ctx, store.FailureLevel(err), "audit write failed", "err", err)
		}
	}
	return s.store.SaveLink(ctx, account.ID, userID)
}

// Provisioned is what provisioning did for an account.
type Provisioned struct {
	PlatformUserID string
	Path           Path // PathReturning: it was linked already; PathFound: existed, now linked; PathCreated
	PlatformCalls  int
}

// Provision links account to its platform user ahead of its first launch
// (creating the user if need be), so that the launch is one call: the
// same check-then-create as a launch, without the token. An account
// linked already is left as it is. Each one is audited.
func (s *Service) Provision(ctx context.Context, account store.Account) (Provisioned, error) {
	var calls atomic.Int32
	ctx = apiclient.WithCallCounter(ctx, &calls)
	start := s.now()
	p, err := s.provision(ctx, account)
	p.PlatformCalls = int(calls.Load())
	outcome := Classify(err)
	ev := store.Event{Kind: store.KindProvision, AccountID: account.ID, Email: account.Email, Outcome: outcome,
		PlatformCalls: p.PlatformCalls, Latency: s.now().Sub(start), Detail: string(p.Path)}
	if err != nil {
		ev.Detail = err.Error()
	}
	if p.Path != PathReturning || err != nil {
		if aerr := s.store.Record(context.WithoutCancel(ctx), ev); aerr != nil {
			s.logger.Log(ctx, store.FailureLevel(aerr), "audit write failed", "err", aerr)
		}
	}
	return p, err
}

func (s *Service) provision(ctx context.Context, account store.Account) (Provisioned, error) {
	if account.Disabled {
		return Provisioned{}, Disabled(account)
	}
	link, err := s.store.LinkFor(ctx, account.ID)
	if err == nil {
		return Provisioned{PlatformUserID: link.PlatformUserID, Path: PathReturning}, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return Provisioned{}, fmt.Errorf("provision: read link: %w", err)
	}
	userID, created, err := s.ensureLinked(ctx, account)
	if err != nil {
		return Provisioned{}, err
	}
	path := PathFound
	if created {
		path = PathCreated
	}
	return Provisioned{PlatformUserID: userID, Path: path}, nil
}

// Outcome classes, used by audit, metrics and error pages.
const (
	OutcomeOK            = "ok"
	OutcomeForbidden     = "platform_forbidden"
	OutcomeUnauthorized  = "platform_unauthorized"
	OutcomeClockSkew     = "platform_clock_skew"
	OutcomeRateLimited   = "platform_rate_limited"
	OutcomeUnavailable   = "platform_unavailable" // 5xx, timeout, unreachable
	OutcomeNotFound      = "platform_not_found"
	OutcomeBadRequest    = "platform_bad_request"
	OutcomeInvalidInput  = "invalid_input"
	OutcomeDisabled      = "account_disabled"
	OutcomeSessionEnded  = "session_ended"
	OutcomeStoreBusy     = "store_busy"        // the database's write lock was held too long
	OutcomeStoreDown     = "store_unavailable" // the database did not answer in time, or refused
	OutcomeInternalError = "internal_error"
)

// Reported is a launch failure told again later (to a user who waited in
// line): what Explain found and the error's text, without the error.
type Reported struct {
	Failure Failure
	Text    string
}

func (r *Reported) Error() string { return r.Text }

// Classify maps an error to its outcome class.
func Classify(err error) string {
	var rp *Reported
	switch {
	case err == nil:
		return OutcomeOK
	case errors.As(err, &rp):
		return rp.Failure.Outcome
	case errors.Is(err, ErrInvalidReturnTo), errors.Is(err, apiclient.ErrInvalidInput):
		return OutcomeInvalidInput
	case errors.Is(err, ErrAccountDisabled):
		return OutcomeDisabled
	case errors.Is(err, ErrSessionEnded):
		return OutcomeSessionEnded
	case errors.Is(err, store.ErrStoreBusy):
		return OutcomeStoreBusy
	case errors.Is(err, store.ErrUnavailable):
		return OutcomeStoreDown
	case errors.Is(err, apiclient.ErrClockSkew):
		return OutcomeClockSkew
	case errors.Is(err, apiclient.ErrUnauthorized):
		return OutcomeUnauthorized
	case errors.Is(err, apiclient.ErrForbidden):
		return OutcomeForbidden
	case errors.Is(err, apiclient.ErrRateLimited):
		return OutcomeRateLimited
	case errors.Is(err, apiclient.ErrServer), errors.Is(err, apiclient.ErrTimeout), errors.Is(err, apiclient.ErrUnreachable),
		errors.Is(err, apiclient.ErrConflict), errors.Is(err, context.DeadlineExceeded):
		return OutcomeUnavailable
	case errors.Is(err, apiclient.ErrNotFound):
		return OutcomeNotFound
	case errors.Is(err, apiclient.ErrBadRequest):
		return OutcomeBadRequest
	}
	return OutcomeInternalError
}

// Failure is what the page reporting a failed launch needs beyond the
// error's text, so callers need not know the Partner API client's types.
type Failure struct {
	Outcome    string        // Classify's class
	Endpoint   string        // the platform call that failed, when one did
	RetryAfter time.Duration // the platform's Retry-After, when it sent one
	ClockSkew  time.Duration // platform clock minus ours (clock-skew outcome)
	Timeout    bool          // a platform call timed out (not the launch's own bound)
}

// Explain describes err for the page that reports it.
func Explain(err error) Failure {
	var rp *Reported
	if errors.As(err, &rp) {
		return rp.Failure
	}
	f := Failure{Outcome: Classify(err), Timeout: errors.Is(err, apiclient.ErrTimeout)}
	var ae *apiclient.APIError
	if errors.As(err, &ae) {
		f.Endpoint, f.RetryAfter = ae.Endpoint, ae.RetryAfter
	}
	var cs *apiclient.ClockSkewError
	if errors.As(err, &cs) {
		f.ClockSkew = cs.Offset
	}
	return f
}

// Disabled is the refusal of a disabled account (ErrAccountDisabled),
// saying whether the partner's identity provider disabled it.
func Disabled(a store.Account) error {
	if by := a.DisabledBy(); by != nil {
		return fmt.Errorf("%w: %w", ErrAccountDisabled, by)
	}
	return ErrAccountDisabled
}
