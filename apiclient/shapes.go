package apiclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Shapes are the parts of the Partner API its specification leaves open:
// where users are listed and created, how pages are asked for, where the
// users, their ids and emails sit in the answers, and how login tokens are
// issued and exchanged. The zero value of a field takes its default; a
// deployment whose platform answers otherwise sets them (platform.shapes).
type Shapes struct {
	UsersPath  string // list and create users, below /api/5; default "/public/users"
	QueryParam string // the lookup filter; default "query"
	PageParam  string // default "page"
	SizeParam  string // default "size"
	FirstPage  int    // index of the first page: 0 or 1; default 0
	PageSize   int    // default 100
	MaxPages   int    // stop walking after this many pages; default 50

	// ListItems is the dotted path of the user array in a list answer;
	// "." when the answer is the array itself. Default "content".
	ListItems string
	// ListTotalPages is the dotted path of the page count in a list
	// answer; NoTotalPages ("-") when there is none, and the walk stops at
	// a short or empty page. Default "totalPages".
	ListTotalPages string
	UserID         string // dotted path of a user's id (number or string, kept as text); default "userId"
	UserEmail      string // dotted path of a user's email; default "email"

	TokenMethod string // default "POST"
	TokenPath   string // below /api/5; "{userId}" is replaced; default "/login-token/{userId}"
	// TokenRedirect is the dotted path in the request body where the
	// landing path goes; NoTokenBody ("-"): the request has no body.
	// Default "properties.redirectTo".
	TokenRedirect string
	TokenField    string // dotted path of the token in the answer; default "loginToken"
	// ExchangeURL is where the browser takes the token; "{base_url}" and
	// "{token}" are replaced. It may name another host. Default
	// "{base_url}/api/5/login-token/login/{token}".
	ExchangeURL string
}

// Words for "none" where an empty value means "the default".
const (
	NoTotalPages = "-" // ListTotalPages: the answer has no page count
	NoTokenBody  = "-" // TokenRedirect: token requests carry no body
)

// DefaultShapes are the shapes the emulator serves and the bridge expects
// unless configured otherwise.
func DefaultShapes() Shapes {
	var s Shapes
	s.fill()
	return s
}

func (s *Shapes) fill() {
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&s.UsersPath, "/public/users")
	def(&s.QueryParam, "query")
	def(&s.PageParam, "page")
	def(&s.SizeParam, "size")
	def(&s.ListItems, "content")
	def(&s.ListTotalPages, "totalPages")
	def(&s.UserID, "userId")
	def(&s.UserEmail, "email")
	def(&s.TokenMethod, http.MethodPost)
	def(&s.TokenPath, "/login-token/{userId}")
	def(&s.TokenRedirect, "properties.redirectTo")
	def(&s.TokenField, "loginToken")
	def(&s.ExchangeURL, "{base_url}"+APIPrefix+"/login-token/login/{token}")
	if s.PageSize <= 0 {
		s.PageSize = 100
	}
	if s.MaxPages <= 0 {
		s.MaxPages = 50
	}
}

// ShapeError is a shape field that cannot work, by the configuration key
// that sets it.
type ShapeError struct {
	Key, Problem string
}

func (e *ShapeError) Error() string { return e.Key + ": " + e.Problem }

// Validate checks the shapes (after defaults) and names the first key
// that cannot work: platform.shapes.<key>.
func (s Shapes) Validate() error {
	s.fill()
	bad := func(key, problem string) error { return &ShapeError{Key: key, Problem: problem} }
	for _, p := range []struct{ key, v string }{{"users_path", s.UsersPath}, {"token_path", s.TokenPath}} {
		if !strings.HasPrefix(p.v, "/") || strings.ContainsAny(p.v, "?# ") {
			return bad(p.key, fmt.Sprintf("%q must be a path below /api/5 starting with /, without a query", p.v))
		}
	}
	if !strings.Contains(s.TokenPath, "{userId}") {
		return bad("token_path", fmt.Sprintf("%q must contain {userId}", s.TokenPath))
	}
	names := []struct{ key, v string }{{"query_param", s.QueryParam}, {"page_param", s.PageParam}, {"size_param", s.SizeParam}}
	for i, p := range names {
		if strings.ContainsAny(p.v, "&=?# ") {
			return bad(p.key, fmt.Sprintf("%q is not a query parameter name", p.v))
		}
		for _, q := range names[:i] {
			if q.v == p.v {
				return bad(p.key, fmt.Sprintf("%q is %s too", p.v, q.key))
			}
		}
	}
	switch {
	case s.FirstPage != 0 && s.FirstPage != 1:
		return bad("first_page", fmt.Sprintf("%d: pages are numbered from 0 or from 1", s.FirstPage))
	case s.PageSize > 1000:
		return bad("page_size", fmt.Sprintf("%d is more than 1000", s.PageSize))
	case s.MaxPages > 10000:
		return bad("max_pages", fmt.Sprintf("%d is more than 10000", s.MaxPages))
	}
	paths := []struct {
		key, v  string
		allowed string // besides a dotted path
	}{
		{"list_items", s.ListItems, "."}, {"list_total_pages", s.ListTotalPages, NoTotalPages},
		{"user_id", s.UserID, ""}, {"user_email", s.UserEmail, ""},
		{"token_redirect", s.TokenRedirect, NoTokenBody}, {"token_field", s.TokenField, ""},
	}
	for _, p := range paths {
		if p.v != p.allowed && !validDotted(p.v) {
			return bad(p.key, fmt.Sprintf("%q is not a dotted path such as data.users", p.v))
		}
	}
	if !slices.Contains([]string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch}, s.TokenMethod) {
		return bad("token_method", fmt.Sprintf("%q: use GET, POST, PUT or PATCH", s.TokenMethod))
	}
	if s.TokenMethod == http.MethodGet && s.TokenRedirect != NoTokenBody {
		return bad("token_redirect", `a GET carries no body: set it to "-" with token_method GET`)
	}
	if strings.Count(s.ExchangeURL, "{token}") != 1 {
		return bad("exchange_url", fmt.Sprintf("%q must contain {token} once", s.ExchangeURL))
	}
	probe := strings.NewReplacer("{base_url}", "https://platform.example", "{token}", "t").Replace(s.ExchangeURL)
	if u, err := url.Parse(probe); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad("exchange_url", fmt.Sprintf("%q must be an absolute http(s) URL, or start with {base_url}", s.ExchangeURL))
	}
	return nil
}

