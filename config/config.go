// Package config loads ssobridge's configuration: a YAML file, then
// SSOBRIDGE_* environment overrides, then validation that names the key and
// the fix for every problem.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/internal/loopback"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/mailaddr"
)

// Config is the whole configuration. Every leaf is addressable as a dotted
// key (server.addr) and as an environment variable (SSOBRIDGE_SERVER_ADDR).
type Config struct {
	Server     Server     `yaml:"server"`
	Session    Session    `yaml:"session"`
	Store      Store      `yaml:"store"`
	Platform   Platform   `yaml:"platform"`
	Password   Password   `yaml:"password"`
	Regulation Regulation `yaml:"regulation"`
	Audit      Audit      `yaml:"audit"`
	Log        Log        `yaml:"log"`
	Portal     Portal     `yaml:"portal"`
	OIDC       OIDC       `yaml:"oidc"`
	SAML       SAML       `yaml:"saml"`
	SCIM       SCIM       `yaml:"scim"`
	LTI        LTI        `yaml:"lti"`
	Outbound   Outbound   `yaml:"outbound"`
}

// SCIM is account provisioning by the partner's identity provider (SCIM
// 2.0, under /scim/v2).
type SCIM struct {
	Enabled bool `yaml:"enabled"` // default false
	// TokenFile holds the bearer tokens the IdP may send, one a line (two
	// while one is being rotated).
	TokenFile string `yaml:"token_file"`
	// Token is a single token: set SSOBRIDGE_SCIM_TOKEN (read from
	// TokenFile when that is set).
	Token string `yaml:"token"`
	// AdminGroup names the SCIM group whose members are partner admins;
	// empty: the IdP grants no admin.
	AdminGroup string `yaml:"admin_group"`
	// EmailDomains are the domains whose existing accounts the IdP may
	// take over (adopt); empty: it manages only the accounts it made.
	EmailDomains Words `yaml:"email_domains"`
	// ProvisionPlatformUsers creates a new account's platform user in the
	// background, at the platform's shared pace (default true).
	ProvisionPlatformUsers bool `yaml:"provision_platform_users"`
}

