package handlers

import (
	"net/http"
	"net/textproto"
	"strings"
)

// cookieValue is the value of the request's first cookie called name,
// read from the Cookie header in place. http.Request.Cookie parses every
// cookie of the header into a new http.Cookie on each call, and a launch
// looks up two (the session and the anti-forgery secret). Values are not
// checked here: both are sealed, and what is not ours does not open.
func cookieValue(r *http.Request, name string) (string, bool) {
	for _, line := range r.Header["Cookie"] {
		for line != "" {
			var part string
			part, line, _ = strings.Cut(line, ";")
			k, v, _ := strings.Cut(textproto.TrimString(part), "=") // no "=": an empty value, as net/http reads it
			if textproto.TrimString(k) != name {
				continue
			}
			if len(v) > 1 && v[0] == '"' && v[len(v)-1] == '"' {
				v = v[1 : len(v)-1]
			}
			return v, true
		}
	}
	return "", false
}
