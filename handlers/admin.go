package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/launch/provision"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// timeLayout is how the console shows a time: in server.time_zone, with
// its abbreviation.
const timeLayout = "2006-01-02 15:04 MST"

// zone is the time zone pages show times in (server.time_zone).
func (h *server) zone() *time.Location {
	if h.Zone == nil {
		return time.UTC
	}
	return h.Zone
}

// Page sizes of the console's lists.
const (
	accountsPerPage      = 25
	platformUsersPerPage = 20
	auditPerPage         = 50
	// auditWindow bounds the audit page's search to the newest events: a
	// filter over a year's ten million read them all, past the store's
	// 2 s deadline; over this window it takes 11-94 ms on SQLite and
	// 39-80 ms on PostgreSQL.
	auditWindow = 250_000
)

func (h *server) adminRoutes(g *echo.Group) {
	g.GET("", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/admin/connection") })
	g.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/admin/connection") })
	g.GET("/connection", h.connectionPage)
	g.POST("/connection/check", h.connectionCheck)
	g.GET("/accounts", h.accountsPage)
	g.POST("/accounts", h.createAccount)
	g.POST("/accounts/import", h.importAccounts)
	g.GET("/accounts/:id", h.accountPage)
	g.POST("/accounts/:id/:action", h.accountAction)
	g.GET("/accounts/:id/sessions", h.sessionsPage)
	g.POST("/accounts/:id/sessions/:sid/end", h.endSession)
	g.GET("/platform-users", h.platformUsersPage)
	g.GET("/audit", h.auditPage)
	g.GET("/bans", h.bansPage)
	g.POST("/bans/lift", h.liftBan)
	g.GET("/provisioning", h.provisioningPage)
	g.POST("/provisioning/start", h.provisioningStart)
}

// --- connection ---

func (h *server) connection() views.Connection {
	c := h.Platform.Connection()
	key := c.KeyID
	if key == "" {
		key = "(none: simple method)"
	}
	return views.Connection{BaseURL: c.BaseURL, Embedded: c.Embedded, Method: c.Method, Scheme: c.Scheme, KeyID: key}
}

func (h *server) connectionPage(c echo.Context) error {
	return h.render(c, http.StatusOK, views.ConnectionPage(h.page(c, "Connection"), h.connection()))
}

func (h *server) connectionCheck(c echo.Context) error {
	r := h.Platform.Check(c.Request().Context())
	h.adminAudit(c, "connection check: "+r.Verdict, "")
	d := h.connection()
	d.Result = checkView(r)
	return h.render(c, http.StatusOK, views.ConnectionPage(h.page(c, "Connection"), d))
}

func checkView(r CheckReport) *views.CheckView {
	v := &views.CheckView{OK: r.OK(), Verdict: r.Verdict, Summary: r.Summary, Advice: r.Advice, URL: r.URL,
		Latency: r.Latency.Round(100 * time.Microsecond).String(), Clock: r.Clock}
	if r.Status != 0 {
		v.Status = strconv.Itoa(r.Status)
	}
	return v
}

// --- accounts ---

func (h *server) accountsPage(c echo.Context) error {
	d, err := h.accountsData(c, views.AccountsPage{Query: consoleQuery(c, "q")})
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, views.AccountsList(h.page(c, "Accounts"), d))
}

// accountsData fills the list part of the accounts page.
func (h *server) accountsData(c echo.Context, d views.AccountsPage) (views.AccountsPage, error) {
	ctx := c.Request().Context()
	page := pageParam(c)
	rows, total, err := h.Store.Accounts.ListAccounts(ctx, store.AccountFilter{Search: d.Query, Offset: (page - 1) * accountsPerPage, Limit: accountsPerPage})
	if err != nil {
		return d, err
	}
	banned, err := h.emailBans(ctx)
	if err != nil {
		return d, err
	}
	for _, a := range rows {
		r, err := h.accountRow(ctx, a, banned)
		if err != nil {
			return d, err
		}
		d.Rows = append(d.Rows, r)
	}
	d.Pager = makePager(c, page, total, accountsPerPage)
	return d, nil
}

