// Package store declares what the bridge keeps: the Store interface and
// every record it reads and writes (accounts, their links to platform
// users, sessions, the audit log, sign-in regulation, the line's tickets,
// provisioning jobs, the platform callers). Package sqlstore implements it
// on SQLite and PostgreSQL, storecache keeps a cache in front of it, and
// storetest is the conformance suite every stack passes.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ssobridge/ssobridge/mailaddr"
)

// Errors of the store.
var (
	ErrNotFound   = errors.New("not found")
	ErrEmailTaken = errors.New("an account with this email exists")
	ErrInvalid    = errors.New("invalid account data")
	ErrLastAdmin  = errors.New("the last admin cannot lose the admin role")
	// ErrStoreGone: the database file was removed or replaced under a
	// running store (Ping reports it).
	ErrStoreGone = errors.New("accounts: the database file is gone")
	// ErrStoreBusy: another process held the database's write lock for
	// longer than the store waits; nothing was written, try again.
	ErrStoreBusy = errors.New("accounts: the database is busy (another process holds its write lock)")
	// ErrBusy: as many sign-in attempts as the limit are being verified
	// (AdmitSignIn); try again shortly.
	ErrBusy = errors.New("store: too many sign-in attempts being checked at once")
	// ErrUsed: a single-use id was used before (UseOnce).
	ErrUsed = errors.New("accounts: already used")
	// ErrLinkTaken: the platform user is linked to another account (one
	// platform user is one account's at most).
	ErrLinkTaken = errors.New("accounts: the platform user is linked to another account")
)

// Account is a local partner account.
type Account struct {
	ID           int64
	Email        string
	FirstName    string
	LastName     string
	PasswordHash string
	Admin        bool
	Disabled     bool
	SessionEpoch int64 // sessions issued under an older epoch are void
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// ExternalID is the identity provider's own id of the account (SCIM's
	// externalId), "" if none.
	ExternalID string
	// ManagedBy names who owns the account's details: "" (the console and
	// the CLI) or ManagedBySCIM (the partner's identity provider).
	ManagedBy string
}

// ErrDisabledByIdP is joined to a disabled account's refusal when the
// partner's identity provider disabled it (SCIM active false): its page
// says who to ask.
var ErrDisabledByIdP = errors.New("the partner's identity provider made the account inactive")

// DisabledBy is nil for an account the console or the CLI disabled (or
// that is not disabled), ErrDisabledByIdP for one the IdP manages.
func (a Account) DisabledBy() error {
	if a.Disabled && a.ManagedBy == ManagedBySCIM {
		return ErrDisabledByIdP
	}
	return nil
}

// ManagedBySCIM marks an account the partner's identity provider creates,
// changes and removes through SCIM: the console does not edit it.
const ManagedBySCIM = "scim"

// Name is the account's display name.
func (a Account) Name() string { return strings.TrimSpace(a.FirstName + " " + a.LastName) }

// NewAccount is what creating an account takes.
type NewAccount struct {
	Email        string
	FirstName    string
	LastName     string
	PasswordHash string
	Admin        bool
	ExternalID   string // see Account
	ManagedBy    string // see Account
	Disabled     bool   // made disabled (an identity provider's inactive user)
}

// Normalize trims the fields and checks them.
func (n *NewAccount) Normalize() error {
	n.Email = strings.TrimSpace(n.Email)
	n.FirstName = strings.TrimSpace(n.FirstName)
	n.LastName = strings.TrimSpace(n.LastName)
	n.ExternalID = strings.TrimSpace(n.ExternalID)
	if err := checkDetails(n.Email, n.FirstName, n.LastName, n.ExternalID); err != nil {
		return err
	}
	if n.PasswordHash == "" {
		return fmt.Errorf("%w: a password is required", ErrInvalid)
	}
	return nil
}

// checkDetails applies the rules of an account's details, trimmed: an
// address, two names of text up to 100 characters, an identity
// provider's id of text up to 256.
func checkDetails(email, first, last, externalID string) error {
	if err := ValidateEmail(email); err != nil {
		return err
	}
	if first == "" || last == "" {
		return fmt.Errorf("%w: first and last name are required", ErrInvalid)
	}
	for _, f := range []struct{ what, v string }{{"first name", first}, {"last name", last}} {
		if err := checkText(f.what, f.v); err != nil {
			return err
		}
	}
	if len(first) > 100 || len(last) > 100 {
		return fmt.Errorf("%w: names are limited to 100 characters", ErrInvalid)
	}
	return checkExternalID(externalID)
}

