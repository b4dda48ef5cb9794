package platformsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Shapes say how the emulator answers where the platform's specification
// leaves it open, under the keys the bridge's platform.shapes uses, so a
// test can run the whole flow against a platform shaped otherwise. The
// emulator reads them on its own (it shares no code with the client).
// Empty fields take the defaults; "-" (or empty in a file) for
// list_total_pages and token_redirect means none.
type Shapes struct {
	UsersPath      string `yaml:"users_path"`
	QueryParam     string `yaml:"query_param"`
	PageParam      string `yaml:"page_param"`
	SizeParam      string `yaml:"size_param"`
	FirstPage      int    `yaml:"first_page"`
	PageSize       int    `yaml:"page_size"` // the bridge's; the emulator's default page is 20
	MaxPages       int    `yaml:"max_pages"` // the bridge's; not used here
	ListItems      string `yaml:"list_items"`
	ListTotalPages string `yaml:"list_total_pages"`
	UserID         string `yaml:"user_id"`
	UserEmail      string `yaml:"user_email"`
	TokenMethod    string `yaml:"token_method"`
	TokenPath      string `yaml:"token_path"`
	TokenRedirect  string `yaml:"token_redirect"`
	TokenField     string `yaml:"token_field"`
	ExchangeURL    string `yaml:"exchange_url"`
}

const none = "-"

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
	def(&s.ExchangeURL, "{base_url}"+apiPrefix+"/login-token/login/{token}")
}

// LoadShapes reads a shapes file (YAML, the keys of Shapes at its top
// level, or under platform.shapes as in a bridge configuration). Unknown
// keys are refused, and empty list_total_pages and token_redirect mean
// none.
func LoadShapes(path string) (Shapes, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Shapes{}, err
	}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return Shapes{}, fmt.Errorf("%s: %w", path, err)
	}
	if pl, ok := raw["platform"].(map[string]any); ok { // a bridge configuration
		if sh, ok := pl["shapes"].(map[string]any); ok {
			raw = sh
			data, _ = yaml.Marshal(sh)
		}
	}
	var s Shapes
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return Shapes{}, fmt.Errorf("%s: %w", path, err)
	}
	// In a file an empty value is written on purpose: none.
	for key, field := range map[string]*string{"list_total_pages": &s.ListTotalPages, "token_redirect": &s.TokenRedirect} {
		if v, ok := raw[key]; ok && (v == nil || v == "") {
			*field = none
		}
	}
	s.fill()
	if err := s.check(); err != nil {
		return Shapes{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// check refuses shapes the emulator cannot serve.
func (s Shapes) check() error {
	if !strings.HasPrefix(s.UsersPath, "/") || !strings.HasPrefix(s.TokenPath, "/") {
		return errors.New("users_path and token_path must start with /")
	}
	if !slices.Contains(strings.Split(s.TokenPath, "/"), "{userId}") {
		return errors.New("token_path must hold {userId} as a whole path segment")
	}
	if !slices.Contains([]string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch}, s.TokenMethod) {
		return fmt.Errorf("token_method %q: use GET, POST, PUT or PATCH", s.TokenMethod)
	}
	if s.FirstPage != 0 && s.FirstPage != 1 {
		return fmt.Errorf("first_page %d: use 0 or 1", s.FirstPage)
	}
	if _, err := s.exchangePath(); err != nil {
		return err
	}
	return nil
}

// exchangePath is the path part of exchange_url, with {token} as a
// ServeMux wildcard. The host is not the emulator's to check: it serves
// the exchange on whatever name reaches it.
func (s Shapes) exchangePath() (string, error) {
	u := strings.Replace(s.ExchangeURL, "{base_url}", "http://platform.invalid", 1)
	parsed, err := url.Parse(strings.Replace(u, "{token}", "TOKEN", 1))
	if err != nil || parsed.Path == "" || !strings.Contains(parsed.Path, "/TOKEN") {
		return "", fmt.Errorf("exchange_url %q must be a URL whose path holds {token} as a whole segment", s.ExchangeURL)
	}
	return strings.Replace(parsed.Path, "TOKEN", "{token}", 1), nil
}

// setPath puts value at the dotted path of obj, making the objects on
// the way.
func setPath(obj map[string]any, path string, value any) {
	segs := strings.Split(path, ".")
	for _, seg := range segs[:len(segs)-1] {
		next, ok := obj[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[seg] = next
		}
		obj = next
	}
	obj[segs[len(segs)-1]] = value
}

// getPath is the value at the dotted path of v.
func getPath(v any, path string) (any, bool) {
	for _, seg := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return v, true
}

// userJSON is u as the shapes put it: the id (a JSON number) and email
// at their paths, the names and role as the spec spells them.
func (s Shapes) userJSON(u user) map[string]any {
	obj := map[string]any{"firstName": u.FirstName, "lastName": u.LastName, "role": u.Role}
	setPath(obj, s.UserID, json.Number(fmt.Sprint(u.ID)))
	setPath(obj, s.UserEmail, u.Email)
	return obj
}

// listJSON is one page of users as the shapes put it.
func (s Shapes) listJSON(users []map[string]any, page, size, total int) any {
	items := any(users)
	if s.ListItems == "." {
		return items
	}
	out := map[string]any{}
	setPath(out, s.ListItems, items)
	if s.ListTotalPages != none {
		setPath(out, s.ListTotalPages, (total+size-1)/size)
		parent := "totalElements"
		if i := strings.LastIndexByte(s.ListTotalPages, '.'); i >= 0 {
			parent = s.ListTotalPages[:i] + ".totalElements"
		}
		setPath(out, parent, total)
	}
	if s.ListItems == "content" { // the default shape: Spring's page fields too
		out["number"], out["size"] = page, size
	}
	return out
}