// accountRow is what the console shows of a: status, ban (from banned,
// by email key), look-alike marks and its link to the platform.
func (h *server) accountRow(ctx context.Context, a store.Account, banned map[string]time.Time) (views.AccountRow, error) {
	r := views.AccountRow{ID: a.ID, Email: a.Email, Name: a.Name(), Admin: a.Admin, Disabled: a.Disabled, NoPassword: a.PasswordHash == passhash.NoPassword,
		ManagedByIdP: a.ManagedBy == store.ManagedBySCIM, ChangedAt: a.UpdatedAt.In(h.zone()).Format("2 Jan 2006 15:04 MST")}
	if until, ok := banned[mailaddr.Key(a.Email)]; ok {
		r.BannedUntil = until.In(h.zone()).Format("15:04 MST")
	}
	var err error
	if r.LooksLike, err = h.lookAlike(ctx, a); err != nil {
		return r, err
	}
	r.MixedScripts = mailaddr.MixesScripts(a.Email)
	l, err := h.Store.Links.LinkFor(ctx, a.ID)
	switch {
	case err == nil:
		r.PlatformUserID = l.PlatformUserID
		r.LinkedAt = l.LinkedAt.Format(timeLayout)
		r.LastLaunch = "never"
		if !l.LastLaunchAt.IsZero() {
			r.LastLaunch = l.LastLaunchAt.Format(timeLayout)
		}
	case !errors.Is(err, store.ErrNotFound):
		return r, err
	}
	return r, nil
}

// emailBans are the sign-in bans on emails in force, by email key.
func (h *server) emailBans(ctx context.Context) (map[string]time.Time, error) {
	bans, err := h.Store.Accounts.ListBans(ctx, h.Now())
	if err != nil {
		return nil, err
	}
	banned := map[string]time.Time{}
	for _, b := range bans {
		if b.Kind == store.BanEmail {
			banned[b.Value] = b.Until
		}
	}
	return banned, nil
}

// accountPage is one account's page: what the list shows and every
// action on it.
func (h *server) accountPage(c echo.Context) error {
	target, err := h.targetAccount(c)
	if err != nil {
		return err
	}
	return h.accountResult(c, http.StatusOK, target.ID, views.AccountPage{})
}

// accountResult renders an account's page after an action, with a notice
// or an error (status 200, or the error's status).
func (h *server) accountResult(c echo.Context, status int, id int64, d views.AccountPage) error {
	ctx := c.Request().Context()
	a, err := h.Store.Accounts.AccountByID(ctx, id)
	if err != nil {
		return err
	}
	banned, err := h.emailBans(ctx)
	if err != nil {
		return err
	}
	if d.Account, err = h.accountRow(ctx, a, banned); err != nil {
		return err
	}
	ids, err := h.Store.Identities.IdentitiesOf(ctx, a.ID)
	if err != nil {
		return err
	}
	for _, id := range ids {
		d.WaysIn = append(d.WaysIn, views.WayIn{Source: id.Source, Subject: id.Subject, Linked: id.LinkedAt.In(h.zone()).Format("2 Jan 2006 15:04 MST")})
	}
	return h.render(c, status, views.AccountDetail(h.pageTitled(c, a.Email), d))
}

// lookAlike returns the address of another account that a's can be
// mistaken for (dеmo@ with a Cyrillic е, and demo@), or "". Only an
// address with look-alike letters can pose as another, so the others
// cost no query.
func (h *server) lookAlike(ctx context.Context, a store.Account) (string, error) {
	skeleton := mailaddr.Skeleton(a.Email)
	if skeleton == mailaddr.Key(a.Email) {
		return "", nil
	}
	other, err := h.Store.Accounts.AccountByEmail(ctx, skeleton)
	switch {
	case err == nil && other.ID != a.ID:
		return other.Email, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return "", err
	}
	return "", nil
}

// accountsResult renders the accounts page after an action, with a notice
// or an error (status 200, or the error's status).
func (h *server) accountsResult(c echo.Context, status int, d views.AccountsPage) error {
	d.Query = consoleQuery(c, "q")
	full, err := h.accountsData(c, d)
	if err != nil {
		return err
	}
	return h.render(c, status, views.AccountsList(h.page(c, "Accounts"), full))
}

