package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/internal/loopback"
	"github.com/ssobridge/ssobridge/lti"
	"github.com/ssobridge/ssobridge/provision"
	"github.com/ssobridge/ssobridge/signin"
	"github.com/ssobridge/ssobridge/store"
)

// LTIKeyName is where a generated LTI tool key is kept in the store.
const LTIKeyName = "lti-tool-key"

// LTIToolKey is the LTI tool's key: lti.key_file, else the key kept in
// the store (generated and kept by the first instance to start, so every
// instance publishes the same). source says which.
func LTIToolKey(ctx context.Context, cfg config.Config, st interface {
	KeptValue(ctx context.Context, name string) (string, error)
	KeepValue(ctx context.Context, name, value string) (string, error)
}) (key lti.ToolKey, source string, err error) {
	if f := cfg.LTI.KeyFile; f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			return lti.ToolKey{}, "", fmt.Errorf("lti.key_file: %w", err)
		}
		k, err := lti.ParseToolKey(data)
		if err != nil {
			return lti.ToolKey{}, "", fmt.Errorf("lti.key_file %s: %w", f, err)
		}
		return k, "lti.key_file " + f, nil
	}
	// A key is made only while the store keeps none: RSA key generation
	// would take a noticeable moment of every start.
	kept, err := st.KeptValue(ctx, LTIKeyName)
	if errors.Is(err, store.ErrNotFound) {
		var fresh []byte
		if fresh, err = lti.GenerateKeyPEM(); err != nil {
			return lti.ToolKey{}, "", err
		}
		kept, err = st.KeepValue(ctx, LTIKeyName, string(fresh))
	}
	if err != nil {
		return lti.ToolKey{}, "", fmt.Errorf("the LTI tool key in the store: %w", err)
	}
	k, err := lti.ParseToolKey([]byte(kept))
	if err != nil {
		return lti.ToolKey{}, "", fmt.Errorf("the LTI tool key kept in the store: %w", err)
	}
	return k, "generated once, kept in the store", nil
}

// LTIReach says whether LMSs can launch the bridge as cfg serves it: over
// https, or on loopback (a trial on this machine, which note says); not
// over plain http elsewhere, where a launch posted from the LMS's site
// arrives without the bridge's login cookie (it cannot be SameSite=None
// without Secure), and note says what to set.
func LTIReach(cfg config.Config) (ok bool, note string) {
	base := cfg.PublicURL(cfg.Server.Addr)
	switch reach, local := Reach(cfg); {
	case reach && !local:
		return true, ""
	case local:
		return true, "loopback: only browsers on this machine reach " + base + "; an LMS elsewhere needs server.public_url set to the https URL it reaches"
	}
	return false, "the bridge is served over plain http at " + base + ": LMSs post launches from their own site, which carries the bridge's login cookie " +
		"only over https (SameSite=None needs Secure), so every launch would fail; set server.public_url to the https URL the LMS reaches"
}

// Reach tells how the parties that call the bridge (an LMS's browsers, an
// IdP's SCIM client) reach it: over https (reach), or only from this
// machine over plain http on loopback (reach and local, a trial); plain
// http elsewhere reaches nothing safely.
func Reach(cfg config.Config) (reach, local bool) {
	u, err := url.Parse(cfg.PublicURL(cfg.Server.Addr))
	if err != nil {
		return false, false
	}
	if u.Scheme == "https" {
		return true, false
	}
	listen, _, _ := net.SplitHostPort(cfg.Server.Addr)
	if loopback.Host(u.Hostname()) && (cfg.Server.PublicURL != "" || loopback.Host(listen)) {
		return true, true
	}
	return false, false
}

// ltiKey is the configuration key of the platform listed ith.
func ltiKey(i int) string { return fmt.Sprintf("lti.platforms[%d]", i) }

// LTIPlatforms are the configured platforms in lti's terms.
func LTIPlatforms(cfg config.Config) []lti.Platform {
	var out []lti.Platform
	for i, p := range cfg.LTI.Platforms {
		var origins []string
		for _, o := range p.FrameOrigins.List() {
			origins = append(origins, strings.TrimRight(o, "/"))
		}
		var items []lti.DeepLinkItem
		for _, it := range p.DeepLinkItems {
			items = append(items, lti.DeepLinkItem{Title: it.Title, Path: it.Path})
		}
		out = append(out, lti.Platform{Name: store.Cut(p.Name, store.MaxName), Issuer: p.Issuer, ClientID: p.ClientID, DeploymentIDs: p.DeploymentIDs.List(),
			AuthURL: p.AuthURL, JWKSURL: p.JWKSURL, AdminRoles: p.AdminRoles.List(), CreateAccounts: p.CreateAccounts, FrameOrigins: origins,
			Key: ltiKey(i), DeepLinkItems: items, TokenURL: p.TokenURL, RosterMax: p.RosterMax})
	}
	return out
}

