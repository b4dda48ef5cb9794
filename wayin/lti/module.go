package lti

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/launch/provision"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/wayin"
)

// KeyName is where a generated tool key is kept in the store.
const KeyName = "lti-tool-key"

// keyStore keeps the generated tool key for every instance.
type keyStore interface {
	KeptValue(ctx context.Context, name string) (string, error)
	KeepValue(ctx context.Context, name, value string) (string, error)
}

// loadToolKey is the tool's key: lti.key_file, else the key kept in the
// store (generated and kept by the first instance to start, so every
// instance publishes the same). source says which.
func loadToolKey(ctx context.Context, cfg config.Config, st keyStore) (key ToolKey, source string, err error) {
	if f := config.Settings(cfg, Section()).KeyFile; f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			return ToolKey{}, "", fmt.Errorf("lti.key_file: %w", err)
		}
		k, err := ParseToolKey(data)
		if err != nil {
			return ToolKey{}, "", fmt.Errorf("lti.key_file %s: %w", f, err)
		}
		return k, "lti.key_file " + f, nil
	}
	// A key is made only while the store keeps none: RSA key generation
	// would take a noticeable moment of every start.
	kept, err := st.KeptValue(ctx, KeyName)
	if errors.Is(err, store.ErrNotFound) {
		var fresh []byte
		if fresh, err = GenerateKeyPEM(); err != nil {
			return ToolKey{}, "", err
		}
		kept, err = st.KeepValue(ctx, KeyName, string(fresh))
	}
	if err != nil {
		return ToolKey{}, "", fmt.Errorf("the LTI tool key in the store: %w", err)
	}
	k, err := ParseToolKey([]byte(kept))
	if err != nil {
		return ToolKey{}, "", fmt.Errorf("the LTI tool key kept in the store: %w", err)
	}
	return k, "generated once, kept in the store", nil
}

// Reach says whether LMSs can launch the bridge as cfg serves it: over
// https, or on loopback (a trial on this machine, which note says); not
// over plain http elsewhere, where a launch posted from the LMS's site
// arrives without the bridge's login cookie (it cannot be SameSite=None
// without Secure), and note says what to set.
func Reach(cfg config.Config) (ok bool, note string) {
	base := cfg.PublicURL(cfg.Server.Addr)
	switch reach, local := cfg.Reach(); {
	case reach && !local:
		return true, ""
	case local:
		return true, "loopback: only browsers on this machine reach " + base + "; an LMS elsewhere needs server.public_url set to the https URL it reaches"
	}
	return false, "the bridge is served over plain http at " + base + ": LMSs post launches from their own site, which carries the bridge's login cookie " +
		"only over https (SameSite=None needs Secure), so every launch would fail; set server.public_url to the https URL the LMS reaches"
}

// platformKey is the configuration key of the platform listed ith.
func platformKey(i int) string { return fmt.Sprintf("lti.platforms[%d]", i) }

// Platforms are the platforms lti.platforms lists.
func Platforms(cfg config.Config) []Platform {
	var out []Platform
	for i, p := range config.Settings(cfg, Section()).Platforms {
		var origins []string
		for _, o := range p.FrameOrigins.List() {
			origins = append(origins, strings.TrimRight(o, "/"))
		}
		out = append(out, Platform{Name: store.Cut(p.Name, store.MaxName), Issuer: p.Issuer, ClientID: p.ClientID, DeploymentIDs: p.DeploymentIDs.List(),
			AuthURL: p.AuthURL, JWKSURL: p.JWKSURL, AdminRoles: p.AdminRoles.List(), CreateAccounts: p.CreateAccounts, FrameOrigins: origins,
			Key: platformKey(i), DeepLinkItems: p.DeepLinkItems, TokenURL: p.TokenURL, RosterMax: p.RosterMax})
	}
	return out
}

// Module is launching from a school's LMS as the bridge registers it
// (wayin.Module).
type Module struct{}

// Section is its configuration section, lti:.
func (Module) Section() config.Sectioner { return Section() }

// Sources are the LMSs lti.platforms lists, in its order: an LMS is its
// (issuer, client_id).
func (Module) Sources(cfg config.Config) []signin.Source {
	var out []signin.Source
	for i, p := range config.Settings(cfg, Section()).Platforms {
		out = append(out, signin.Source{ID: SourceID(p.Issuer, p.ClientID), Name: "LTI: " + p.Name, Title: p.Name, Noun: lmsNoun(), Key: platformKey(i), EmailDomains: p.EmailDomains.List(),
			CreateAccounts: p.CreateAccounts, AdminAuthority: len(p.AdminRoles.List()) > 0})
	}
	return out
}

