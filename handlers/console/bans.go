package console

import (
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// bansPage is GET /admin/bans: every ban in force on every instance
// sharing the store (an address's, a client IP's, a SCIM client's), with
// why and until when, each with a button that lifts it.
func (h *Console) bansPage(c echo.Context) error {
	return h.bansResult(c, http.StatusOK, "", "")
}

// bansResult renders the bans page with a notice or an error.
func (h *Console) bansResult(c echo.Context, status int, notice, errMsg string) error {
	now := h.Now()
	bans, err := h.Store.Accounts.ListBans(c.Request().Context(), now)
	if err != nil {
		return err
	}
	d := views.BansPage{Notice: notice, Error: errMsg}
	for _, b := range bans {
		d.Rows = append(d.Rows, banRow(b, now, h.zone()))
	}
	return h.k.Render(c, status, views.Bans(h.k.Page(c, "Sign-in bans"), d))
}

// banRow says what a ban is about and why it was made.
func banRow(b store.Ban, now time.Time, zone *time.Location) views.BanRow {
	r := views.BanRow{Kind: b.Kind, Value: b.Value, Until: b.Until.In(zone).Format("2006-01-02 15:04:05 MST"), Left: b.Until.Sub(now).Round(time.Second).String()}
	switch ip, scim := b.SCIMClient(); {
	case b.Kind == store.BanIP:
		r.What, r.Shown = "Client IP", b.Value
		r.Why = "Too many failed sign-ins or wrong SCIM tokens from this IP: nobody signs in from it, and its SCIM requests are refused."
	case scim:
		r.What, r.Shown = "SCIM client", ip
		r.Why = "Wrong SCIM bearer tokens from this IP: the identity provider's requests from it are refused, even with the right token."
	default:
		r.What, r.Shown = "Account address", b.Value
		r.Why = "Too many failed password sign-ins to this address: it cannot sign in with its password, from anywhere."
	}
	return r
}

// liftBan is POST /admin/bans/lift (kind, value): it ends that ban and
// forgets the failures counted for it. Bad input changes nothing.
func (h *Console) liftBan(c echo.Context) error {
	kind, value := c.FormValue("kind"), strings.TrimSpace(c.FormValue("value"))
	email, ip := "", ""
	switch {
	case kind == store.BanEmail && value != "" && len(value) <= 320:
		email = value
	case kind == store.BanIP && net.ParseIP(value) != nil:
		ip = value
	default:
		return h.bansResult(c, http.StatusBadRequest, "", "Nothing was lifted: the form named no ban (kind email or ip, and its address or IP).")
	}
	n, err := h.Store.Accounts.LiftBans(c.Request().Context(), email, ip)
	if err != nil {
		return err
	}
	row := banRow(store.Ban{Kind: kind, Value: value}, h.Now(), h.zone())
	h.adminAudit(c, "lift ban ("+strings.ToLower(row.What)+")", row.Shown)
	if n == 0 {
		return h.bansResult(c, http.StatusOK, "No ban was in force on "+row.Shown+" (it may have ended); its counted failures are cleared.", "")
	}
	return h.bansResult(c, http.StatusOK, "Lifted the ban on "+strings.ToLower(row.What)+" "+row.Shown+"; its counted failures are cleared.", "")
}