// Tokens are the accepted bearer tokens.
func (s SCIM) Tokens() []string {
	var out []string
	for _, l := range strings.Split(s.Token, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// minSCIMToken is the shortest bearer token accepted: 32 characters (a
// token from "openssl rand -hex 32" has 64).
const minSCIMToken = 32

// Words is a list of words, written as a space-separated string or, in the
// file, as a YAML list.
type Words string

// List is the words.
func (w Words) List() []string { return strings.Fields(string(w)) }

// OIDC is sign-in with the partner's identity provider.
type OIDC struct {
	Issuer               string `yaml:"issuer"`                 // https URL of the IdP (discovery); empty: off
	ClientID             string `yaml:"client_id"`              // the bridge's client at the IdP
	ClientSecret         string `yaml:"client_secret"`          // set SSOBRIDGE_OIDC_CLIENT_SECRET
	ClientSecretFile     string `yaml:"client_secret_file"`     // or read it from this file
	DisplayName          string `yaml:"display_name"`           // "Sign in with <display_name>"
	Scopes               Words  `yaml:"scopes"`                 // default: openid email profile
	GroupsClaim          string `yaml:"groups_claim"`           // default: groups
	AdminGroup           string `yaml:"admin_group"`            // members are admins; empty: the IdP grants no admin
	AllowUnverifiedEmail bool   `yaml:"allow_unverified_email"` // default false
	CreateAccounts       bool   `yaml:"create_accounts"`        // default true
	// EmailDomains: the domains the IdP is trusted for (its addresses
	// reach existing accounts there; others are refused); empty: it
	// reaches only the accounts it made or linked.
	EmailDomains       Words `yaml:"email_domains"`
	LocalLogin         bool  `yaml:"local_login"`          // show the password form (default true)
	LocalLoginFallback bool  `yaml:"local_login_fallback"` // with local_login off: /login?local=1 still shows it (default true)
}

// Enabled reports whether OIDC sign-in is configured.
func (o OIDC) Enabled() bool { return o.Issuer != "" }

// SAML is sign-in with the partner's SAML 2.0 identity provider, the
// bridge as a service provider.
type SAML struct {
	IdPMetadataURL  string `yaml:"idp_metadata_url"`  // https URL of the IdP's metadata; empty (and no file): off
	IdPMetadataFile string `yaml:"idp_metadata_file"` // or a file holding it
	// MetadataRefresh is how often the metadata is read again (a new
	// signing certificate is taken without a restart).
	MetadataRefresh    time.Duration `yaml:"metadata_refresh"`
	EntityID           string        `yaml:"entity_id"`            // default <public_url>/saml/metadata
	DisplayName        string        `yaml:"display_name"`         // "Sign in with <display_name>"
	EmailAttribute     string        `yaml:"email_attribute"`      // default: an emailAddress NameID, else an attribute email (or mail)
	FirstNameAttribute string        `yaml:"first_name_attribute"` // default firstName (also givenName, its OID and claim URI)
	LastNameAttribute  string        `yaml:"last_name_attribute"`  // default lastName (also sn, surname, its OID and claim URI)
	GroupsAttribute    string        `yaml:"groups_attribute"`     // default groups (also memberOf and Entra's groups claim URI)
	AdminGroup         string        `yaml:"admin_group"`          // members are admins; empty: the IdP grants no admin
	// EmailDomains: the domains the IdP is trusted for (its addresses
	// reach existing accounts there; others are refused); empty: it
	// reaches only the accounts it made or linked.
	EmailDomains      Words `yaml:"email_domains"`
	CreateAccounts    bool  `yaml:"create_accounts"`     // default true
	AllowIDPInitiated bool  `yaml:"allow_idp_initiated"` // take unsolicited responses (default false)
	// LocalLogin and LocalLoginFallback: as OIDC's, for a SAML-only
	// deployment (either IdP's false hides the password form).
	LocalLogin         bool   `yaml:"local_login"`
	LocalLoginFallback bool   `yaml:"local_login_fallback"`
	SPCertFile         string `yaml:"sp_cert_file"` // PEM certificate published in the metadata; with sp_key_file, AuthnRequests are signed
	SPKeyFile          string `yaml:"sp_key_file"`  // its PEM private key (RSA or ECDSA)
}

// Enabled reports whether SAML sign-in is configured.
func (s SAML) Enabled() bool { return s.IdPMetadataURL != "" || s.IdPMetadataFile != "" }

// SAMLEntityID is the bridge's entity ID: saml.entity_id, else its
// metadata URL.
func (c *Config) SAMLEntityID(listenAddr string) string {
	if c.SAML.EntityID != "" {
		return c.SAML.EntityID
	}
	return c.PublicURL(listenAddr) + "/saml/metadata"
}

// SAMLACSURL is where the IdP posts its responses: the public URL's
// /saml/acs.
func (c *Config) SAMLACSURL(listenAddr string) string {
	return c.PublicURL(listenAddr) + "/saml/acs"
}

// Portal is the signed JWT handoff from the partner's portal (/sso/jwt).
type Portal struct {
	JWTSecret        string `yaml:"jwt_secret"`          // HS256: the secret's bytes as written, at least 32
	JWTPublicKeyFile string `yaml:"jwt_public_key_file"` // or a PEM public key: RS256, ES256 or EdDSA
	JWTIssuer        string `yaml:"jwt_issuer"`          // required with a key
	JWTAudience      string `yaml:"jwt_audience"`        // default server.public_url
	CreateAccounts   bool   `yaml:"create_accounts"`     // create the account on first use
	// EmailDomains: the domains the portal is trusted for (its addresses
	// reach existing accounts there; others are refused); empty: it
	// reaches only the accounts it made or linked.
	EmailDomains Words `yaml:"email_domains"`
	// URL is the partner's portal: the "back" links of users who came from
	// it lead there (an absolute http(s) URL; empty: none).
	URL string `yaml:"url"`
	// AdminSessions lets a session begun by the handoff open the admin
	// console; off (the default), an admin signs in with a password or
	// the IdP first, since whoever holds the key can sign in as anyone.
	AdminSessions bool `yaml:"admin_sessions"`
}

// Enabled reports whether the JWT handoff is configured.
func (p Portal) Enabled() bool { return p.JWTSecret != "" || p.JWTPublicKeyFile != "" }

// Regulation bans after repeated failed sign-ins.
type Regulation struct {
	MaxRetries      int           `yaml:"max_retries"`        // per account within find_time; 0 = off
	MaxRetriesPerIP int           `yaml:"max_retries_per_ip"` // per client IP within find_time; 0 = off
	FindTime        time.Duration `yaml:"find_time"`          // the counting window
	BanTime         time.Duration `yaml:"ban_time"`           // how long a ban lasts (>= find_time)
}

// Audit is the audit log.
type Audit struct {
	Retention time.Duration `yaml:"retention"` // events older than this are deleted; 0 keeps them
}

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

// Session is the browser session.
type Session struct {
	HashKey  string `yaml:"hash_key"`  // hex, >= 32 bytes; empty: generated and kept in the data directory
	BlockKey string `yaml:"block_key"` // hex, 16/24/32 bytes; empty: generated likewise
	// PreviousHashKey and PreviousBlockKey (both or neither) are the keys
	// before a rotation: cookies sealed with them still open.
	PreviousHashKey  string        `yaml:"previous_hash_key"`
	PreviousBlockKey string        `yaml:"previous_block_key"`
	MaxAge           time.Duration `yaml:"max_age"`      // absolute session lifetime
	IdleTimeout      time.Duration `yaml:"idle_timeout"` // sign out after this long without a request
}

// Store is the account store.
type Store struct {
	Driver string `yaml:"driver"` // sqlite | postgres
	DSN    string `yaml:"dsn"`    // sqlite: a file path; postgres: a URL postgres://user:pass@host:5432/db?sslmode=require
	// CacheTTL keeps accounts and links read by id in memory this long (0:
	// off). Writes through this process are seen at once; writes by other
	// processes on the same database within CacheTTL.
	CacheTTL time.Duration `yaml:"cache_ttl"`
	// Timeout bounds each call to the database, its connection attempt
	// included: past it the request is answered with the
	// "back in a moment" page instead of waiting for a database that is
	// frozen or unreachable.
	Timeout time.Duration `yaml:"timeout"`
}

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

// Password is how local account passwords are hashed (argon2id).
type Password struct {
	Argon2MemoryKiB   uint32 `yaml:"argon2_memory_kib"`
	Argon2Iterations  uint32 `yaml:"argon2_iterations"`
	Argon2Parallelism uint8  `yaml:"argon2_parallelism"`
	HashConcurrency   int    `yaml:"hash_concurrency"` // hashes computed at once; more wait
}

// Log is the logger.
type Log struct {
	Level  string `yaml:"level"`  // debug | info | warn | error
	Format string `yaml:"format"` // text | json
}

// Embedded is the platform.base_url value that starts the built-in emulator.
const Embedded = "embedded"

// EnvPrefix starts every environment override.
const EnvPrefix = "SSOBRIDGE_"

// Defaults returns the configuration used where neither the file nor the
// environment says otherwise.
func Defaults() Config {
	return Config{
		Server:  Server{Addr: "127.0.0.1:8080", TimeZone: "UTC"},
		Session: Session{MaxAge: 12 * time.Hour, IdleTimeout: 2 * time.Hour},
		Store:   Store{Driver: "sqlite", DSN: "data/ssobridge.db", CacheTTL: time.Second, Timeout: 2 * time.Second},
		Platform: Platform{BaseURL: Embedded, Auth: "hmac", SchemeHMAC: "SVC", SchemeSimple: "SVCSIMPLE", Timeout: 10 * time.Second, EmbeddedAddr: "127.0.0.1:0", MaxWait: 2 * time.Minute,
			Shapes: defaultShapes()},
		Password:   Password{Argon2MemoryKiB: 19 * 1024, Argon2Iterations: 2, Argon2Parallelism: 1, HashConcurrency: 2},
		Regulation: Regulation{MaxRetries: 5, MaxRetriesPerIP: 50, FindTime: 5 * time.Minute, BanTime: 15 * time.Minute},
		Audit:      Audit{Retention: 90 * 24 * time.Hour},
		SCIM:       SCIM{ProvisionPlatformUsers: true},
		Log:        Log{Level: "info", Format: "text"},
		Portal:     Portal{CreateAccounts: true},
		OIDC: OIDC{DisplayName: string(locale.Msg("your organisation")), Scopes: "openid email profile", GroupsClaim: "groups", CreateAccounts: true,
			LocalLogin: true, LocalLoginFallback: true},
		SAML:     SAML{DisplayName: string(locale.Msg("your organisation")), CreateAccounts: true, MetadataRefresh: time.Hour, LocalLogin: true, LocalLoginFallback: true},
		LTI:      LTI{RosterMax: 500},
		Outbound: outboundDefaults(),
	}
}

// Error is a configuration problem; it names the key.
type Error struct {
	Key     string
	Problem string
}

func (e *Error) Error() string { return "config: " + e.Key + ": " + e.Problem }

// ErrInvalid is matched by every configuration error.
var ErrInvalid = errors.New("invalid configuration")

// Errors is every problem found, so they can be fixed in one go.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Is makes errors.Is(err, ErrInvalid) true.
func (es Errors) Is(target error) bool { return target == ErrInvalid }

// Parse builds the configuration from YAML (may be empty) and the
// environment (os.Environ form), then validates it.
//
// Every problem comes in one answer: misspelt keys (an error, never a
// silent default), values the YAML or the environment cannot hold, files
// that cannot be read and values that do not fit together, each key
// named once.
func Parse(yamlData []byte, environ []string) (Config, error) {
	cfg := Defaults()
	errs := decodeYAML(&cfg, yamlData)
	if len(errs) == 1 && errs[0].Key == fileKey {
		return Config{}, errs // the file could not be read as settings: what else it says is unknown
	}
	var envErrs Errors
	if errors.As(applyEnv(&cfg, environ), &envErrs) {
		errs = append(errs, envErrs...)
	}
	readFile := func(key, path string, into *string, trim bool) {
		if path == "" {
			return
		}
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, &Error{Key: key, Problem: "cannot read: " + err.Error()})
			return
		}
		*into = string(b)
		if trim {
			*into = strings.TrimSpace(*into)
		}
	}
	readFile("oidc.client_secret_file", cfg.OIDC.ClientSecretFile, &cfg.OIDC.ClientSecret, true)
	readFile("platform.api_secret_file", cfg.Platform.APISecretFile, &cfg.Platform.APISecret, true)
	if cfg.SCIM.TokenFile != "" && cfg.SCIM.Token != "" {
		errs = append(errs, &Error{Key: "scim.token_file", Problem: "set it or " + EnvName("scim.token") + " (scim.token), not both"})
	} else {
		readFile("scim.token_file", cfg.SCIM.TokenFile, &cfg.SCIM.Token, false)
	}
	named := map[string]bool{}
	for _, e := range errs {
		named[e.Key] = true
	}
	for _, e := range cfg.validate() {
		if !named[e.Key] { // a key that could not be read keeps its default: no second line about it
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return Config{}, errs
	}
	return cfg, nil
}

// Load reads path (when not empty) and the environment.
func Load(path string, environ []string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		// Bad input like any other configuration problem (exit 2).
		return Config{}, Errors{{Key: path, Problem: fmt.Sprintf("%v: give a readable file, or leave --config out (./config.yaml, else the built-in demo)", unwrapPath(err))}}
	}
	cfg, err := Parse(data, environ)
	var es Errors
	if errors.As(err, &es) {
		for _, e := range es {
			if e.Key == fileKey {
				e.Key = path // the file's problems name the file
			}
		}
	}
	return cfg, err
}

