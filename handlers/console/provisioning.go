package console

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/ssobridge/ssobridge/launch/provision"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// provisioningPage shows the accounts provisioned and the background job;
// it reloads itself while the job runs (on whichever instance runs it).
func (h *Console) provisioningPage(c echo.Context) error {
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
	p := h.k.Page(c, "Provisioning")
	if d.Running {
		// Reloads every 2 s while the job runs, unless the admin stopped
		// the reloads (WCAG 2.2.1).
		d.Still = c.QueryParam("still") != ""
		if !d.Still {
			p.Refresh = "2"
		}
		h.k.NoStore(c)
	}
	return h.k.Render(c, http.StatusOK, views.ProvisioningView(p, d))
}

// provisioningStart starts the background job (one at a time across the
// instances).
func (h *Console) provisioningStart(c echo.Context) error {
	if h.Provisioning == nil {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	actor := h.k.Actor(c)
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
