package console

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

func (h *Console) auditPage(c echo.Context) error {
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
			return h.k.Render(c, http.StatusOK, views.AuditLog(h.k.Page(c, "Audit log"), d))
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
	return h.k.Render(c, http.StatusOK, views.AuditLog(h.k.Page(c, "Audit log"), d))
}
