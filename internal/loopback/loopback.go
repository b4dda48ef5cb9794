// Package loopback tells a loopback host: the one place where the bridge
// accepts plain http for a party it talks to (a platform, identity
// provider or LMS on the same machine, in development and tests).
package loopback

import (
	"net"
	"net/url"
)

// Host reports whether host (a URL's Hostname, without brackets or port)
// is "localhost" or a loopback address.
func Host(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// SecureURL reports whether u is one the bridge may trust a party at:
// https, or plain http to a loopback host (a party on the same machine, in
// development and tests). The one rule every configured party's URL and
// every origin a page trusts follows.
func SecureURL(u *url.URL) bool {
	return u.Host != "" && (u.Scheme == "https" || u.Scheme == "http" && Host(u.Hostname()))
}