func (h *server) createAccount(c echo.Context) error {
	form := views.NewAccountForm{Email: strings.TrimSpace(c.FormValue("email")), FirstName: c.FormValue("first_name"),
		LastName: c.FormValue("last_name"), Admin: c.FormValue("admin") != ""}
	password := c.FormValue("password")
	fail := func(msg string) error {
		return h.accountsResult(c, http.StatusBadRequest, views.AccountsPage{Error: msg, New: form})
	}
	n := store.NewAccount{Email: form.Email, FirstName: form.FirstName, LastName: form.LastName, PasswordHash: "pending", Admin: form.Admin}
	if err := n.Normalize(); err != nil {
		return fail(userMessage(err))
	}
	hash, err := h.signin.NewPasswordHash(c.Request().Context(), password)
	var refused *signin.RefusedPasswordError
	if errors.As(err, &refused) {
		return fail(refused.Reason)
	}
	if err != nil {
		return err
	}
	n.PasswordHash = hash
	acct, err := h.Store.Accounts.CreateAccount(c.Request().Context(), n)
	if errors.Is(err, store.ErrEmailTaken) {
		return h.accountsResult(c, http.StatusConflict, views.AccountsPage{Error: "An account with email " + n.Email + " exists already.", New: form})
	}
	if err != nil {
		return err
	}
	h.adminAudit(c, fmt.Sprintf("created account (admin=%v)", acct.Admin), acct.Email)
	return h.accountsResult(c, http.StatusOK, views.AccountsPage{Notice: "Added " + acct.Email + "."})
}

// userMessage is an accounts validation error without its class prefix.
func userMessage(err error) string {
	return strings.TrimPrefix(err.Error(), store.ErrInvalid.Error()+": ")
}

func (h *server) accountAction(c echo.Context) error {
	ctx := c.Request().Context()
	target, err := h.targetAccount(c)
	if err != nil {
		return err
	}
	id := target.ID
	if target.ManagedBy == store.ManagedBySCIM && idpOwned(c.Param("action")) {
		return h.accountResult(c, http.StatusConflict, id, views.AccountPage{Error: "Refused: your identity provider manages " + target.Email +
			" (SCIM): disable, enable and the admin role are changed there, and reach the bridge at its next sync."})
	}
	var notice string
	switch c.Param("action") {
	case "disable":
		err, notice = h.Store.Accounts.SetDisabled(ctx, id, true), "Disabled "+target.Email+": it can no longer sign in or launch, and its sessions have ended."
	case "enable":
		err, notice = h.Store.Accounts.SetDisabled(ctx, id, false), "Enabled "+target.Email+"."
	case "grant-admin":
		err, notice = h.Store.Accounts.SetAdmin(ctx, id, true), target.Email+" is now a partner admin."
	case "revoke-admin":
		err, notice = h.Store.Accounts.SetAdmin(ctx, id, false), target.Email+" is no longer an admin."
	case "invite":
		token, ierr := accounts.IssuePasswordLink(ctx, h.Store.OneTime, id, h.Now())
		if ierr != nil {
			return ierr
		}
		h.adminAudit(c, "invite (set-password link)", target.Email)
		link := h.baseURL(c) + accounts.SetPasswordPath(token)
		noStore(c)
		return h.accountResult(c, http.StatusOK, id, views.AccountPage{InviteLink: link})
	case "end-sessions":
		err, notice = h.Store.Sessions.EndSessions(ctx, id), "Ended every session of "+target.Email+": each device must sign in again."
	case "unlink":
		err, notice = h.Store.Links.DeleteLink(ctx, id, ""), "Unlinked "+target.Email+": the next launch looks the platform user up afresh."
	case "lift-ban":
		_, err = h.Store.Accounts.LiftBans(ctx, target.Email, "")
		notice = "Lifted the sign-in ban on " + target.Email + "; its failed sign-ins are forgotten."
	case "password":
		err = h.signin.SetPassword(ctx, target, c.FormValue("password"))
		if refused := (*signin.RefusedPasswordError)(nil); errors.As(err, &refused) {
			return h.accountResult(c, http.StatusBadRequest, id, views.AccountPage{Error: "Password for " + target.Email + ": " + refused.Reason})
		}
		notice = "Set a new password for " + target.Email + "; its sessions have ended and any sign-in ban is lifted."
	default:
		return echo.NewHTTPError(http.StatusNotFound)
	}
	if errors.Is(err, store.ErrLastAdmin) {
		return h.accountResult(c, http.StatusConflict, id, views.AccountPage{Error: "Refused: " + target.Email + " is the last active admin. Make another account an admin first."})
	}
	if err != nil {
		return err
	}
	switch c.Param("action") {
	case "disable", "end-sessions", "password": // every session ended
		h.endLaunches(id, "")
	}
	h.adminAudit(c, c.Param("action"), target.Email)
	return h.accountResult(c, http.StatusOK, id, views.AccountPage{Notice: notice})
}

