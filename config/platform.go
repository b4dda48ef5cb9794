package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/apiclient"
)

// Platform is the connection to the platform's Partner API.
type Platform struct {
	BaseURL       string        `yaml:"base_url"` // https://..., or "embedded" for the built-in emulator
	Auth          string        `yaml:"auth"`     // hmac | simple
	APIKey        string        `yaml:"api_key"`
	APISecret     string        `yaml:"api_secret"`
	APISecretFile string        `yaml:"api_secret_file"` // read the secret from this file instead
	SchemeHMAC    string        `yaml:"scheme_hmac"`
	SchemeSimple  string        `yaml:"scheme_simple"`
	Timeout       time.Duration `yaml:"timeout"`       // one platform call
	EmbeddedAddr  string        `yaml:"embedded_addr"` // where the embedded emulator listens
	// RateLimit is the platform's limit for the credential in requests a
	// second, kept by all instances together (0: each instance learns a
	// rate from the 429s);
	// RateBurst how many calls may go at once (0: RateLimit rounded up).
	RateLimit float64 `yaml:"rate_limit"`
	RateBurst int     `yaml:"rate_burst"`
	// MaxWait bounds a user's wait in line for the platform's pace;
	// past it the user is told the platform is too busy.
	MaxWait time.Duration `yaml:"max_wait"`
	Shapes  Shapes        `yaml:"shapes"` // what the spec leaves open (docs/platform-shapes.md)
}

// Shapes are the platform's open shapes (apiclient.Shapes); each key is
// checked at start. list_total_pages and token_redirect may be empty:
// the answer has no page count, the token request has no body.
type Shapes struct {
	UsersPath      string `yaml:"users_path"`
	QueryParam     string `yaml:"query_param"`
	PageParam      string `yaml:"page_param"`
	SizeParam      string `yaml:"size_param"`
	FirstPage      int    `yaml:"first_page"`
	PageSize       int    `yaml:"page_size"`
	MaxPages       int    `yaml:"max_pages"`
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

// Client returns the shapes as the Partner API client takes them.
func (s Shapes) Client() apiclient.Shapes {
	none := func(v, word string) string {
		if v == "" {
			return word
		}
		return v
	}
	s.ListTotalPages, s.TokenRedirect = none(s.ListTotalPages, apiclient.NoTotalPages), none(s.TokenRedirect, apiclient.NoTokenBody)
	return apiclient.Shapes(s) // the same fields in the same order: the compiler keeps them so
}

// defaultShapes are apiclient's defaults, in the configuration's form.
func defaultShapes() Shapes { return Shapes(apiclient.DefaultShapes()) }

// Embedded is the platform.base_url value that starts the built-in emulator.
const Embedded = "embedded"

// validatePlatform checks the platform: where it is, how the bridge signs, its pace.
func (c *Config) validatePlatform(bad func(key, problem string)) {
	p := c.Platform
	if p.BaseURL != Embedded {
		u, err := url.Parse(p.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("platform.base_url", fmt.Sprintf("%q must be the platform's https URL (without /api/5) or %q for the built-in emulator", p.BaseURL, Embedded))
		} else if u.RawQuery != "" || u.Fragment != "" {
			bad("platform.base_url", "must not carry a query or fragment")
		}
		if p.APISecret == "" {
			bad("platform.api_secret", "empty; set "+EnvName("platform.api_secret")+" or platform.api_secret_file (the secret, not the key)")
		}
		if p.Auth == "hmac" && p.APIKey == "" {
			bad("platform.api_key", "empty; the HMAC method needs the API key the platform issued")
		}
	} else if _, _, err := net.SplitHostPort(p.EmbeddedAddr); err != nil {
		bad("platform.embedded_addr", fmt.Sprintf("%q is not host:port; use 127.0.0.1:0 for any free port", p.EmbeddedAddr))
	}
	if p.Auth != "hmac" && p.Auth != "simple" {
		bad("platform.auth", fmt.Sprintf("%q: use hmac or simple", p.Auth))
	}
	for key, s := range map[string]string{"platform.scheme_hmac": p.SchemeHMAC, "platform.scheme_simple": p.SchemeSimple} {
		if s == "" || strings.ContainsAny(s, " \t\r\n:") {
			bad(key, fmt.Sprintf("%q must be one word, as the platform spells its scheme", s))
		}
	}
	if p.Timeout < 100*time.Millisecond || p.Timeout > 2*time.Minute {
		bad("platform.timeout", fmt.Sprintf("%s is out of range; use 100ms to 2m (e.g. 10s)", p.Timeout))
	}
	if p.RateLimit < 0 || p.RateLimit > 100000 || p.RateLimit != p.RateLimit {
		bad("platform.rate_limit", fmt.Sprintf("%v is out of range; use the platform's limit in requests a second (e.g. 20), or 0 for no pacing", p.RateLimit))
	}
	if p.MaxWait < 10*time.Second || p.MaxWait > 30*time.Minute {
		bad("platform.max_wait", fmt.Sprintf("%s is out of range; use 10s to 30m (e.g. 2m)", p.MaxWait))
	}
	if p.RateBurst < 0 || p.RateBurst > 100000 {
		bad("platform.rate_burst", fmt.Sprintf("%d is out of range; use 0 (the rate rounded up) up to 100000", p.RateBurst))
	}
}

// validateShapes checks the platform shapes: every key set, and a shape the client can use.
func (c *Config) validateShapes(bad func(key, problem string)) {
	p := c.Platform
	sh, def := p.Shapes, defaultShapes()
	for _, k := range []struct{ key, v, def string }{
		{"users_path", sh.UsersPath, def.UsersPath}, {"query_param", sh.QueryParam, def.QueryParam}, {"page_param", sh.PageParam, def.PageParam},
		{"size_param", sh.SizeParam, def.SizeParam}, {"list_items", sh.ListItems, def.ListItems}, {"user_id", sh.UserID, def.UserID},
		{"user_email", sh.UserEmail, def.UserEmail}, {"token_method", sh.TokenMethod, def.TokenMethod}, {"token_path", sh.TokenPath, def.TokenPath},
		{"token_field", sh.TokenField, def.TokenField}, {"exchange_url", sh.ExchangeURL, def.ExchangeURL},
	} {
		if k.v == "" {
			bad("platform.shapes."+k.key, fmt.Sprintf("is empty; leave it out for the default %q", k.def))
		}
	}
	switch {
	case sh.PageSize < 1:
		bad("platform.shapes.page_size", fmt.Sprintf("%d: use 1 to 1000", sh.PageSize))
	case sh.MaxPages < 1:
		bad("platform.shapes.max_pages", fmt.Sprintf("%d: use 1 to 10000", sh.MaxPages))
	default:
		var se *apiclient.ShapeError
		if err := sh.Client().Validate(); errors.As(err, &se) {
			bad("platform.shapes."+se.Key, se.Problem)
		}
	}
}