// ltiWay is launching from the LMSs lti.platforms lists, as a way in
// (nil when it lists none): the tool, its public key set, and the
// platforms' key sets read in the background (the bridge starts even
// while one is unreadable).
func (a *App) ltiWay(ctx context.Context, o Options, st store.Store, jobs *provision.Jobs) (*lti.Way, error) {
	if !a.cfg.LTI.Enabled() {
		return nil, nil
	}
	key, source, err := LTIToolKey(ctx, a.cfg, st)
	if err != nil {
		return nil, err
	}
	jwks, err := json.Marshal(key.JWKS())
	if err != nil {
		return nil, err
	}
	if err := a.migrateLTIIdentities(ctx, st); err != nil {
		return nil, err
	}
	// Every LMS is reached under the outbound policy: the URLs a
	// registration or a launch names are an outsider's.
	hc := a.cfg.OutboundPolicy().Client(nil)
	if o.LTIHTTPClient != nil {
		hc = a.cfg.OutboundPolicy().Guard(o.LTIHTTPClient)
	}
	retry := cmp.Or(o.LTIRetryEvery, 15*time.Second)
	tool := lti.New(lti.Config{Platforms: LTIPlatforms(a.cfg), HTTPClient: hc, UseOnce: st.UseOnce, Now: o.Now, RetryEvery: min(retry, 5*time.Second),
		Stored: func(ctx context.Context) ([]lti.Platform, error) { return RegisteredLTIPlatforms(ctx, st) }})
	a.logger.Info("LTI 1.3 tool", "platforms", len(a.cfg.LTI.Platforms), "key_id", key.KeyID(), "key", source)
	if ok, note := LTIReach(a.cfg); !ok {
		a.logger.Warn("LTI launches will fail: "+note, "key", "server.public_url")
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	// The roster of an instructor's course is provisioned ahead (NRPS),
	// through the admission every launch takes and the console's jobs.
	records := &lti.Records{Store: st}
	roster := &lti.Roster{Services: lti.NewServices(key, hc, now), Admit: signin.NewAdmission(st, a.logger).Admit, Provision: jobs.StartFor,
		Record: st.Record, Courses: records, UseOnce: st.UseOnce, Logger: a.logger, Now: now, Max: a.cfg.LTI.RosterMax}
	way := &lti.Way{LMS: tool, Sources: LTISources(a.cfg), KeySet: jwks, Key: key, Roster: roster, Registry: records, HTTPClient: hc, Logger: a.logger,
		Refresh: tool.Refresh, RefreshEvery: time.Hour, RetryEvery: retry, Zone: a.cfg.Zone()}
	if a.lms != nil {
		// The demo's sample LMS registers from the console too: its issuer
		// is a name, its configuration on its loopback port.
		at := lti.Origin(a.lms.URL())
		way.IssuerAt = func(origin, issuer string) bool { return origin == at && issuer == SampleLMSIssuer }
	}
	return way, nil
}

// RegisteredLTIPlatforms are the LMSs that registered themselves (Dynamic
// Registration) and are not disabled, in lti's terms.
func RegisteredLTIPlatforms(ctx context.Context, st store.ModuleRecords) ([]lti.Platform, error) {
	return (&lti.Records{Store: st}).Launchable(ctx)
}

// migrateLTIIdentities moves identities kept under an issuer alone to its
// one registration's (issuer, client_id), configured or registered
// (disabled ones too: they may be enabled again).
func (a *App) migrateLTIIdentities(ctx context.Context, st store.Store) error {
	all := LTIPlatforms(a.cfg)
	stored, err := (&lti.Records{Store: st}).Platforms(ctx)
	if err != nil {
		return err
	}
	for _, p := range stored {
		all = append(all, lti.Platform{Issuer: p.Issuer, ClientID: p.ClientID})
	}
	return lti.MigrateIdentities(ctx, all, st.MoveIdentities, a.logger)
}