// unwrapPath drops the path a file error repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// leaf is one settable key.
type leaf struct {
	key string
	v   reflect.Value
}

func leaves(cfg *Config) []leaf {
	var out []leaf
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			name := t.Field(i).Tag.Get("yaml")
			key := name
			if prefix != "" {
				key = prefix + "." + name
			}
			if f := v.Field(i); f.Kind() == reflect.Struct {
				walk(key, f)
			} else {
				out = append(out, leaf{key: key, v: f})
			}
		}
	}
	walk("", reflect.ValueOf(cfg).Elem())
	return out
}

// Keys lists every configuration key, sorted.
func Keys() []string {
	var cfg Config
	var keys []string
	for _, l := range leaves(&cfg) {
		keys = append(keys, l.key)
	}
	sort.Strings(keys)
	return keys
}

// EnvName is the environment variable that overrides key.
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

func applyEnv(cfg *Config, environ []string) error {
	byEnv := map[string]leaf{}
	for _, l := range leaves(cfg) {
		byEnv[EnvName(l.key)] = l
	}
	var errs Errors
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		l, ok := byEnv[name]
		if !ok {
			problem := "no such setting (docs/configuration.md lists them); unset it or fix the spelling"
			names := make([]string, 0, len(byEnv))
			for n := range byEnv {
				names = append(names, n)
			}
			slices.Sort(names)
			if near := Nearest(name, names); near != "" {
				problem = "no such setting; did you mean " + near + "?"
			}
			errs = append(errs, &Error{Key: name, Problem: problem})
			continue
		}
		if l.v.Type() == ltiPlatformsType {
			list, perrs := ltiPlatformsFromEnv(name, value)
			errs = append(errs, perrs...)
			l.v.Set(reflect.ValueOf(list))
			continue
		}
		if err := setFromString(l.v, value); err != nil {
			errs = append(errs, &Error{Key: l.key, Problem: fmt.Sprintf("from %s: %v", name, err)})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

func setFromString(v reflect.Value, s string) error {
	switch v.Interface().(type) {
	case time.Duration:
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 30s or 12h", s)
		}
		v.SetInt(int64(d))
		return nil
	}
	switch v.Kind() {
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		v.SetBool(b)
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", s)
		}
		v.SetInt(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		v.SetFloat(f)
	case reflect.Uint8, reflect.Uint32:
		n, err := strconv.ParseUint(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a whole number in range", s)
		}
		v.SetUint(n)
	default:
		return fmt.Errorf("unsupported kind %s", v.Kind())
	}
	return nil
}

// validate checks every section and lists every problem, sorted by key.
func (c *Config) validate() Errors {
	var errs Errors
	bad := func(key, problem string) { errs = append(errs, &Error{Key: key, Problem: problem}) }
	for _, check := range []func(bad func(key, problem string)){
		c.validateServer,
		c.validateSession,
		c.validateStore,
		c.validatePlatform,
		c.validateShapes,
		c.validatePassword,
		c.validateLogs,
		c.validatePortal,
		c.validateOIDC,
		c.validateSAML,
		c.validateSCIM,
		c.validateLTI,
		c.validateOutbound,
		c.validateEmailDomains,
	} {
		check(bad)
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Key < errs[j].Key })
	return errs
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

// validateSession checks the session: the keys (current and previous) and the lifetimes.
func (c *Config) validateSession(bad func(key, problem string)) {
	for _, k := range []struct {
		hashName, hash, blockName, block, hint string
	}{
		{"session.hash_key", c.Session.HashKey, "session.block_key", c.Session.BlockKey, "leave it empty to have one generated, or use `openssl rand -hex 32`"},
		{"session.previous_hash_key", c.Session.PreviousHashKey, "session.previous_block_key", c.Session.PreviousBlockKey, "the value the key had before the rotation"},
	} {
		if err := checkHexKey(k.hash, 32, 64); err != "" {
			bad(k.hashName, err+"; "+k.hint)
		}
		if err := checkHexKey(k.block, 16, 32); err != "" {
			bad(k.blockName, err+"; "+k.hint)
		} else if n := len(k.block) / 2; n != 0 && n != 16 && n != 24 && n != 32 {
			bad(k.blockName, fmt.Sprintf("is %d bytes; want 16, 24 or 32 (an AES key)", n))
		}
	}
	if (c.Session.PreviousHashKey == "") != (c.Session.PreviousBlockKey == "") {
		bad("session.previous_hash_key", "session.previous_hash_key and session.previous_block_key go together: set both (the keys before the rotation) or neither")
	}
	if c.Session.PreviousHashKey != "" && (c.Session.HashKey == "" || c.Session.BlockKey == "") {
		bad("session.previous_hash_key", "previous keys need the current ones set too: session.hash_key and session.block_key")
	}
	if c.Session.MaxAge < time.Minute || c.Session.MaxAge > 30*24*time.Hour {
		bad("session.max_age", fmt.Sprintf("%s is out of range; use 1m to 720h (e.g. 12h)", c.Session.MaxAge))
	}
	if c.Session.IdleTimeout < time.Minute || c.Session.IdleTimeout > c.Session.MaxAge {
		bad("session.idle_timeout", fmt.Sprintf("%s is out of range; use 1m up to session.max_age (e.g. 2h)", c.Session.IdleTimeout))
	}
}

// validateStore checks the store: the driver, its DSN and cache, the timeout.
func (c *Config) validateStore(bad func(key, problem string)) {
	if c.Store.Timeout < 100*time.Millisecond || c.Store.Timeout > time.Minute {
		bad("store.timeout", fmt.Sprintf("%s is out of range; use 100ms up to 1m (e.g. 2s)", c.Store.Timeout))
	}
	switch c.Store.Driver {
	case "sqlite":
		if strings.TrimSpace(c.Store.DSN) == "" {
			bad("store.dsn", "empty; for sqlite give a file path such as data/ssobridge.db")
		}
		if c.Store.CacheTTL < 0 || c.Store.CacheTTL > time.Minute {
			bad("store.cache_ttl", fmt.Sprintf("%s is out of range; use 0 (off) up to 1m (e.g. 1s)", c.Store.CacheTTL))
		}
	case "postgres":
		// The DSN holds a password: messages never quote it.
		if u, err := url.Parse(c.Store.DSN); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
			bad("store.dsn", "for postgres give a URL such as postgres://user:pass@host:5432/db?sslmode=require (set "+EnvName("store.dsn")+" to keep the password out of the file)")
		}
		// Every instance must see another's change within 1 s.
		if c.Store.CacheTTL < 0 || c.Store.CacheTTL > time.Second {
			bad("store.cache_ttl", fmt.Sprintf("%s is out of range for postgres; use 0 (off) up to 1s, so a change on one instance holds on every other within 1 s", c.Store.CacheTTL))
		}
		// Keys made by one process would void the sessions made on another.
		if c.Session.HashKey == "" || c.Session.BlockKey == "" {
			bad("session.hash_key", "session.hash_key and session.block_key are required with store.driver postgres, the same on every instance; "+
				"generate them with `openssl rand -hex 32` (run it twice) and set "+EnvName("session.hash_key")+" and "+EnvName("session.block_key"))
		}
	default:
		bad("store.driver", fmt.Sprintf("%q is not supported; use sqlite or postgres", c.Store.Driver))
	}
}

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