func validDotted(p string) bool {
	if p == "" || strings.ContainsAny(p, " \t") {
		return false
	}
	for _, seg := range strings.Split(p, ".") {
		if seg == "" {
			return false
		}
	}
	return true
}

// decodeAny reads a JSON answer keeping numbers exact (ids beyond 2^53).
func decodeAny(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// errNoPath: the value is not at the path.
var errNoPath = errors.New("not found")

// at returns the value at a dotted path ("." is v itself).
func at(v any, path string) (any, error) {
	if path == "." {
		return v, nil
	}
	for _, seg := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, errNoPath
		}
		if v, ok = m[seg]; !ok {
			return nil, errNoPath
		}
	}
	return v, nil
}

// textAt returns the string or number at path as text.
func textAt(v any, path string) (string, bool) {
	x, err := at(v, path)
	if err != nil {
		return "", false
	}
	switch t := x.(type) {
	case string:
		return t, true
	case json.Number:
		return t.String(), true
	}
	return "", false
}

// setAt returns a JSON object with value at the dotted path.
func setAt(path string, value any) map[string]any {
	segs := strings.Split(path, ".")
	out := map[string]any{}
	m := out
	for _, seg := range segs[:len(segs)-1] {
		next := map[string]any{}
		m[seg] = next
		m = next
	}
	m[segs[len(segs)-1]] = value
	return out
}

// ShapeMismatch is an answer that does not have the configured shape;
// Key names the platform.shapes key to fix. It is an ErrBadResponse.
type ShapeMismatch struct {
	Key, Problem string
}

func (e *ShapeMismatch) Error() string {
	return "the answer does not have the configured shape (platform.shapes." + e.Key + "): " + e.Problem
}

// Is makes a mismatch an ErrBadResponse.
func (e *ShapeMismatch) Is(target error) bool { return target == ErrBadResponse }

// describeObject names the fields an object has (dotted, a few levels
// down), for a message that says what to set a path to.
func describeObject(v any) string {
	var fields []string
	var walk func(prefix string, v any, depth int)
	walk = func(prefix string, v any, depth int) {
		m, ok := v.(map[string]any)
		if !ok || depth > 3 {
			if prefix != "" {
				fields = append(fields, "`"+prefix+"`")
			}
			return
		}
		for _, k := range sortedKeys(m) {
			walk(join(prefix, k), m[k], depth+1)
		}
	}
	walk("", v, 0)
	if len(fields) == 0 {
		return "it has no fields"
	}
	if len(fields) > 12 {
		fields = append(fields[:12], "…")
	}
	return "it has " + strings.Join(fields, ", ")
}

// describeShape names the arrays and objects an answer has, for a
// message that says which key to fix: `data.users` (array), `data`
// (object), `.` when the answer itself is an array.
func describeShape(v any) string {
	var arrays, objects []string
	var walk func(prefix string, v any, depth int)
	walk = func(prefix string, v any, depth int) {
		switch t := v.(type) {
		case []any:
			name := prefix
			if name == "" {
				name = "."
			}
			arrays = append(arrays, "`"+name+"`")
		case map[string]any:
			if depth > 3 {
				return
			}
			if prefix != "" {
				objects = append(objects, "`"+prefix+"`")
			}
			for _, k := range sortedKeys(t) {
				walk(join(prefix, k), t[k], depth+1)
			}
		}
	}
	walk("", v, 0)
	switch {
	case len(arrays) > 0:
		return "the answer has an array at " + strings.Join(arrays, ", ")
	case len(objects) > 0:
		return "the answer has no array; its objects are " + strings.Join(objects, ", ")
	}
	return "the answer has no array"
}

// sortedKeys are m's keys in order, so messages read the same each time.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// join is a dotted path one level down.
func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}