// sourcesByKey are the configured LMSs' sources, by SourceKey.
func (m Module) sourcesByKey(cfg config.Config) map[string]signin.Source {
	out := map[string]signin.Source{}
	platforms := config.Settings(cfg, Section()).Platforms
	for i, s := range m.Sources(cfg) {
		out[SourceKey(platforms[i].Issuer, platforms[i].ClientID)] = s
	}
	return out
}

// Open is launching from the LMSs lti.platforms lists and those
// registered from the console, as a way in (nil when LTI is off): the
// tool, its public key set, and the platforms' key sets read in the
// background (the bridge starts even while one is unreadable).
func (m Module) Open(ctx context.Context, h wayin.Host) (wayin.Way, error) {
	s := config.Settings(h.Config, Section())
	if !s.Enabled() {
		return nil, nil
	}
	key, source, err := loadToolKey(ctx, h.Config, h.Store)
	if err != nil {
		return nil, err
	}
	jwks, err := json.Marshal(key.JWKS())
	if err != nil {
		return nil, err
	}
	records := &Records{Store: h.Store}
	if err := migrateIdentities(ctx, h, records); err != nil {
		return nil, err
	}
	retry := cmp.Or(h.RetryEvery, 15*time.Second)
	tool := New(Config{Platforms: Platforms(h.Config), HTTPClient: h.HTTPClient, UseOnce: h.Store.UseOnce, Now: h.Now, RetryEvery: min(retry, 5*time.Second),
		Stored: records.Launchable})
	h.Logger.Info("LTI 1.3 tool", "platforms", len(s.Platforms), "key_id", key.KeyID(), "key", source)
	if ok, note := Reach(h.Config); !ok {
		h.Logger.Warn("LTI launches will fail: "+note, "key", "server.public_url")
	}
	// The roster of an instructor's course is provisioned ahead (NRPS),
	// through the admission every launch takes and the console's jobs.
	roster := &Roster{Roster: provision.Roster{Admit: signin.NewAdmission(h.Store, h.Logger).Admit, Provision: h.Provision},
		Services: NewServices(key, h.HTTPClient, h.Now), Record: h.Store.Record, Courses: records, UseOnce: h.Store.UseOnce, Logger: h.Logger, Now: h.Now, Max: s.RosterMax}
	way := &Way{LMS: tool, Sources: m.sourcesByKey(h.Config), KeySet: jwks, Key: key, Roster: roster, Registry: records, HTTPClient: h.HTTPClient,
		Logger: h.Logger, Refresh: tool.Refresh, RefreshEvery: time.Hour, RetryEvery: retry, Zone: h.Config.Zone()}
	if sample := s.SampleLMS; sample.Origin != "" {
		// The demo's sample LMS registers from the console too: its issuer
		// is a name, its configuration on its loopback port.
		way.IssuerAt = func(origin, issuer string) bool { return origin == sample.Origin && issuer == sample.Issuer }
	}
	return way, nil
}

// migrateIdentities moves identities kept under an issuer alone to its
// one registration's (issuer, client_id), configured or registered
// (disabled ones too: they may be enabled again).
func migrateIdentities(ctx context.Context, h wayin.Host, records *Records) error {
	all := Platforms(h.Config)
	stored, err := records.Platforms(ctx)
	if err != nil {
		return err
	}
	for _, p := range stored {
		all = append(all, Platform{Issuer: p.Issuer, ClientID: p.ClientID})
	}
	return MigrateIdentities(ctx, all, h.Store.MoveIdentities, h.Logger)
}