// idpOwned reports the console's actions on what an identity provider
// owns of the accounts it manages: their status and admin role.
func idpOwned(action string) bool {
	switch action {
	case "disable", "enable", "grant-admin", "revoke-admin":
		return true
	}
	return false
}

// endLaunches stops the launches in flight of the account's ended session
// ("": of all its sessions); the store dropped their tickets with them.
func (h *server) endLaunches(accountID int64, session string) {
	if h.Line != nil {
		h.Line.End(accountID, session)
	}
}

// baseURL is how browsers reach the bridge, for links it hands out.
func (h *server) baseURL(c echo.Context) string {
	if h.PublicURL != "" {
		return strings.TrimRight(h.PublicURL, "/")
	}
	// Never the request's Host or X-Forwarded-* headers: whoever sends the
	// request writes those. The address the connection reached is ours.
	if a, ok := c.Request().Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return "http://" + a.String()
	}
	return "http://localhost"
}

// targetAccount is the account named by the :id of an admin route.
func (h *server) targetAccount(c echo.Context) (store.Account, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return store.Account{}, echo.NewHTTPError(http.StatusNotFound)
	}
	a, err := h.Store.Accounts.AccountByID(c.Request().Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Account{}, echo.NewHTTPError(http.StatusNotFound)
	}
	return a, err
}

// sessionsPage lists an account's signed-in devices.
func (h *server) sessionsPage(c echo.Context) error {
	target, err := h.targetAccount(c)
	if err != nil {
		return err
	}
	return h.sessionsResult(c, http.StatusOK, target, views.SessionsPage{})
}

func (h *server) sessionsResult(c echo.Context, status int, target store.Account, d views.SessionsPage) error {
	list, err := h.Store.Sessions.ListSessions(c.Request().Context(), target.ID)
	if err != nil {
		return err
	}
	own, _ := c.Get(ctxSessionID).(string)
	d.AccountID, d.Email = target.ID, target.Email
	for _, s := range list {
		d.Rows = append(d.Rows, views.SessionRow{ID: s.ID, ShortID: s.ID[:12], Created: s.CreatedAt.In(h.zone()).Format(timeLayout),
			LastSeen: s.LastSeenAt.In(h.zone()).Format(timeLayout), UserAgent: s.UserAgent, ThisDevice: s.ID == own})
	}
	return h.render(c, status, views.AccountSessions(h.page(c, "Sessions"), d))
}

// endSession ends one device's session of the account.
func (h *server) endSession(c echo.Context) error {
	target, err := h.targetAccount(c)
	if err != nil {
		return err
	}
	sid := c.Param("sid")
	switch err := h.Store.Sessions.EndSession(c.Request().Context(), target.ID, sid); {
	case errors.Is(err, store.ErrNotFound):
		return h.sessionsResult(c, http.StatusNotFound, target, views.SessionsPage{Error: "That session has ended already (or is not one of " + target.Email + "'s)."})
	case err != nil:
		return err
	}
	h.endLaunches(target.ID, sid)
	h.adminAudit(c, "end session "+truncate(sid, 12), target.Email)
	return h.sessionsResult(c, http.StatusOK, target, views.SessionsPage{Notice: "Ended the session " + truncate(sid, 12) + ": that device must sign in again."})
}