// validatePassword checks password hashing and sign-in regulation.
func (c *Config) validatePassword(bad func(key, problem string)) {
	pw := c.Password
	if pw.Argon2MemoryKiB < 64 || pw.Argon2MemoryKiB > 1<<20 {
		bad("password.argon2_memory_kib", "use 64 to 1048576 (19456 is the recommended minimum in production)")
	}
	if pw.Argon2Iterations < 1 || pw.Argon2Iterations > 20 {
		bad("password.argon2_iterations", "use 1 to 20")
	}
	if pw.Argon2Parallelism < 1 {
		bad("password.argon2_parallelism", "use 1 or more")
	}
	if pw.HashConcurrency < 1 || pw.HashConcurrency > 256 {
		bad("password.hash_concurrency", "use 1 to 256 (the number of cores is a good value)")
	}
	rg := c.Regulation
	if rg.MaxRetries < 0 || rg.MaxRetriesPerIP < 0 {
		bad("regulation.max_retries", "use 0 (off) or more")
	}
	if rg.FindTime < time.Second || rg.BanTime < time.Second {
		bad("regulation.find_time", fmt.Sprintf("find_time %s and ban_time %s must be at least 1s", rg.FindTime, rg.BanTime))
	} else if rg.FindTime > rg.BanTime {
		bad("regulation.ban_time", fmt.Sprintf("%s is shorter than find_time %s; the window must not outlast the ban", rg.BanTime, rg.FindTime))
	}
}

