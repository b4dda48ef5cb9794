package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

func (h *Console) accountsPage(c echo.Context) error {
	d, err := h.accountsData(c, views.AccountsPage{Query: consoleQuery(c, "q")})
	if err != nil {
		return err
	}
	return h.k.Render(c, http.StatusOK, views.AccountsList(h.k.Page(c, "Accounts"), d))
}

// accountsData fills the list part of the accounts page.
func (h *Console) accountsData(c echo.Context, d views.AccountsPage) (views.AccountsPage, error) {
	ctx := c.Request().Context()
	page := pageParam(c)
	rows, total, err := h.Store.Accounts.ListAccounts(ctx, store.AccountFilter{Search: d.Query, Offset: (page - 1) * AccountsPerPage, Limit: AccountsPerPage})
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
	d.Pager = makePager(c, page, total, AccountsPerPage)
	return d, nil
}

// accountRow is what the console shows of a: status, ban (from banned,
// by email key), look-alike marks and its link to the platform.
func (h *Console) accountRow(ctx context.Context, a store.Account, banned map[string]time.Time) (views.AccountRow, error) {
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
func (h *Console) emailBans(ctx context.Context) (map[string]time.Time, error) {
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
func (h *Console) accountPage(c echo.Context) error {
	target, err := h.targetAccount(c)
	if err != nil {
		return err
	}
	return h.accountResult(c, http.StatusOK, target.ID, views.AccountPage{})
}

// accountResult renders an account's page after an action, with a notice
// or an error (status 200, or the error's status).
func (h *Console) accountResult(c echo.Context, status int, id int64, d views.AccountPage) error {
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
	return h.k.Render(c, status, views.AccountDetail(h.k.Page(c, a.Email), d))
}

// lookAlike returns the address of another account that a's can be
// mistaken for (dеmo@ with a Cyrillic е, and demo@), or "". Only an
// address with look-alike letters can pose as another, so the others
// cost no query.
func (h *Console) lookAlike(ctx context.Context, a store.Account) (string, error) {
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
func (h *Console) accountsResult(c echo.Context, status int, d views.AccountsPage) error {
	d.Query = consoleQuery(c, "q")
	full, err := h.accountsData(c, d)
	if err != nil {
		return err
	}
	return h.k.Render(c, status, views.AccountsList(h.k.Page(c, "Accounts"), full))
}

func (h *Console) createAccount(c echo.Context) error {
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
	hash, err := h.Passwords.NewPasswordHash(c.Request().Context(), password)
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

func (h *Console) accountAction(c echo.Context) error {
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
		link := h.k.BaseURL(c) + accounts.SetPasswordPath(token)
		h.k.NoStore(c)
		return h.accountResult(c, http.StatusOK, id, views.AccountPage{InviteLink: link})
	case "end-sessions":
		err, notice = h.Store.Sessions.EndSessions(ctx, id), "Ended every session of "+target.Email+": each device must sign in again."
	case "unlink":
		err, notice = h.Store.Links.DeleteLink(ctx, id, ""), "Unlinked "+target.Email+": the next launch looks the platform user up afresh."
	case "lift-ban":
		_, err = h.Store.Accounts.LiftBans(ctx, target.Email, "")
		notice = "Lifted the sign-in ban on " + target.Email + "; its failed sign-ins are forgotten."
	case "password":
		err = h.Passwords.SetPassword(ctx, target, c.FormValue("password"))
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
		h.k.EndLaunches(id, "")
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

// targetAccount is the account named by the :id of an admin route.
func (h *Console) targetAccount(c echo.Context) (store.Account, error) {
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
func (h *Console) sessionsPage(c echo.Context) error {
	target, err := h.targetAccount(c)
	if err != nil {
		return err
	}
	return h.sessionsResult(c, http.StatusOK, target, views.SessionsPage{})
}

func (h *Console) sessionsResult(c echo.Context, status int, target store.Account, d views.SessionsPage) error {
	list, err := h.Store.Sessions.ListSessions(c.Request().Context(), target.ID)
	if err != nil {
		return err
	}
	own := h.k.SessionID(c)
	d.AccountID, d.Email = target.ID, target.Email
	for _, s := range list {
		d.Rows = append(d.Rows, views.SessionRow{ID: s.ID, ShortID: s.ID[:12], Created: s.CreatedAt.In(h.zone()).Format(timeLayout),
			LastSeen: s.LastSeenAt.In(h.zone()).Format(timeLayout), UserAgent: s.UserAgent, ThisDevice: s.ID == own})
	}
	return h.k.Render(c, status, views.AccountSessions(h.k.Page(c, "Sessions"), d))
}

// endSession ends one device's session of the account.
func (h *Console) endSession(c echo.Context) error {
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
	h.k.EndLaunches(target.ID, sid)
	h.adminAudit(c, "end session "+shortID(sid), target.Email)
	return h.sessionsResult(c, http.StatusOK, target, views.SessionsPage{Notice: "Ended the session " + shortID(sid) + ": that device must sign in again."})
}

// importAccounts creates accounts from CSV (email,firstName,lastName): all
// rows are checked first, and nothing is written unless every row passes.
func (h *Console) importAccounts(c echo.Context) error {
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