// Check reads the tool's key and each platform's key set as the bridge
// would (the configured ones and those registered from the console, when
// the store can be read), tries each token endpoint, and says what to
// enter in the LMS.
func (Module) Check(ctx context.Context, h wayin.Host, w io.Writer) bool {
	s := config.Settings(h.Config, Section())
	if !s.Enabled() {
		return true
	}
	registered := registeredForCheck(ctx, h, w)
	base := h.Config.PublicURL(h.Config.Server.Addr)
	ok := true
	fmt.Fprintf(w, "lti:       in the LMS, enter: login URL %s%s, redirect URI %s%s, target link URI %s%s, key set URL %s%s\n",
		base, LoginPath, base, LaunchPath, base, LaunchPath, base, JWKSPath)
	var key *ToolKey
	if s.KeyFile != "" {
		k, _, err := loadToolKey(ctx, h.Config, nil)
		if err != nil {
			fmt.Fprintf(w, "           tool key: WRONG: %v\n", err)
			ok = false
		} else {
			key = &k
			fmt.Fprintf(w, "           tool key: %s (kid %s)\n", s.KeyFile, k.KeyID())
		}
	} else {
		fmt.Fprintf(w, "           tool key: generated on first start and kept in the store, the same on every instance (lti.key_file sets your own)\n")
	}
	for _, p := range append(Platforms(h.Config), registered...) {
		ok = checkPlatform(ctx, h, w, p, key) && ok
	}
	reach, note := Reach(h.Config)
	switch {
	case !ok:
		fmt.Fprintf(w, "verdict:   LTI NOT READY\n")
		return false
	case !reach:
		fmt.Fprintf(w, "verdict:   LTI NOT READY\n%s\n", note)
		return false
	case note != "":
		fmt.Fprintf(w, "verdict:   LTI OK (%s)\n", note)
		return true
	}
	fmt.Fprintf(w, "verdict:   LTI OK (https)\n")
	return true
}

// checkPlatform reads p's key set and tries its token endpoint.
func checkPlatform(ctx context.Context, h wayin.Host, w io.Writer, p Platform, key *ToolKey) bool {
	tool := New(Config{Platforms: []Platform{p}, UseOnce: checkOnly, HTTPClient: h.HTTPClient})
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err := tool.Refresh(rctx)
	cancel()
	admins := "none"
	if len(p.AdminRoles) > 0 {
		admins = strings.Join(p.AdminRoles, ", ")
	}
	if err != nil {
		fmt.Fprintf(w, "           %s (issuer %s, client %s): key set UNREADABLE: %v\n", p.Name, p.Issuer, p.ClientID, err)
		return false
	}
	fmt.Fprintf(w, "           %s (issuer %s, client %s, %d deployment(s)): key set read; partner admins: %s; accounts created: %t\n",
		p.Name, p.Issuer, p.ClientID, len(p.DeploymentIDs), admins, p.CreateAccounts)
	if p.TokenURL != "" {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		said, err := CheckTokenEndpoint(tctx, h.HTTPClient, p, key)
		cancel()
		if err != nil {
			fmt.Fprintf(w, "           %s: token endpoint %s UNUSABLE: %v (course rosters are not provisioned ahead; launches work)\n", p.Name, p.TokenURL, err)
		} else {
			fmt.Fprintf(w, "           %s: token endpoint %s: %s; rosters are provisioned at an instructor's launch\n", p.Name, p.TokenURL, said)
		}
	}
	return true
}

// checkOnly is the single-use record of a check, which signs no one in.
func checkOnly(context.Context, string, string, time.Time) error {
	return errors.New("check signs no one in")
}

// registeredForCheck are the LMSs registered from the console, kept in
// the store every instance reads, when check could open it (a SQLite
// store not made yet has none); a store that cannot be read is said.
func registeredForCheck(ctx context.Context, h wayin.Host, w io.Writer) []Platform {
	switch {
	case h.StoreProblem != "":
		fmt.Fprintf(w, "lti:       the LMSs registered from the console are not checked: the store cannot be read: %s\n", h.StoreProblem)
		return nil
	case h.Store == nil:
		return nil
	}
	list, err := (&Records{Store: h.Store}).Launchable(ctx)
	if err != nil {
		fmt.Fprintf(w, "lti:       the LMSs registered from the console are not checked: %v\n", err)
		return nil
	}
	return list
}

// KeepsSources: LTI is on, so LMSs may be registered from the console.
func (Module) KeepsSources(cfg config.Config) bool { return config.Settings(cfg, Section()).Enabled() }

// StoredSources are the LMSs registered from the console, for check's
// report of who may arrive as whom.
func (Module) StoredSources(ctx context.Context, h wayin.Host) []signin.Source {
	if h.Store == nil || !config.Settings(h.Config, Section()).Enabled() {
		return nil
	}
	list, err := (&Records{Store: h.Store}).Launchable(ctx)
	if err != nil {
		return nil
	}
	var out []signin.Source
	for _, p := range list {
		out = append(out, signin.Source{Name: "LTI: " + p.Name + " (registered from the console)", EmailDomains: p.EmailDomains, CreateAccounts: p.CreateAccounts})
	}
	return out
}
