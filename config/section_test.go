package config

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// badge is a module's section as a test declares it.
type badge struct {
	URL     string        `yaml:"url"`
	Every   time.Duration `yaml:"every"`
	Domains Words         `yaml:"email_domains"`
	On      bool          `yaml:"on"`
	Derived string        `yaml:"derived"`
}

func badgeSection() Section[badge] {
	return Section[badge]{Key: "badge", Defaults: badge{Every: time.Minute, On: true}, Check: func(c *Config, b *badge, bad func(key, problem string)) {
		CheckEmailDomains("badge.email_domains", b.Domains, bad)
		if b.On && b.URL == "" {
			bad("badge.url", "empty; the badge service's URL")
		}
		b.Derived = b.URL + "/derived" // a check may complete its section
	}}
}

// A module's section is read as the bridge's own: from the file and the
// environment, its defaults kept, its problems named by key (with the
// nearest key) in the same one answer, and checked by its own rule.
func TestModuleSection(t *testing.T) {
	s := badgeSection()
	cfg, err := Parse([]byte("badge:\n  url: https://badge.example\n  email_domains: [school.example, partner.example]\n"), []string{"SSOBRIDGE_BADGE_EVERY=5m"}, s)
	require.NoError(t, err)
	got := Settings(cfg, s)
	assert.Equal(t, badge{URL: "https://badge.example", Every: 5 * time.Minute, Domains: "school.example partner.example", On: true,
		Derived: "https://badge.example/derived"}, got)

	_, err = Parse([]byte("badge:\n  ur: x\n  every: soon\nserver:\n  adress: x\n"), []string{"SSOBRIDGE_BADGE_ON=maybe", "SSOBRIDGE_BADGE_UR=x"}, s)
	require.ErrorIs(t, err, ErrInvalid)
	msg := err.Error()
	for _, want := range []string{
		"config: badge.ur: line 2: no such setting; did you mean badge.url?",
		`config: badge.every: line 3: "soon" is not a duration`,
		"config: server.adress: line 5: no such setting",
		`config: badge.on: from SSOBRIDGE_BADGE_ON: "maybe" is not true or false`,
		"config: SSOBRIDGE_BADGE_UR: no such setting; did you mean SSOBRIDGE_BADGE_URL?",
		"config: badge.url: empty; the badge service's URL",
	} {
		assert.Contains(t, msg, want)
	}
	_, err = Parse([]byte("badge:\n  on: false\n  email_domains: a@b.example\n"), nil, s)
	assert.ErrorContains(t, err, `config: badge.email_domains: "a@b.example" is not a domain`)

	_, err = Parse([]byte("badge:\n  url: x\n"), nil)
	assert.ErrorContains(t, err, "config: badge: line 1: no such setting", "read without the section")
	assert.Equal(t, s.Defaults, Settings(Defaults(), s), "a configuration read without the section: its defaults")

	assert.Contains(t, Keys(s), "badge.email_domains")
	assert.NotContains(t, Keys(), "badge.url")
}

// WithSettings changes a copy; the configuration it was made from keeps
// its settings.
func TestWithSettings(t *testing.T) {
	s := badgeSection()
	cfg, err := Parse([]byte("badge:\n  url: https://a.example\n"), nil, s)
	require.NoError(t, err)
	b := Settings(cfg, s)
	b.URL = "https://b.example"
	changed := WithSettings(cfg, s, b)
	assert.Equal(t, "https://b.example", Settings(changed, s).URL)
	assert.Equal(t, "https://a.example", Settings(cfg, s).URL)
}

// A section whose key is the bridge's own, or declared twice, is a
// programming error found at once.
func TestModuleSectionKeyClash(t *testing.T) {
	assert.Panics(t, func() { Defaults(Section[badge]{Key: "server"}) })
	assert.Panics(t, func() { Defaults(badgeSection(), badgeSection()) })
	assert.Panics(t, func() { Defaults(Section[badge]{}) })
	_, err := Parse(nil, nil, badgeSection())
	assert.True(t, errors.Is(err, ErrInvalid), "the defaults are checked too (badge.url is empty while on)")
}

// stops is a module's list of sections, as a test declares it.
type stop struct {
	Name    string `yaml:"name"`
	Staffed bool   `yaml:"staffed"`
}

type stops []stop

func (stops) ListItem() (any, string, string) {
	return &stop{Staffed: true}, "stop", `[{name: Main Street}]`
}

type route struct {
	Stops stops  `yaml:"stops"`
	Legs  []stop `yaml:"legs"` // a plain list of sections: items of zero values
}

// A list of sections is read item by item, each from its defaults, in
// the file and in its variable (YAML's or JSON's flow form); what is no
// list, or an item that is no section, is named by key.
func TestSectionList(t *testing.T) {
	s := Section[route]{Key: "route"}
	cfg, err := Parse([]byte("route:\n  stops:\n    - name: Main Street\n    - name: Elm\n      staffed: false\n"), nil, s)
	require.NoError(t, err)
	assert.Equal(t, stops{{Name: "Main Street", Staffed: true}, {Name: "Elm"}}, Settings(cfg, s).Stops)
	cfg, err = Parse(nil, []string{`SSOBRIDGE_ROUTE_STOPS=[{"name": "Oak"}]`}, s)
	require.NoError(t, err)
	assert.Equal(t, stops{{Name: "Oak", Staffed: true}}, Settings(cfg, s).Stops)
	cfg, err = Parse([]byte("route:\n  legs:\n    - name: Oak\n"), nil, s)
	require.NoError(t, err)
	assert.Equal(t, []stop{{Name: "Oak"}}, Settings(cfg, s).Legs, "no defaults declared: zero values")

	for _, tc := range []struct{ yaml, env, want string }{
		{"route:\n  stops: Main\n", "", `config: route.stops: line 2: expected a list of stops (- name: ...), found "Main"`},
		{"route:\n  stops:\n    - Main\n", "", `config: route.stops[0]: line 3: expected the keys of a stop (name, ...), found "Main"`},
		{"route:\n  stops:\n    - nme: Main\n", "", "config: route.stops[0].nme: line 3: no such setting; did you mean route.stops[0].name?"},
		{"", "SSOBRIDGE_ROUTE_STOPS=[{", "config: SSOBRIDGE_ROUTE_STOPS: not a list of stops; e.g. [{name: Main Street}]"},
		{"route:\n  legs: Oak\n", "", `config: route.legs: line 2: expected a list of items (- name: ...), found "Oak"`},
	} {
		var env []string
		if tc.env != "" {
			env = []string{tc.env}
		}
		_, err := Parse([]byte(tc.yaml), env, s)
		assert.ErrorContains(t, err, tc.want)
	}
}