// validateLogs checks audit retention and logging.
func (c *Config) validateLogs(bad func(key, problem string)) {
	if c.Audit.Retention != 0 && c.Audit.Retention < time.Hour {
		bad("audit.retention", fmt.Sprintf("%s is too short; use 0 (keep) or at least 1h (e.g. 2160h for 90 days)", c.Audit.Retention))
	}
	if _, ok := map[string]bool{"debug": true, "info": true, "warn": true, "error": true}[c.Log.Level]; !ok {
		bad("log.level", fmt.Sprintf("%q: use debug, info, warn or error", c.Log.Level))
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		bad("log.format", fmt.Sprintf("%q: use text or json", c.Log.Format))
	}
}

// validatePortal checks the portal: the handoff's key and issuer, the portal's URL.
func (c *Config) validatePortal(bad func(key, problem string)) {
	if pt := c.Portal; pt.Enabled() {
		switch {
		case pt.JWTSecret != "" && pt.JWTPublicKeyFile != "":
			bad("portal.jwt_secret", "set portal.jwt_secret (HS256) or portal.jwt_public_key_file (RS256, ES256, EdDSA), not both")
		case pt.JWTSecret != "" && len(pt.JWTSecret) < 32:
			bad("portal.jwt_secret", fmt.Sprintf("is %d bytes; at least 32 are required (e.g. `openssl rand -hex 32`), set as %s", len(pt.JWTSecret), EnvName("portal.jwt_secret")))
		case pt.JWTPublicKeyFile != "":
			if _, err := os.Stat(pt.JWTPublicKeyFile); err != nil {
				bad("portal.jwt_public_key_file", "cannot read: "+err.Error())
			}
		}
		if strings.TrimSpace(pt.JWTIssuer) == "" {
			bad("portal.jwt_issuer", "required with a portal key: the iss claim your portal puts in its tokens (e.g. https://portal.partner.example)")
		}
	}
	if u := c.Portal.URL; u != "" {
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			bad("portal.url", fmt.Sprintf("%q must be an absolute http(s) URL, your portal's address (e.g. https://portal.partner.example)", u))
		}
	}
}

