package handlers

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/oidc"
)

// fakeAccounts is an in-memory Accounts with the store's rules the
// handlers rely on: emails unique case-insensitively, the last enabled
// admin kept, the session epoch raised by disable, password and sign-out.
// err, when set, is what every call answers.
type fakeAccounts struct {
	mu       sync.Mutex
	accounts []accounts.Account
	links    map[int64]accounts.Link
	events   []accounts.Event
	bans     map[string]time.Time // by lower-cased email
	sessions map[string]accounts.Session
	pwLinks  map[string]passwordLink // set-password links by id
	used     map[string]time.Time    // single-use ids -> until
	err      error
}

type passwordLink struct {
	account int64
	expires time.Time
}

func newFakeAccounts() *fakeAccounts {
	return &fakeAccounts{links: map[int64]accounts.Link{}, bans: map[string]time.Time{}, sessions: map[string]accounts.Session{}, pwLinks: map[string]passwordLink{}, used: map[string]time.Time{}}
}

func (f *fakeAccounts) find(id int64) (*accounts.Account, error) {
	for i := range f.accounts {
		if f.accounts[i].ID == id {
			return &f.accounts[i], nil
		}
	}
	return nil, accounts.ErrNotFound
}

func (f *fakeAccounts) add(n accounts.NewAccount) (accounts.Account, error) {
	if err := n.Normalize(); err != nil {
		return accounts.Account{}, err
	}
	for _, a := range f.accounts {
		if mailaddr.Equal(a.Email, n.Email) {
			return accounts.Account{}, accounts.ErrEmailTaken
		}
	}
	a := accounts.Account{ID: int64(len(f.accounts) + 1), Email: n.Email, FirstName: n.FirstName, LastName: n.LastName,
		PasswordHash: n.PasswordHash, Admin: n.Admin, SessionEpoch: 1}
	f.accounts = append(f.accounts, a)
	return a, nil
}

func (f *fakeAccounts) CreateAccount(_ context.Context, n accounts.NewAccount) (accounts.Account, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return accounts.Account{}, f.err
	}
	return f.add(n)
}

func (f *fakeAccounts) CreateAccounts(_ context.Context, ns []accounts.NewAccount) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	saved := slices.Clone(f.accounts)
	for _, n := range ns {
		if _, err := f.add(n); err != nil {
			f.accounts = saved // all or none
			return err
		}
	}
	return nil
}

func (f *fakeAccounts) AccountByEmail(_ context.Context, email string) (accounts.Account, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return accounts.Account{}, f.err
	}
	for _, a := range f.accounts {
		if mailaddr.Equal(a.Email, email) {
			return a, nil
		}
	}
	return accounts.Account{}, accounts.ErrNotFound
}

func (f *fakeAccounts) AccountByID(_ context.Context, id int64) (accounts.Account, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return accounts.Account{}, f.err
	}
	a, err := f.find(id)
	if err != nil {
		return accounts.Account{}, err
	}
	return *a, nil
}

// FreshAccountByID: the fake has no cache.
func (f *fakeAccounts) FreshAccountByID(ctx context.Context, id int64) (accounts.Account, error) {
	return f.AccountByID(ctx, id)
}

func (f *fakeAccounts) ListAccounts(_ context.Context, flt accounts.AccountFilter) ([]accounts.Account, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, 0, f.err
	}
	var match []accounts.Account
	for _, a := range f.accounts {
		if strings.Contains(strings.ToLower(a.Email+" "+a.Name()), strings.ToLower(flt.Search)) {
			match = append(match, a)
		}
	}
	page := match[min(flt.Offset, len(match)):]
	if flt.Limit > 0 && len(page) > flt.Limit {
		page = page[:flt.Limit]
	}
	return page, len(match), nil
}

// update changes one account under the lock, keeping an enabled admin.
func (f *fakeAccounts) update(id int64, change func(a *accounts.Account)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	a, err := f.find(id)
	if err != nil {
		return err
	}
	before, admins := *a, f.admins()
	change(a)
	if admins > 0 && f.admins() == 0 {
		*a = before
		return accounts.ErrLastAdmin
	}
	return nil
}

// admins counts the enabled admins.
func (f *fakeAccounts) admins() int {
	n := 0
	for _, a := range f.accounts {
		if a.Admin && !a.Disabled {
			n++
		}
	}
	return n
}

func (f *fakeAccounts) SetDisabled(_ context.Context, id int64, disabled bool) error {
	return f.update(id, func(a *accounts.Account) { a.Disabled = disabled; a.SessionEpoch++ })
}

func (f *fakeAccounts) SetAdmin(_ context.Context, id int64, admin bool) error {
	return f.update(id, func(a *accounts.Account) { a.Admin = admin })
}

func (f *fakeAccounts) SetPasswordHash(_ context.Context, id int64, hash string) error {
	return f.update(id, func(a *accounts.Account) { a.PasswordHash = hash; a.SessionEpoch++ })
}

