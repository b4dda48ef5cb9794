package lti

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
)

// ConsolePath is the console's LTI page.
const ConsolePath = "/admin/lti"

// consolePage is GET /admin/lti.
func (w *Way) consolePage(c echo.Context) error {
	return w.renderConsole(c, http.StatusOK, consoleData{CreateAccounts: true})
}

func (w *Way) renderConsole(c echo.Context, status int, d consoleData) error {
	list, err := w.Registry.Platforms(c.Request().Context())
	if err != nil {
		return err
	}
	for _, p := range list {
		d.Registered = append(d.Registered, consolePlatform{Name: store.Cut(p.Name, store.MaxName), Issuer: p.Issuer, ClientID: p.ClientID, Deployment: p.DeploymentID,
			RegisteredAt: p.RegisteredAt.In(w.zone()).Format(timeLayout), RegisteredBy: p.RegisteredBy, Disabled: p.Disabled})
	}
	for _, p := range w.LMS.Platforms() {
		if !p.Registered {
			d.Configured = append(d.Configured, consolePlatform{Name: p.Name, Issuer: p.Issuer, ClientID: p.ClientID})
		}
	}
	if w.Roster != nil {
		courses, err := w.Roster.Courses.Courses(c.Request().Context(), consoleCourses)
		if err != nil {
			return err
		}
		for _, cr := range courses {
			row := consoleCourse{Title: cr.Title, LMS: w.platformName(cr.Issuer), Issuer: cr.Issuer, ClientID: cr.ClientID, ContextID: cr.ContextID,
				LastLaunch: cr.LastLaunchAt.In(w.zone()).Format(timeLayout), LaunchedBy: cr.LaunchedBy, LastRoster: cr.LastRoster, Waiting: cr.RosterWaiting}
			if p, err := findPlatform(w.LMS.Platforms(), cr.Issuer, cr.ClientID); err == nil {
				row.Cap = w.Roster.cap(p)
			}
			if !cr.LastRosterAt.IsZero() {
				row.LastRosterAt = cr.LastRosterAt.In(w.zone()).Format(timeLayout)
			}
			d.Courses = append(d.Courses, row)
		}
	}
	return w.k.Render(c, status, "LTI", func(p views.Page) templ.Component { return consolePage(p, d) })
}

// consoleRegistrationURL is POST /admin/lti/registration-url: a new
// registration URL, shown once, with the rules the form gives.
func (w *Way) consoleRegistrationURL(c echo.Context) error {
	domains := strings.Fields(c.FormValue("email_domains"))
	create := c.FormValue("create_accounts") != ""
	d := consoleData{EmailDomains: strings.Join(domains, " "), CreateAccounts: create}
	for _, dom := range domains {
		if !mailaddr.Valid("someone@" + dom) {
			d.Error = "“" + dom + "” is not an email domain; list domains such as school.example, separated by spaces."
			return w.renderConsole(c, http.StatusBadRequest, d)
		}
	}
	acct, _ := w.k.SignedIn(c)
	u, until, err := w.RegistrationURL(c, acct.Email, d.EmailDomains, create)
	if err != nil {
		return err
	}
	d.URL, d.URLExpires = u, until.In(w.zone()).Format(timeLayout)
	w.k.Audit(c, "LTI: made a registration URL (valid until "+until.UTC().Format(time.RFC3339)+")")
	return w.renderConsole(c, http.StatusOK, d)
}

// timeLayout is how the console shows a time (in w.Zone, with its
// abbreviation).
const timeLayout = "2006-01-02 15:04 MST"

// zone is the time zone the console's times are in.
func (w *Way) zone() *time.Location {
	if w.Zone == nil {
		return time.UTC
	}
	return w.Zone
}

// consoleCourses bounds the courses the console lists.
const consoleCourses = 100

// consoleProvisionCourse is POST /admin/lti/courses/provision: the
// course's roster read and provisioned now, in the background.
func (w *Way) consoleProvisionCourse(c echo.Context) error {
	ctx := c.Request().Context()
	issuer, client, course := c.FormValue("issuer"), c.FormValue("client_id"), c.FormValue("context_id")
	courses, err := w.Roster.Courses.Courses(ctx, consoleCourses)
	if err != nil {
		return err
	}
	for _, cr := range courses {
		if cr.Issuer != issuer || cr.ClientID != client || cr.ContextID != course {
			continue
		}
		p, err := findPlatform(w.LMS.Platforms(), issuer, client)
		if err != nil || p.TokenURL == "" {
			return w.renderConsole(c, http.StatusConflict, consoleData{CreateAccounts: true,
				Error: "The LMS of " + cr.Title + " is not registered now, or has no token_url: its roster cannot be read."})
		}
		confirmed := 0
		if raw := c.FormValue("confirm"); raw != "" {
			// The admin confirms the number the course's row showed: a
			// roster that has changed since asks again.
			n, err := strconv.Atoi(raw)
			switch {
			case err != nil || n <= 0:
				return w.renderConsole(c, http.StatusBadRequest, consoleData{CreateAccounts: true, Error: "The number of people to confirm is not a number."})
			case n != cr.RosterWaiting:
				return w.renderConsole(c, http.StatusConflict, consoleData{CreateAccounts: true,
					Error: "The roster of " + cr.Title + " was read again since: confirm the number its row shows now."})
			}
			confirmed = n
		}
		acct, _ := w.k.SignedIn(c)
		id := Identity{Platform: p, Email: acct.Email, ContextID: cr.ContextID, ContextTitle: cr.Title, MembershipsURL: cr.MembershipsURL}
		w.Roster.StartNow(id, w.arrival(id).Source, confirmed)
		if confirmed > 0 {
			w.k.Audit(c, fmt.Sprintf("LTI: confirmed provisioning %d people of the class of %s (%s), above the cap of %d", confirmed, cr.Title, p.Name, w.Roster.cap(p)))
		} else {
			w.k.Audit(c, "LTI: provision the class of "+cr.Title+" ("+p.Name+")")
		}
		return w.renderConsole(c, http.StatusOK, consoleData{CreateAccounts: true,
			Notice: "Reading the roster of " + cr.Title + ": the Provisioning page shows the job, and this page the result."})
	}
	return w.renderConsole(c, http.StatusNotFound, consoleData{CreateAccounts: true, Error: "No such course."})
}

// consolePlatform is POST /admin/lti/platforms/{disable,enable,remove}.
func (w *Way) consolePlatform(c echo.Context) error {
	ctx := c.Request().Context()
	issuer, client := c.FormValue("issuer"), c.FormValue("client_id")
	var err error
	var done string
	switch c.Param("action") {
	case "disable":
		err, done = w.Registry.SetPlatformDisabled(ctx, issuer, client, true), "Disabled"
	case "enable":
		err, done = w.Registry.SetPlatformDisabled(ctx, issuer, client, false), "Enabled"
	case "remove":
		err, done = w.Registry.DeletePlatform(ctx, issuer, client), "Removed"
	default:
		return w.renderConsole(c, http.StatusNotFound, consoleData{CreateAccounts: true, Error: "No such action."})
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return w.renderConsole(c, http.StatusNotFound, consoleData{CreateAccounts: true, Error: "No registered LMS has this issuer and client id (removed meanwhile?)."})
	case err != nil:
		return err
	}
	w.k.Audit(c, "LTI: "+strings.ToLower(done)+" the registered LMS "+issuer+" (client id "+client+")")
	return w.renderConsole(c, http.StatusOK, consoleData{CreateAccounts: true, Notice: done + " the LMS " + issuer + " (client id " + client + ")."})
}