// validateOIDC checks OIDC: the identity provider and the bridge's client.
func (c *Config) validateOIDC(bad func(key, problem string)) {
	if o := c.OIDC; o.Enabled() {
		if u, err := url.Parse(o.Issuer); err != nil || !loopback.SecureURL(u) {
			bad("oidc.issuer", fmt.Sprintf("%q must be the IdP's https URL (http only on loopback), e.g. https://login.partner.example", o.Issuer))
		} else if p := c.localURLProblem(o.Issuer); p != "" {
			bad("oidc.issuer", p)
		}
		if o.ClientID == "" {
			bad("oidc.client_id", "empty; the client id the IdP issued for the bridge")
		}
		if o.ClientSecret == "" {
			bad("oidc.client_secret", "empty; set "+EnvName("oidc.client_secret")+" or oidc.client_secret_file")
		}
		if !slices.Contains(o.Scopes.List(), "openid") {
			bad("oidc.scopes", fmt.Sprintf("%q must include openid", string(o.Scopes)))
		}
	}
}

// validateSCIM checks SCIM: its tokens, when it is on.
func (c *Config) validateSCIM(bad func(key, problem string)) {
	sc := c.SCIM
	if !sc.Enabled {
		return
	}
	tokens := sc.Tokens()
	key := "scim.token"
	if sc.TokenFile != "" {
		key = "scim.token_file"
	}
	switch {
	case len(tokens) == 0:
		bad(key, "no token; put one (e.g. from: openssl rand -hex 32) in scim.token_file, or set "+EnvName("scim.token"))
	case len(tokens) > 2:
		bad(key, fmt.Sprintf("%d tokens; give one, or two while one is being rotated", len(tokens)))
	}
	for i, t := range tokens {
		if len(t) < minSCIMToken {
			bad(key, fmt.Sprintf("token %d is %d characters; use a long random one of at least %d (e.g. openssl rand -hex 32)", i+1, len(t), minSCIMToken))
		}
	}
	if len(sc.AdminGroup) > 256 {
		bad("scim.admin_group", "over 256 characters; the group's displayName in the IdP")
	}
}