// importAccounts creates accounts from CSV (email,firstName,lastName): all
// rows are checked first, and nothing is written unless every row passes.
func (h *server) importAccounts(c echo.Context) error {
	text := c.FormValue("csv")
	if fh, err := c.FormFile("file"); err == nil {
		f, err := fh.Open()
		if err != nil {
			return err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, 1<<20))
		if err != nil {
			return err
		}
		text = string(b)
	}
	added, problems, err := accounts.ImportCSV(c.Request().Context(), h.Store.Accounts, text)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return h.accountsResult(c, http.StatusBadRequest, views.AccountsPage{ImportErrors: problems, ImportCSV: text})
	}
	h.adminAudit(c, fmt.Sprintf("imported %d accounts from CSV", added), "")
	return h.accountsResult(c, http.StatusOK, views.AccountsPage{Notice: fmt.Sprintf("Imported %d accounts. They can sign in once you set their passwords.", added)})
}

// --- platform users ---

func (h *server) platformUsersPage(c echo.Context) error {
	ctx := c.Request().Context()
	page := pageParam(c)
	d := views.PlatformUsersPage{Query: consoleQuery(c, "q")}
	// One platform call per page view: the admin pages, the bridge never loops.
	p, err := h.Platform.ListUsers(ctx, d.Query, page, platformUsersPerPage)
	if err != nil {
		d.Error = "The platform did not list its users: " + err.Error()
		return h.render(c, http.StatusBadGateway, views.PlatformUsers(h.page(c, "Platform users"), d))
	}
	ids := make([]string, len(p.Users))
	for i, u := range p.Users {
		ids[i] = u.ID
	}
	linked, err := h.Store.Links.ListLinks(ctx, ids)
	if err != nil {
		return err
	}
	for _, u := range p.Users {
		row := views.PlatformUserRow{UserID: u.ID, Name: strings.TrimSpace(u.FirstName + " " + u.LastName), Email: u.Email}
		if aid, ok := linked[u.ID]; ok {
			if a, err := h.Store.Accounts.AccountByID(ctx, aid); err == nil {
				row.LinkedTo = a.Email
				row.AddressDiffers = !mailaddr.Equal(a.Email, u.Email)
			}
		}
		d.Rows = append(d.Rows, row)
	}
	d.Pager = makePager(c, page, p.Total, platformUsersPerPage)
	return h.render(c, http.StatusOK, views.PlatformUsers(h.page(c, "Platform users"), d))
}

// --- audit ---

func (h *server) auditPage(c echo.Context) error {
	ctx := c.Request().Context()
	page := pageParam(c)
	d := views.AuditPage{Account: consoleQuery(c, "account"), Kind: consoleQuery(c, "kind"), Outcome: consoleQuery(c, "outcome"),
		Retention: "forever", Window: auditWindow}
	if h.AuditRetention > 0 {
		d.Retention = fmt.Sprintf("%d days", int(h.AuditRetention.Hours()/24))
	}
	f := store.AuditFilter{Kind: d.Kind, Outcome: d.Outcome, Offset: (page - 1) * auditPerPage, Limit: auditPerPage, Newest: auditWindow}
	if d.Account != "" {
		a, err := h.Store.Accounts.AccountByEmail(ctx, d.Account)
		if errors.Is(err, store.ErrNotFound) {
			d.Error = "No account has the email " + d.Account + "."
			return h.render(c, http.StatusOK, views.AuditLog(h.page(c, "Audit log"), d))
		}
		if err != nil {
			return err
		}
		f.AccountID = a.ID
	}
	evs, total, err := h.Store.Audit.ListEvents(ctx, f)
	if err != nil {
		return err
	}
	for _, e := range evs {
		row := views.AuditRow{At: e.At.In(h.zone()).Format(timeLayout), Kind: e.Kind, Email: e.Email, Outcome: e.Outcome,
			Detail: e.Detail, RequestID: e.RequestID, Calls: e.PlatformCalls}
		if e.Kind == store.KindLaunch {
			row.Latency = e.Latency.String()
			if e.Latency < time.Millisecond {
				row.Latency = "<1ms" // stored in whole milliseconds
			}
		}
		d.Rows = append(d.Rows, row)
	}
	d.Pager = makePager(c, page, total, auditPerPage)
	return h.render(c, http.StatusOK, views.AuditLog(h.page(c, "Audit log"), d))
}