func (f *fakeAccounts) EndSessions(_ context.Context, id int64) error {
	return f.update(id, func(a *accounts.Account) {
		a.SessionEpoch++
		for sid, s := range f.sessions {
			if s.AccountID == id {
				delete(f.sessions, sid)
			}
		}
	})
}

func (f *fakeAccounts) UseOnce(_ context.Context, kind, id string, until time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.used[kind+"/"+id]; ok {
		return accounts.ErrUsed
	}
	f.used[kind+"/"+id] = until
	return nil
}

func (f *fakeAccounts) CreatePasswordLink(_ context.Context, accountID int64, id string, expires time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, l := range f.pwLinks {
		if l.account == accountID {
			delete(f.pwLinks, k)
		}
	}
	f.pwLinks[id] = passwordLink{accountID, expires}
	return nil
}

func (f *fakeAccounts) PasswordLink(_ context.Context, id string, now time.Time) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.pwLinks[id]
	if !ok || !now.Before(l.expires) {
		return 0, accounts.ErrNotFound
	}
	return l.account, nil
}

func (f *fakeAccounts) TakePasswordLink(ctx context.Context, id string, now time.Time) (int64, error) {
	aid, err := f.PasswordLink(ctx, id, now)
	f.mu.Lock()
	delete(f.pwLinks, id)
	f.mu.Unlock()
	return aid, err
}

func (f *fakeAccounts) CreateSession(_ context.Context, s accounts.Session) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions[s.ID] = s
	return nil
}

func (f *fakeAccounts) SessionByID(_ context.Context, id string) (accounts.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions[id]
	if !ok {
		return accounts.Session{}, accounts.ErrNotFound
	}
	return s, nil
}

func (f *fakeAccounts) TouchSession(_ context.Context, id string, at time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.sessions[id]; ok {
		s.LastSeenAt = at
		f.sessions[id] = s
	}
	return nil
}

func (f *fakeAccounts) EndSession(_ context.Context, accountID int64, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.sessions[id]; !ok || s.AccountID != accountID {
		return accounts.ErrNotFound
	}
	delete(f.sessions, id)
	return nil
}

func (f *fakeAccounts) ListSessions(_ context.Context, accountID int64) ([]accounts.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []accounts.Session
	for _, s := range f.sessions {
		if s.AccountID == accountID {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LastSeenAt.After(out[j].LastSeenAt) })
	return out, nil
}

func (f *fakeAccounts) LinkFor(_ context.Context, accountID int64) (accounts.Link, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return accounts.Link{}, f.err
	}
	l, ok := f.links[accountID]
	if !ok {
		return accounts.Link{}, accounts.ErrNotFound
	}
	return l, nil
}

func (f *fakeAccounts) DeleteLink(_ context.Context, accountID int64, platformUserID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	if l, ok := f.links[accountID]; ok && (platformUserID == "" || l.PlatformUserID == platformUserID) {
		delete(f.links, accountID)
	}
	return nil
}

func (f *fakeAccounts) ListLinks(_ context.Context, ids []string) (map[string]int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	out := map[string]int64{}
	for aid, l := range f.links {
		if slices.Contains(ids, l.PlatformUserID) {
			out[l.PlatformUserID] = aid
		}
	}
	return out, nil
}

func (f *fakeAccounts) ListBans(_ context.Context, now time.Time) ([]accounts.Ban, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []accounts.Ban
	for email, until := range f.bans {
		if until.After(now) {
			out = append(out, accounts.Ban{Kind: accounts.BanEmail, Value: email, Until: until})
		}
	}
	return out, f.err
}

func (f *fakeAccounts) LiftBans(_ context.Context, email, _ string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return 0, f.err
	}
	_, ok := f.bans[mailaddr.Key(email)]
	delete(f.bans, mailaddr.Key(email))
	if ok {
		return 1, nil
	}
	return 0, nil
}

func (f *fakeAccounts) Record(_ context.Context, e accounts.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	e.ID = int64(len(f.events) + 1)
	f.events = append(f.events, e)
	return nil
}

func (f *fakeAccounts) ListEvents(_ context.Context, flt accounts.AuditFilter) ([]accounts.Event, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, 0, f.err
	}
	var match []accounts.Event
	for i := len(f.events) - 1; i >= 0; i-- { // newest first
		e := f.events[i]
		if (flt.Kind == "" || e.Kind == flt.Kind) && (flt.Outcome == "" || e.Outcome == flt.Outcome) && (flt.AccountID == 0 || e.AccountID == flt.AccountID) {
			match = append(match, e)
		}
	}
	page := match[min(flt.Offset, len(match)):]
	if flt.Limit > 0 && len(page) > flt.Limit {
		page = page[:flt.Limit]
	}
	return page, len(match), nil
}