// checkExternalID bounds an identity provider's id: text, at most 256
// bytes.
func checkExternalID(s string) error {
	if len(s) > 256 {
		return fmt.Errorf("%w: the external id is limited to 256 characters", ErrInvalid)
	}
	return checkText("external id", s)
}

// AccountUpdate changes an account's details (UpdateAccount); nil fields
// stay as they are.
type AccountUpdate struct {
	Email      *string
	FirstName  *string
	LastName   *string
	ExternalID *string
	// Disabled true ends the account's sessions, as SetDisabled does.
	Disabled *bool
	// ManagedBy: see Account.
	ManagedBy *string
}

// Apply returns a with u's changes, trimmed and checked by the rules of a
// new account.
func (u AccountUpdate) Apply(a Account) (Account, error) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = strings.TrimSpace(*v)
		}
	}
	set(&a.Email, u.Email)
	set(&a.FirstName, u.FirstName)
	set(&a.LastName, u.LastName)
	set(&a.ExternalID, u.ExternalID)
	if u.Disabled != nil {
		a.Disabled = *u.Disabled
	}
	if u.ManagedBy != nil {
		a.ManagedBy = *u.ManagedBy
	}
	if err := checkDetails(a.Email, a.FirstName, a.LastName, a.ExternalID); err != nil {
		return Account{}, err
	}
	return a, nil
}

// checkText refuses what a name must not hold: bytes that are not UTF-8
// (they would reach the platform and the pages garbled) and control
// characters (line breaks, NUL).
func checkText(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: the %s is not valid UTF-8 text", ErrInvalid, what)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: the %s holds a control character (such as a line break)", ErrInvalid, what)
		}
	}
	return nil
}

// ValidateEmail accepts a bare address such as ada@example.com (the rule
// of mailaddr, which the Partner API client applies too).
func ValidateEmail(s string) error {
	if p := mailaddr.Problem(s); p != "" {
		return fmt.Errorf("%w: %s", ErrInvalid, p)
	}
	return nil
}

// Link ties an account to its platform user.
type Link struct {
	AccountID      int64
	PlatformUserID string
	LinkedAt       time.Time
	LastLaunchAt   time.Time // zero if never; see LaunchStampEvery
}

// LaunchStampEvery is how stale a link's LastLaunchAt may be: a successful
// launch stamps the link only when its stamp is at least this old. Pages
// show the last launch to the minute, and stamping every launch cost each
// returning launch a row update (on PostgreSQL, the largest part of the
// database's work per launch).
const LaunchStampEvery = time.Minute

// LaunchStampDue reports whether a launch at at moves a link stamped at
// last.
func LaunchStampDue(last, at time.Time) bool {
	return last.IsZero() || !at.Before(last.Add(LaunchStampEvery))
}

// Event is one audit log entry.
type Event struct {
	ID            int64
	At            time.Time
	Kind          string // see the Kind constants
	AccountID     int64  // 0 when unknown
	Email         string
	Outcome       string // "ok" or an error class
	PlatformCalls int
	Latency       time.Duration
	Detail        string // never a secret, password or token
	RequestID     string
}

// Audit event kinds.
const (
	KindLogin  = "login"
	KindLogout = "logout"
	KindLaunch = "launch"
	KindAdmin  = "admin"
	// KindProvision: an account linked to its platform user ahead of its
	// first launch (provisioning).
	KindProvision = "provision"
)

// AuditFilter selects audit events; zero fields match everything.
type AuditFilter struct {
	AccountID int64
	Kind      string
	Outcome   string
	Offset    int
	Limit     int
	// Newest, when above 0, bounds the search (and its count) to the
	// newest this many events: the log keeps no index but its order, and
	// a filter over a year's millions of events would read them all.
	Newest int
}

// AccountFilter selects accounts; zero fields match everything.
type AccountFilter struct {
	Search     string // substring of email or names
	Email      string // the address, case-insensitively
	ExternalID string // exactly
	ManagedBy  string // exactly
	Offset     int
	Limit      int
}