// validateSAML checks SAML: the IdP's metadata, the bridge's own key pair, the button.
func (c *Config) validateSAML(bad func(key, problem string)) {
	if sm := c.SAML; sm.Enabled() {
		switch {
		case sm.IdPMetadataURL != "" && sm.IdPMetadataFile != "":
			bad("saml.idp_metadata_url", "set saml.idp_metadata_url or saml.idp_metadata_file, not both")
		case sm.IdPMetadataURL != "":
			if u, err := url.Parse(sm.IdPMetadataURL); err != nil || !loopback.SecureURL(u) {
				bad("saml.idp_metadata_url", fmt.Sprintf("%q must be the https URL of the IdP's metadata (http only on loopback), e.g. https://idp.partner.example/metadata", sm.IdPMetadataURL))
			} else if p := c.localURLProblem(sm.IdPMetadataURL); p != "" {
				bad("saml.idp_metadata_url", p)
			}
		default:
			if _, err := os.Stat(sm.IdPMetadataFile); err != nil {
				bad("saml.idp_metadata_file", "cannot read: "+err.Error())
			}
		}
		if sm.MetadataRefresh < time.Minute || sm.MetadataRefresh > 24*time.Hour {
			bad("saml.metadata_refresh", fmt.Sprintf("%s: use 1m to 24h (1h is a good value)", sm.MetadataRefresh))
		}
		if (sm.SPCertFile == "") != (sm.SPKeyFile == "") {
			bad("saml.sp_cert_file", "set both saml.sp_cert_file and saml.sp_key_file, or neither")
		}
		for key, f := range map[string]string{"saml.sp_cert_file": sm.SPCertFile, "saml.sp_key_file": sm.SPKeyFile} {
			if f != "" {
				if _, err := os.Stat(f); err != nil {
					bad(key, "cannot read: "+err.Error())
				}
			}
		}
		if strings.TrimSpace(sm.DisplayName) == "" {
			bad("saml.display_name", "empty; the name on the sign-in button, e.g. \"Springfield Schools\"")
		}
	}
}