func (f *fakeAccounts) Ping(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// eventsOf returns the recorded events of one kind, oldest first.
func (f *fakeAccounts) eventsOf(kind string) []accounts.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []accounts.Event
	for _, e := range f.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// fakePasswords "hashes" by prefixing; it counts verifications, dummy ones
// apart.
type fakePasswords struct {
	mu              sync.Mutex
	verified, dummy int
	busy            bool // every call answers accounts.ErrBusy
}

func (p *fakePasswords) Hash(_ context.Context, pw string) (string, error) { return "hash:" + pw, nil }

func (p *fakePasswords) Verify(_ context.Context, pw, encoded string) error {
	p.mu.Lock()
	p.verified++
	busy := p.busy
	p.mu.Unlock()
	if busy {
		return accounts.ErrBusy
	}
	if encoded != "hash:"+pw {
		return accounts.ErrPasswordMismatch
	}
	return nil
}

func (p *fakePasswords) VerifyDummy(context.Context, string) error {
	p.mu.Lock()
	p.dummy++
	busy := p.busy
	p.mu.Unlock()
	if busy {
		return accounts.ErrBusy
	}
	return accounts.ErrPasswordMismatch
}

func (p *fakePasswords) counts() (verified, dummy int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.verified, p.dummy
}

// fakeRegulator refuses what the test bans and records what it is told.
type fakeRegulator struct {
	mu        sync.Mutex
	banned    map[string]time.Time // by email or IP: Admit refuses until then
	banOnFail bool                 // Fail answers "a ban started"
	admitted  []string             // "email ip"
	failed    int
	succeeded int
}

func (r *fakeRegulator) Admit(_ context.Context, email, ip string) (accounts.Attempt, time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.banned[email]; ok {
		return accounts.Attempt{}, t, nil
	}
	if t, ok := r.banned[ip]; ok {
		return accounts.Attempt{}, t, nil
	}
	r.admitted = append(r.admitted, email+" "+ip)
	return accounts.Attempt{}, time.Time{}, nil
}

func (r *fakeRegulator) Fail(context.Context, accounts.Attempt) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed++
	return r.banOnFail, nil
}

func (r *fakeRegulator) Succeed(context.Context, accounts.Attempt) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.succeeded++
	return nil
}

// launchCall is one call of the fake launcher.
type launchCall struct {
	account             accounts.Account
	returnTo, requestID string
	hasDeadline         bool
}

// fakeLauncher answers with do (default: an exchange URL) and records the
// calls.
type fakeLauncher struct {
	mu    sync.Mutex
	calls []launchCall
	do    func(acct accounts.Account, returnTo string) (launch.Result, error)
}

func (l *fakeLauncher) Launch(ctx context.Context, acct accounts.Account, returnTo, requestID string) (launch.Result, error) {
	_, hasDeadline := ctx.Deadline()
	l.mu.Lock()
	l.calls = append(l.calls, launchCall{account: acct, returnTo: returnTo, requestID: requestID, hasDeadline: hasDeadline})
	do := l.do
	l.mu.Unlock()
	if do != nil {
		return do(acct, returnTo)
	}
	return launch.Result{ExchangeURL: "https://platform.example/api/5/login-token/login/TOKEN-" + acct.Email, Path: launch.PathReturning}, nil
}

func (l *fakeLauncher) made() []launchCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// fakePlatform answers the console's calls with what the test set.
type fakePlatform struct {
	mu      sync.Mutex
	conn    Connection
	report  CheckReport
	checks  int
	users   UserPage
	listErr error
	listed  []string // "query page size"
}

func (p *fakePlatform) Connection() Connection { return p.conn }

func (p *fakePlatform) Check(context.Context) CheckReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.checks++
	return p.report
}

func (p *fakePlatform) ListUsers(_ context.Context, query string, page, size int) (UserPage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listed = append(p.listed, strings.Join([]string{query, strconv.Itoa(page), strconv.Itoa(size)}, " "))
	return p.users, p.listErr
}

func (p *fakePlatform) set(f func(p *fakePlatform)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

// fakeIdP starts flows with a fresh state each and finishes them as the
// test set: an error, or the identity.
type fakeIdP struct {
	mu        sync.Mutex
	n         int
	startErr  error
	finishErr error
	id        oidc.Identity
}

func (i *fakeIdP) Start(_ context.Context, redirectURL, next string) (string, oidc.Flow, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.startErr != nil {
		return "", oidc.Flow{}, i.startErr
	}
	i.n++
	state := fmt.Sprintf("state-%d", i.n)
	return "https://idp.example/auth?state=" + state, oidc.Flow{State: state, Next: next, RedirectURL: redirectURL, Expires: time.Now().Add(oidc.FlowTTL)}, nil
}

func (i *fakeIdP) Finish(_ context.Context, f oidc.Flow, q url.Values) (oidc.Identity, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if q.Get("state") != f.State {
		return oidc.Identity{}, oidc.ErrBadState
	}
	if i.finishErr != nil {
		return oidc.Identity{}, i.finishErr
	}
	return i.id, nil
}

func (i *fakeIdP) Discover(context.Context) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.startErr
}

// idpAnswer starts a flow with the client and answers it with the given
// extra query.
func idpAnswer(c *client, extra string) *response {
	r := c.get("/auth/oidc")
	u, _ := url.Parse(r.header.Get("Location"))
	return c.get("/auth/oidc/callback?state=" + u.Query().Get("state") + extra)
}