// Group is a group the partner's identity provider keeps through SCIM:
// members of the one named by scim.admin_group are partner admins.
type Group struct {
	ID          string
	DisplayName string
	ExternalID  string
	Members     []int64 // account ids, ascending
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// GroupChange is a group before and after a change (UpdateGroup), both
// read in the change's own transaction.
type GroupChange struct {
	Before, After Group
}

// GroupFilter selects groups; zero fields match everything.
type GroupFilter struct {
	DisplayName string // case-insensitively
	ExternalID  string
	Offset      int
	Limit       int
}

// GroupUpdate changes a group (UpdateGroup): nil fields stay; Members
// replaces the members, then Add and Remove change them.
type GroupUpdate struct {
	DisplayName *string
	ExternalID  *string
	Members     *[]int64
	Add         []int64
	Remove      []int64
}

// ErrGroupNameTaken: another group has this display name.
var ErrGroupNameTaken = errors.New("store: a group with this name exists")

// CheckGroupName checks a group's display name: 1 to 256 characters of
// text.
func CheckGroupName(name string) error {
	if strings.TrimSpace(name) == "" || len(name) > 256 {
		return fmt.Errorf("%w: a group's name is 1 to 256 characters", ErrInvalid)
	}
	return checkText("group name", name)
}

// Store is what the app needs of account storage: every role below, as
// one SQL layer (package sqlstore) and its cache implement them.
// Consumers take the roles they use. Implementations are safe for
// concurrent use.
type Store interface {
	Accounts
	Groups
	Sessions
	SingleUse
	Identities
	KeptValues
	ModuleRecords
	PasswordLinks
	Links
	AuditLog
	SignIns
	PlatformState
	Tickets
	Provisioning

	Ping(ctx context.Context) error
	Close() error
}

// Accounts keeps the partner accounts.
type Accounts interface {
	CreateAccount(ctx context.Context, n NewAccount) (Account, error)
	// CreateAccounts creates all or none (one transaction).
	CreateAccounts(ctx context.Context, ns []NewAccount) error
	AccountByEmail(ctx context.Context, email string) (Account, error)
	AccountByID(ctx context.Context, id int64) (Account, error)
	// FreshAccountByID reads past any cache in front of the database: the
	// account as another instance may just have left it.
	FreshAccountByID(ctx context.Context, id int64) (Account, error)
	ListAccounts(ctx context.Context, f AccountFilter) ([]Account, int, error)
	CountAccounts(ctx context.Context) (int, error)
	SetDisabled(ctx context.Context, id int64, disabled bool) error
	// DeleteAccount removes an account with its link, sessions and
	// set-password links (its audit events stay); the last active admin
	// is kept (ErrLastAdmin).
	DeleteAccount(ctx context.Context, id int64) error
	// SetAdmin refuses to demote the last enabled admin (ErrLastAdmin).
	SetAdmin(ctx context.Context, id int64, admin bool) error
	SetPasswordHash(ctx context.Context, id int64, hash string) error
	// UpdateAccount applies u (AccountUpdate.Apply) and returns the account
	// as stored: ErrEmailTaken if the new address is another account's;
	// disabling ends its sessions and keeps the last admin (ErrLastAdmin).
	UpdateAccount(ctx context.Context, id int64, u AccountUpdate) (Account, error)
}

// Groups keeps the groups an identity provider manages through SCIM (see Group).
type Groups interface {
	// CreateGroup stores g under its ID (ErrGroupNameTaken for a name in use, ErrNotFound for a member
	// that is no account).
	CreateGroup(ctx context.Context, group Group) (Group, error)
	GroupByID(ctx context.Context, id string) (Group, error)
	ListGroups(ctx context.Context, f GroupFilter) ([]Group, int, error)
	// UpdateGroup applies u in one transaction and returns the group as
	// it was and as stored, both read under the change's lock; members
	// that are no account are ErrNotFound.
	UpdateGroup(ctx context.Context, id string, u GroupUpdate) (GroupChange, error)
	// DeleteGroup removes a group and returns it as it was when removed.
	DeleteGroup(ctx context.Context, id string) (Group, error)
	// FollowAdminGroup gives account id the admin role if it is a member
	// of the group named group (as group names match, case-insensitively)
	// and takes the role away if not. It reads the membership in its own
	// write, after every change to that group committed before it (the
	// group's row locked), so of two changes that race the one that
	// commits last decides. It reports whether the role changed; the last
	// enabled admin keeps it (ErrLastAdmin), and an unknown id is
	// ErrNotFound.
	FollowAdminGroup(ctx context.Context, id int64, group string) (bool, error)
}

// Sessions keeps the per-device sessions. A session is valid while its
// record exists (and the account's epoch matches): ending one deletes its
// record.
type Sessions interface {
	// EndSessions voids every session issued to the account so far (on
	// every device) and deletes their records.
	EndSessions(ctx context.Context, id int64) error
	// CreateSession records a new session; its ID comes from SessionID.
	CreateSession(ctx context.Context, s Session) error
	// SessionByID returns a session, or ErrNotFound once it has ended.
	SessionByID(ctx context.Context, id string) (Session, error)
	// TouchSession moves the session's last-seen time to at, if it was
	// seen last at or before seenBefore, and reports whether it wrote: of
	// requests that find a session due at once, on any instance, one
	// writes.
	TouchSession(ctx context.Context, id string, at, seenBefore time.Time) (bool, error)
	// EndSession ends one session of the account (ErrNotFound if the
	// account has no such session).
	EndSession(ctx context.Context, accountID int64, id string) error
	// ListSessions lists the account's sessions, the most recently seen
	// first.
	ListSessions(ctx context.Context, accountID int64) ([]Session, error)
	// PruneSessions deletes the sessions last seen before a time (idle
	// past any timeout) among the next limit sessions after the id after,
	// in id order, and returns how many it deleted and the id to go on
	// after ("" once the last sessions were scanned). A pass walks the
	// table by its primary key in bounded chunks from "": the last-seen
	// time has no index, which every touch of a session would write.
	PruneSessions(ctx context.Context, before time.Time, after string, limit int) (deleted int64, next string, err error)
}

// SingleUse records the ids that may be used once (a portal token's jti,
// an LTI nonce), for every instance.
type SingleUse interface {
	// UseOnce records a single-use id of a kind (a portal token's jti)
	// until a time: ErrUsed if it is recorded and not yet past its time.
	// Every instance on the store sees it at once.
	UseOnce(ctx context.Context, kind, id string, until time.Time) error
	// PruneUsedIDs forgets ids whose time has passed.
	PruneUsedIDs(ctx context.Context, before time.Time) (int64, error)
}

// Identities links outside identities (a way in's source and the user's
// subject there) to accounts.
type Identities interface {
	// AccountOfIdentity returns the account an outside identity (a way
	// in's source, such as "lti:<issuer>", and the user's subject there)
	// is linked to, or ErrNotFound.
	AccountOfIdentity(ctx context.Context, issuer, subject string) (int64, error)
	// LinkIdentity links an outside identity to the account, moving it
	// from the account it was linked to before, if any. Deleting the
	// account deletes its identities.
	LinkIdentity(ctx context.Context, issuer, subject string, accountID int64) error
	// MoveIdentities moves every identity of the source from to the
	// source to (a source renamed), returning how many moved; where to
	// has the same subject already, to's link wins and from's goes.
	MoveIdentities(ctx context.Context, from, to string) (int64, error)
	// IdentitiesOf lists the outside identities linked to the account,
	// by source then subject.
	IdentitiesOf(ctx context.Context, accountID int64) ([]Identity, error)
}

// KeptValues keeps values every instance shares, the first one kept
// winning (the LTI tool's generated key).
type KeptValues interface {
	// KeptValue returns the value kept under name, or ErrNotFound.
	KeptValue(ctx context.Context, name string) (string, error)
	// KeepValue keeps value under name unless one is kept, and returns
	// the kept one: of instances that start at once, the first one's value
	// is every instance's (the LTI tool's generated key).
	KeepValue(ctx context.Context, name, value string) (string, error)
}

// ModuleRecords keeps the modules' own records, for every instance.
type ModuleRecords interface {
	// PutRecord keeps r as mode says.
	PutRecord(ctx context.Context, r Record, mode PutMode) error
	// Records lists the records q selects.
	Records(ctx context.Context, q RecordQuery) ([]Record, error)
	// DeleteRecord removes a record (ErrNotFound: none).
	DeleteRecord(ctx context.Context, module, kind, key string) error
}

// PasswordLinks keeps the set-password links.
type PasswordLinks interface {
	// CreatePasswordLink stores a set-password link for the account (by
	// the SHA-256 of its token, see NewSessionToken/SessionID), replacing
	// any earlier one of the account.
	CreatePasswordLink(ctx context.Context, accountID int64, id string, expires time.Time) error
	// PasswordLink returns the account of a link not yet used or expired
	// at now (ErrNotFound otherwise), leaving it in place.
	PasswordLink(ctx context.Context, id string, now time.Time) (accountID int64, err error)
	// TakePasswordLink deletes the link and returns its account if it was
	// valid at now: a link is used once, even by two requests at once.
	TakePasswordLink(ctx context.Context, id string, now time.Time) (accountID int64, err error)
}

// Links keeps which platform user each account is, and serialises
// their provisioning.
type Links interface {
	// LockProvisioning serialises the provisioning of one platform user by
	// email (case-insensitively) across every process on the store: it
	// returns once no other holder has the email's lock; unlock releases it.
	// Held only around the platform lookup/create.
	LockProvisioning(ctx context.Context, email string) (unlock func(), err error)
	LinkFor(ctx context.Context, accountID int64) (Link, error)
	SaveLink(ctx context.Context, accountID int64, platformUserID string) error
	// DeleteLink removes the link only if it still points at platformUserID
	// (empty: whatever it points at).
	DeleteLink(ctx context.Context, accountID int64, platformUserID string) error
	ListLinks(ctx context.Context, platformUserIDs []string) (map[string]int64, error)
}

// AuditLog is the audit log: written by every action, read by the
// console, pruned by retention.
type AuditLog interface {
	Record(ctx context.Context, e Event) error
	// RecordLaunch records a launch event (Kind is set to launch) and, when
	// its outcome is "ok", stamps the account's link with its time, in one
	// write.
	RecordLaunch(ctx context.Context, e Event) error
	ListEvents(ctx context.Context, f AuditFilter) ([]Event, int, error)
	// EventsStampedAfter counts the events with an id in (after, upTo]
	// (upTo 0: to the end) stamped after at, and the first one's id: a
	// pass of retention finds rows stamped in the future (a clock that
	// ran ahead) in the chunks it could not delete whole.
	EventsStampedAfter(ctx context.Context, after, upTo int64, at time.Time) (count, first int64, err error)
	// PruneEvents deletes the events older than before among the next
	// limit events after the id after, in id order (the order they were
	// written in), and returns how many it deleted and the id to go on
	// after (0 once the last events were reached). A pass walks the log by
	// its primary key from 0 until a long stretch of events too young to
	// go: ids follow time, but for a few rows. (Reading the oldest
	// by time made each statement skip the index entries of every row the
	// pass had deleted, until a vacuum: PostgreSQL's pass of 6.6 million
	// rows slowed to 250 rows in 50 ms.)
	PruneEvents(ctx context.Context, before time.Time, after int64, limit int) (deleted int64, next int64, err error)
}

// SignIns is sign-in regulation, shared by every instance on the store
// (package regulation supplies the limits and the clock).
type SignIns interface {
	// AdmitSignIn takes an attempt's place in the count before its password
	// is verified: under a ban, or with as many recent failures as the
	// limit, it returns when the ban ends (starting it if need be); with as
	// many attempts still being verified as the limit, ErrBusy; otherwise
	// it records the attempt.
	AdmitSignIn(ctx context.Context, a SignIn, r RegulationConfig) (id int64, bannedUntil time.Time, err error)
	// FailSignIn marks the attempt failed and starts a ban when the
	// failures reach the limit.
	FailSignIn(ctx context.Context, id int64, r RegulationConfig, now time.Time) (banStarted bool, err error)
	// SucceedSignIn clears the failures counted for the attempt's email.
	SucceedSignIn(ctx context.Context, id int64) error
	// ListBans lists the bans in force at now.
	ListBans(ctx context.Context, now time.Time) ([]Ban, error)
	// BannedUntil is when the later of the bans in force at now on email
	// (case-insensitively) and on ip ends; zero when neither is banned.
	BannedUntil(ctx context.Context, email, ip string, now time.Time) (time.Time, error)
	// LiftBans ends the bans on email and/or ip (either may be empty) and
	// clears the failures counted for them; it reports the bans ended.
	LiftBans(ctx context.Context, email, ip string) (int, error)
	// PruneSignIns deletes attempts before a time and bans ended by then.
	PruneSignIns(ctx context.Context, before time.Time) (int64, error)
}

// PlatformState is the platform's rate limit and state, shared by every
// process that calls it (package pacing).
type PlatformState interface {
	// PlatformHeartbeat records that the caller calls the platform at now
	// and returns the callers heard from within window (itself included)
	// and until when every caller is to hold its calls.
	PlatformHeartbeat(ctx context.Context, c PlatformCaller, now time.Time, window time.Duration) (PlatformCallers, error)
	// PausePlatform holds every caller's platform calls until then (a
	// later pause wins; an earlier one changes nothing).
	PausePlatform(ctx context.Context, until time.Time) error
	// MarkPlatformSlow tells every instance that the platform is slow
	// until then (a later time wins).
	MarkPlatformSlow(ctx context.Context, until time.Time) error
}

// Tickets is the line of launches waiting for the platform's pace
// (package waitline); see Ticket.
type Tickets interface {
	CreateTicket(ctx context.Context, t Ticket) error
	TicketByID(ctx context.Context, id string) (Ticket, error)
	ClaimTicket(ctx context.Context, id, owner string, staleBefore, now time.Time) error
	FinishTicket(ctx context.Context, id, owner, state, sealed, failure string) error
	TakeTicket(ctx context.Context, id string, accountID int64) (Ticket, error)
	KeepTickets(ctx context.Context, owner string, now time.Time) error
	PruneTickets(ctx context.Context, before time.Time) (int64, error)
}

// Provisioning is the console's provisioning job (package provision);
// see ProvisionJob.
type Provisioning interface {
	StartProvisionJob(ctx context.Context, j ProvisionJob, staleBefore time.Time) error
	UpdateProvisionJob(ctx context.Context, j ProvisionJob) error
	LatestProvisionJob(ctx context.Context) (ProvisionJob, error)
	// UnlinkedAccounts lists up to limit enabled accounts without a link,
	// by id after afterID.
	UnlinkedAccounts(ctx context.Context, afterID int64, limit int) ([]Account, error)
	// CountLinks counts the linked accounts and the enabled unlinked ones.
	CountLinks(ctx context.Context) (linked, unlinked int, err error)
}

// Identity is an outside identity linked to an account: the source that
// vouches for it (a way in's id, such as "lti:https://canvas.example")
// and the user's subject there.
type Identity struct {
	Source   string
	Subject  string
	LinkedAt time.Time
}

// PlatformCaller is a process calling the platform, as its heartbeat
// tells the others.
type PlatformCaller struct {
	ID         string
	Background bool // runs background work only (provisioning), serves no users
	Busy       bool // has users' calls waiting for their turn
	Active     bool // called the platform since its last heartbeat
}

// PlatformCallers is what a heartbeat learns of the callers.
type PlatformCallers struct {
	Serving    int // processes serving users, heard from within the window
	Background int // background-only processes, heard from within the window
	Busy       int // serving processes that had users waiting within the window
	// Of those, the ones that called within the window: the rate is
	// shared among them.
	ActiveServing, ActiveBackground int
	PausedUntil                     time.Time
	// SlowUntil: an instance saw the platform slow; until then every
	// instance's launches go in line at once.
	SlowUntil time.Time
}

// Session is one signed-in device.
type Session struct {
	ID         string // SessionID of the cookie's token; the token itself is never stored
	AccountID  int64
	CreatedAt  time.Time
	LastSeenAt time.Time
	UserAgent  string // as the browser sent it, bounded (MaxUserAgent)
}

// MaxUserAgent bounds the user agent kept with a session.
const MaxUserAgent = 256

// SignIn is one sign-in attempt as regulation counts it.
type SignIn struct {
	Email string // as typed; counted lower-cased
	IP    string
	At    time.Time
}

// Ban is a ban in force.
type Ban struct {
	Kind  string // BanEmail or BanIP
	Value string // the lower-cased email, or the IP
	Until time.Time
}

// Ban kinds.
const (
	BanEmail = "email"
	BanIP    = "ip"
)

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