// validateEmailDomains checks every way in's email_domains: domains, not
// addresses or URLs.
func (c *Config) validateEmailDomains(bad func(key, problem string)) {
	lists := map[string]Words{"oidc.email_domains": c.OIDC.EmailDomains, "saml.email_domains": c.SAML.EmailDomains,
		"portal.email_domains": c.Portal.EmailDomains, "scim.email_domains": c.SCIM.EmailDomains}
	for i, p := range c.LTI.Platforms {
		lists[fmt.Sprintf("lti.platforms[%d].email_domains", i)] = p.EmailDomains
	}
	for key, words := range lists {
		for _, d := range words.List() {
			if strings.Contains(d, "@") || !mailaddr.Valid("a@"+d) {
				bad(key, fmt.Sprintf("%q is not a domain; list domains such as partner.example", d))
			}
		}
	}
}

func checkHexKey(s string, minBytes, maxBytes int) string {
	if s == "" {
		return ""
	}
	if len(s)%2 != 0 || strings.Trim(strings.ToLower(s), "0123456789abcdef") != "" {
		return "must be hex"
	}
	if n := len(s) / 2; n < minBytes || n > maxBytes {
		return fmt.Sprintf("is %d bytes; want %d to %d", n, minBytes, maxBytes)
	}
	return ""
}

// DataDir is the directory that holds the SQLite store, generated keys and
// the demo login; with postgres (whose keys are configured) it is "data".
func (c *Config) DataDir() string {
	if c.Store.Driver == "postgres" {
		return "data"
	}
	return filepath.Dir(c.Store.DSN)
}

// PortalAudience is the aud a portal token must carry.
func (c *Config) PortalAudience() string {
	if c.Portal.JWTAudience != "" {
		return c.Portal.JWTAudience
	}
	return c.PublicURL(c.Server.Addr)
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
