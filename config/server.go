package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/internal/loopback"
	"github.com/ssobridge/ssobridge/locale"
)

// Server is the HTTP listener.
type Server struct {
	Addr      string `yaml:"addr"`       // listen address, host:port
	PublicURL string `yaml:"public_url"` // how browsers reach the bridge; https makes cookies Secure
	// TrustProxyHeaders takes the client IP from X-Forwarded-For (only
	// behind a proxy that sets it); otherwise from the connection.
	TrustProxyHeaders bool `yaml:"trust_proxy_headers"`
	// MetricsAddr serves /metrics on a listener of its own, so it need not
	// be public; empty: /metrics is on Addr.
	MetricsAddr string `yaml:"metrics_addr"`
	// Pprof serves Go's profiler under /debug/pprof/ next to /metrics on
	// MetricsAddr (never on Addr: profiles show what the process does).
	Pprof bool `yaml:"pprof"`
	// Languages are the languages the pages people see are offered in
	// (BCP 47 tags, in the switch's order; the first is for a browser that
	// asks for none of them). Empty: every language the bridge has.
	Languages Words `yaml:"languages"`
	// ContactName is whom pages tell a person to ask for help ("the
	// school's IT desk"), shown as written; empty: "your IT help desk" in
	// the person's language. ContactURL, optional, is where to reach them.
	ContactName string `yaml:"contact_name"`
	ContactURL  string `yaml:"contact_url"`
	// TimeZone is the IANA time zone every time a page shows is in
	// (Europe/Berlin, America/Chicago), with its abbreviation.
	TimeZone string `yaml:"time_zone"`
}

// Zone is server.time_zone's location (UTC when it cannot be loaded,
// which validation refuses).
func (c Config) Zone() *time.Location {
	if loc, err := time.LoadLocation(c.Server.TimeZone); err == nil {
		return loc
	}
	return time.UTC
}

// validateServer checks the server: addresses, the profiler, the public URL.
func (c *Config) validateServer(bad func(key, problem string)) {
	if _, port, err := net.SplitHostPort(c.Server.Addr); err != nil || port == "" {
		bad("server.addr", fmt.Sprintf("%q is not host:port; use e.g. 127.0.0.1:8080 or :8080", c.Server.Addr))
	}
	if m := c.Server.MetricsAddr; m != "" {
		if _, port, err := net.SplitHostPort(m); err != nil || port == "" {
			bad("server.metrics_addr", fmt.Sprintf("%q is not host:port; use e.g. 127.0.0.1:9100, or leave it empty to serve /metrics on server.addr", m))
		} else if m == c.Server.Addr && port != "0" { // port 0: any free port, for each listener
			bad("server.metrics_addr", "is server.addr; give another port, or leave it empty to serve /metrics on server.addr")
		}
	}
	if c.Server.Pprof && c.Server.MetricsAddr == "" {
		bad("server.pprof", "needs server.metrics_addr (e.g. 127.0.0.1:9100): the profiler is served only there, never on server.addr")
	}
	if err := locale.Check(c.Server.Languages.List()); err != nil {
		bad("server.languages", err.Error())
	}
	if len(c.Server.ContactName) > 100 || strings.ContainsAny(c.Server.ContactName, "\r\n\t<>") {
		bad("server.contact_name", "at most 100 characters of plain text, e.g. \"the school's IT desk\"")
	}
	if u := c.Server.ContactURL; u != "" {
		if p, err := url.Parse(u); err != nil || p.Host == "" && p.Scheme != "mailto" || (p.Scheme != "https" && p.Scheme != "http" && p.Scheme != "mailto") {
			bad("server.contact_url", fmt.Sprintf("%q must be an absolute https:, http: or mailto: URL, e.g. https://help.school.example or mailto:it@school.example", u))
		}
	}
	if _, err := time.LoadLocation(c.Server.TimeZone); err != nil || c.Server.TimeZone == "" || c.Server.TimeZone == "Local" {
		bad("server.time_zone", fmt.Sprintf("%q is not an IANA time zone; use a name such as Europe/Berlin, America/Chicago or UTC", c.Server.TimeZone))
	}
	if c.Server.PublicURL != "" {
		if u, err := url.Parse(c.Server.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("server.public_url", fmt.Sprintf("%q must be an absolute http(s) URL such as https://sso.partner.example", c.Server.PublicURL))
		}
	}
}

// PublicURL is how browsers reach the bridge: server.public_url, else
// http:// and the address it listens on (listenAddr; an address on every
// interface reads as localhost).
func (c *Config) PublicURL(listenAddr string) string {
	if c.Server.PublicURL != "" {
		return strings.TrimRight(c.Server.PublicURL, "/")
	}
	host, port, _ := net.SplitHostPort(listenAddr)
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// PublicURLSource says where PublicURL(c.Server.Addr) comes from, for a
// command that prints a link: server.public_url, or server.addr (with how
// to make the two agree when the bridge is reached elsewhere).
func (c *Config) PublicURLSource() string {
	if c.Server.PublicURL != "" {
		return "base URL " + c.PublicURL(c.Server.Addr) + " from server.public_url"
	}
	return "base URL " + c.PublicURL(c.Server.Addr) + " from server.addr (" + c.Server.Addr + "); if the bridge is reached at another address, set server.public_url, or export " +
		EnvName("server.addr") + " as the running bridge has it, so that this command agrees"
}

// Secure reports whether cookies must be Secure (public URL is https).
func (c *Config) Secure() bool { return strings.HasPrefix(c.Server.PublicURL, "https://") }

// Reach tells how the parties that call the bridge (an LMS's browsers, an
// IdP's SCIM client) reach it: over https (reach), or only from this
// machine over plain http on loopback (reach and local, a trial); plain
// http elsewhere reaches nothing safely.
func (c Config) Reach() (reach, local bool) {
	u, err := url.Parse(c.PublicURL(c.Server.Addr))
	if err != nil {
		return false, false
	}
	if u.Scheme == "https" {
		return true, false
	}
	listen, _, _ := net.SplitHostPort(c.Server.Addr)
	if loopback.Host(u.Hostname()) && (c.Server.PublicURL != "" || loopback.Host(listen)) {
		return true, true
	}
	return false, false
}
