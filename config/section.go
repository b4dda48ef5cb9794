package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/ssobridge/ssobridge/mailaddr"
)

// Section is a module's configuration section: a top-level key whose
// settings the module's own struct T holds (a way in's "oidc:"). Its keys
// are read by the same rules as the bridge's own sections: from the file,
// then from SSOBRIDGE_* variables, every problem naming its key, its line
// and the fix, all in one answer.
type Section[T any] struct {
	// Key is the section's top-level key.
	Key string
	// Defaults are its settings where neither the file nor the
	// environment says otherwise.
	Defaults T
	// Check names every problem of s once it is read; it may complete s
	// (a secret read from the file a key names). c is the rest of the
	// configuration, read.
	Check func(c *Config, s *T, bad func(key, problem string))
}

// Sectioner is a Section of any settings type: what Parse, Load,
// Defaults and Keys take to know the modules' sections.
type Sectioner interface {
	sectionKey() string
	newSettings() reflect.Value
	check(c *Config, v reflect.Value, bad func(key, problem string))
}

func (s Section[T]) sectionKey() string { return s.Key }

// SectionKey is the key of a module's section ("lti").
func SectionKey(s Sectioner) string { return s.sectionKey() }

// newSettings is an addressable copy of the defaults.
func (s Section[T]) newSettings() reflect.Value {
	v := reflect.New(reflect.TypeFor[T]()).Elem()
	v.Set(reflect.ValueOf(s.Defaults))
	return v
}

func (s Section[T]) check(c *Config, v reflect.Value, bad func(key, problem string)) {
	if s.Check != nil {
		s.Check(c, v.Addr().Interface().(*T), bad)
	}
}

// Settings are s's settings in c: as read, or s's defaults when c was
// read without s.
func Settings[T any](c Config, s Section[T]) T {
	if m, ok := c.modules[s.Key]; ok {
		return m.v.Interface().(T)
	}
	return s.Defaults
}

// WithSettings is c with v as s's settings (c is left as it was).
func WithSettings[T any](c Config, s Section[T], v T) Config {
	modules := make(map[string]moduleSection, len(c.modules)+1)
	for k, m := range c.modules {
		modules[k] = m
	}
	nv := reflect.New(reflect.TypeFor[T]()).Elem()
	nv.Set(reflect.ValueOf(v))
	modules[s.Key] = moduleSection{section: s, v: nv}
	c.modules = modules
	return c
}

// moduleSection is a module's section in a Config: its declaration and
// its settings (an addressable T).
type moduleSection struct {
	section Sectioner
	v       reflect.Value
}

// withSections adds each section's defaults to c; a key that is the
// bridge's own or given twice is a programming error.
func (c *Config) withSections(sections []Sectioner) {
	own := map[string]bool{}
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		own[t.Field(i).Tag.Get("yaml")] = true
	}
	c.modules = make(map[string]moduleSection, len(sections))
	for _, s := range sections {
		k := s.sectionKey()
		if _, dup := c.modules[k]; dup || own[k] || k == "" {
			panic(fmt.Sprintf("config: the section %q is the bridge's own or declared twice", k))
		}
		c.modules[k] = moduleSection{section: s, v: s.newSettings()}
	}
}

// moduleKeys are the modules' section keys, sorted.
func (c *Config) moduleKeys() []string {
	keys := make([]string, 0, len(c.modules))
	for k := range c.modules {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// CheckEmailDomains names each word of list (under key) that is not an
// email domain: a way in's email_domains take domains, not addresses or
// URLs.
func CheckEmailDomains(key string, list Words, bad func(key, problem string)) {
	for _, d := range list.List() {
		if strings.Contains(d, "@") || !mailaddr.Valid("a@"+d) {
			bad(key, fmt.Sprintf("%q is not a domain; list domains such as partner.example", d))
		}
	}
}
