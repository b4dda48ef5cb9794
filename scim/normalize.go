package scim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
)

// The forms identity providers send that RFC 7644 does not, rewritten to
// the RFC's before the library reads them.

// normalizeBody turns Entra ID's string booleans ("True", "False") for
// active into booleans: at the top of a user (POST, PUT) and in PATCH
// operations, with a path ("active") or without (a value object holding
// active). Anything else, and a body that is not a JSON object, is left
// as it came (the library then answers invalidSyntax or invalidValue).
func normalizeBody(body []byte) []byte {
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return body
	}
	changed := fixActive(doc)
	for k, v := range doc {
		if !strings.EqualFold(k, "Operations") {
			continue
		}
		ops, _ := v.([]any)
		for _, op := range ops {
			m, ok := op.(map[string]any)
			if !ok {
				continue
			}
			if p, _ := lookup(m, "path").(string); strings.EqualFold(strings.TrimSpace(p), "active") {
				changed = fixBool(m, "value") || changed
			}
			if val, ok := lookup(m, "value").(map[string]any); ok {
				changed = fixActive(val) || changed
			}
		}
	}
	if !changed {
		return body
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return out
}

// fixActive turns m's active from a string boolean into a boolean.
func fixActive(m map[string]any) bool {
	for k := range m {
		if strings.EqualFold(k, "active") {
			return fixBool(m, k)
		}
	}
	return false
}

// fixBool turns m[key] from "true"/"false" (any case) into a boolean.
func fixBool(m map[string]any, key string) bool {
	for k, v := range m {
		if !strings.EqualFold(k, key) {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return false
		}
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true":
			m[k] = true
		case "false":
			m[k] = false
		default:
			return false
		}
		return true
	}
	return false
}

// lookup is m[key] with key matched case-insensitively.
func lookup(m map[string]any, key string) any {
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
}

// emailValueFilter is `emails[type eq "work"].value eq "…"`, which the
// issue's identity providers send and the RFC's grammar has not (a value
// path is not followed by a sub-attribute in a filter).
var emailValueFilter = regexp.MustCompile(`(?i)^\s*emails\[\s*type\s+eq\s+"([^"]*)"\s*\]\.value\s+eq\s+("(?:[^"\\]|\\.)*")\s*$`)

// normalizeFilter rewrites that filter to the RFC's
// `emails[type eq "work" and value eq "…"]`.
func normalizeFilter(r *http.Request) {
	q := r.URL.Query()
	f := q.Get("filter")
	m := emailValueFilter.FindStringSubmatch(f)
	if m == nil {
		return
	}
	q.Set("filter", `emails[type eq "`+m[1]+`" and value eq `+m[2]+`]`)
	r.URL.RawQuery = q.Encode()
}
