// Package config loads ssobridge's configuration: a YAML file, then
// SSOBRIDGE_* environment overrides, then validation that names the key and
// the fix for every problem.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
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
	Outbound   Outbound   `yaml:"outbound"`

	// modules are the modules' sections (Section), by key.
	modules map[string]moduleSection
}

// Words is a list of words, written as a space-separated string or, in the
// file, as a YAML list.
type Words string

// List is the words.
func (w Words) List() []string { return strings.Fields(string(w)) }

// EnvPrefix starts every environment override.
const EnvPrefix = "SSOBRIDGE_"

// Defaults returns the configuration used where neither the file nor the
// environment says otherwise, with the modules' sections given.
func Defaults(sections ...Sectioner) Config {
	c := Config{
		Server:  Server{Addr: "127.0.0.1:8080", TimeZone: "UTC"},
		Session: Session{MaxAge: 12 * time.Hour, IdleTimeout: 2 * time.Hour},
		Store:   Store{Driver: "sqlite", DSN: "data/ssobridge.db", CacheTTL: time.Second, Timeout: 2 * time.Second},
		Platform: Platform{BaseURL: Embedded, Auth: "hmac", SchemeHMAC: "SVC", SchemeSimple: "SVCSIMPLE", Timeout: 10 * time.Second, EmbeddedAddr: "127.0.0.1:0", MaxWait: 2 * time.Minute,
			Shapes: defaultShapes()},
		Password:   Password{Argon2MemoryKiB: 19 * 1024, Argon2Iterations: 2, Argon2Parallelism: 1, HashConcurrency: 2},
		Regulation: Regulation{MaxRetries: 5, MaxRetriesPerIP: 50, FindTime: 5 * time.Minute, BanTime: 15 * time.Minute},
		Audit:      Audit{Retention: 90 * 24 * time.Hour},
		Log:        Log{Level: "info", Format: "text"},
		Outbound:   outboundDefaults(),
	}
	c.withSections(sections)
	return c
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
// environment (os.Environ form), then validates it; sections are the
// modules' sections it reads besides the bridge's own.
//
// Every problem comes in one answer: misspelt keys (an error, never a
// silent default), values the YAML or the environment cannot hold, files
// that cannot be read and values that do not fit together, each key
// named once.
func Parse(yamlData []byte, environ []string, sections ...Sectioner) (Config, error) {
	cfg := Defaults(sections...)
	errs := decodeYAML(&cfg, yamlData)
	if len(errs) == 1 && errs[0].Key == fileKey {
		return Config{}, errs // the file could not be read as settings: what else it says is unknown
	}
	var envErrs Errors
	if errors.As(applyEnv(&cfg, environ), &envErrs) {
		errs = append(errs, envErrs...)
	}
	if path := cfg.Platform.APISecretFile; path != "" {
		if v, err := ReadSecretFile(path); err != nil {
			errs = append(errs, &Error{Key: "platform.api_secret_file", Problem: err.Error()})
		} else {
			cfg.Platform.APISecret = v
		}
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

// ReadSecretFile reads a secret from the file a *_file key names, its
// surrounding white space trimmed; the error is a problem to report
// under that key.
func ReadSecretFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", errors.New("cannot read: " + err.Error())
	}
	return strings.TrimSpace(string(b)), nil
}

// Load reads path and the environment, as Parse.
func Load(path string, environ []string, sections ...Sectioner) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		// Bad input like any other configuration problem (exit 2).
		return Config{}, Errors{{Key: path, Problem: fmt.Sprintf("%v: give a readable file, or leave --config out (./config.yaml, else the built-in demo)", unwrapPath(err))}}
	}
	cfg, err := Parse(data, environ, sections...)
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
			if name == "" || name == "-" {
				continue // not a setting (the modules' sections, walked below; a value the bridge sets)
			}
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
	for _, k := range cfg.moduleKeys() {
		walk(k, cfg.modules[k].v)
	}
	return out
}

// Keys lists every configuration key, the given modules' sections' too,
// sorted.
func Keys(sections ...Sectioner) []string {
	cfg := Defaults(sections...)
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
		if isSectionList(l.v.Type()) {
			errs = append(errs, sectionListFromEnv(name, value, l.v)...)
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
		c.validateRegulation,
		c.validateAudit,
		c.validateLog,
		c.validateOutbound,
	} {
		check(bad)
	}
	for _, k := range c.moduleKeys() {
		m := c.modules[k]
		m.section.check(c, m.v, bad)
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Key < errs[j].Key })
	return errs
}
