// Package loopback tells a loopback host: the one place where the bridge
// accepts plain http for a party it talks to (a platform, identity
// provider or LMS on the same machine, in development and tests).
package loopback

import "net"

// Host reports whether host (a URL's Hostname, without brackets or port)
// is "localhost" or a loopback address.
func Host(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