// --- helpers ---

// adminAudit records an admin action: who did it, what, to whom.
func (h *server) adminAudit(c echo.Context, what, target string) {
	actor, _ := account(c)
	detail := what
	if target != "" {
		detail += ": " + target
	}
	h.audit(c, store.Event{Kind: store.KindAdmin, AccountID: actor.ID, Email: actor.Email, Outcome: "ok", Detail: detail})
}

// pageParam is the 1-based ?page=, defaulting to 1.
func pageParam(c echo.Context) int {
	p, err := strconv.Atoi(c.QueryParam("page"))
	if err != nil || p < 1 || p > 1_000_000 {
		return 1
	}
	return p
}

// makePager links the neighbouring pages, keeping the other query values.
func makePager(c echo.Context, page, total, per int) views.Pager {
	pages := max(1, (total+per-1)/per)
	pg := views.Pager{Page: page, Pages: pages, Total: total}
	link := func(n int) string {
		q := url.Values{}
		for k, v := range c.QueryParams() {
			q[k] = v
		}
		q.Set("page", strconv.Itoa(n))
		return c.Request().URL.Path + "?" + q.Encode()
	}
	if page > 1 {
		pg.PrevURL = link(min(page-1, pages))
	}
	if page < pages {
		pg.NextURL = link(page + 1)
	}
	return pg
}

// --- provisioning ---

// provisioningPage shows the accounts provisioned and the background job;
// it reloads itself while the job runs (on whichever instance runs it).
func (h *server) provisioningPage(c echo.Context) error {
	if h.Provisioning == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	ctx := c.Request().Context()
	d := views.ProvisioningPage{Embedded: h.Platform.Connection().Embedded}
	var err error
	if d.Linked, d.Unlinked, err = h.Store.Links.CountLinks(ctx); err != nil {
		return err
	}
	job, err := h.Provisioning.Latest(ctx)
	switch {
	case err == nil:
		d.HasJob, d.StartedBy, d.Total, d.Done = true, job.StartedBy, job.Total, job.Done
		d.Created, d.Existed, d.Failed, d.RateLimited = job.Created, job.Existed, job.Failed, job.RateLimited
		d.State = provision.Describe(job, h.Now())
		d.Running = job.State == store.JobRunning && h.Now().Sub(job.SeenAt) <= provision.JobStale
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	switch c.QueryParam("m") {
	case "started":
		d.Notice = "Provisioning started. This page shows its progress."
	case "running":
		d.Error = "A provisioning job is running already."
	}
	p := h.page(c, "Provisioning")
	if d.Running {
		// Reloads every 2 s while the job runs, unless the admin stopped
		// the reloads (WCAG 2.2.1).
		d.Still = c.QueryParam("still") != ""
		if !d.Still {
			p.Refresh = "2"
		}
		noStore(c)
	}
	return h.render(c, http.StatusOK, views.ProvisioningView(p, d))
}

// provisioningStart starts the background job (one at a time across the
// instances).
func (h *server) provisioningStart(c echo.Context) error {
	if h.Provisioning == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	actor, _ := account(c)
	err := h.Provisioning.Start(c.Request().Context(), actor.Email)
	if errors.Is(err, store.ErrJobRunning) {
		return c.Redirect(http.StatusSeeOther, "/admin/provisioning?m=running")
	}
	if err != nil {
		return err
	}
	h.adminAudit(c, "started provisioning of every unlinked account", "")
	return c.Redirect(http.StatusSeeOther, "/admin/provisioning?m=started")
}

// maxConsoleQuery bounds a console search or filter: an address at most.
// A longer one is cut, so a page never carries an outsider's megabyte
// back in its form and its links.
const maxConsoleQuery = 254

// consoleQuery is the query parameter name of a console page, trimmed and
// bounded (cut at a character's start).
func consoleQuery(c echo.Context, name string) string {
	q := strings.TrimSpace(c.QueryParam(name))
	if len(q) <= maxConsoleQuery {
		return q
	}
	i := maxConsoleQuery
	for i > 0 && !utf8.RuneStart(q[i]) {
		i--
	}
	return q[:i]
}
