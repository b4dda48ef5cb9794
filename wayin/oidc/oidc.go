// Package oidc signs users in with the partner's identity provider: an
// OpenID Connect relying party (coreos/go-oidc and x/oauth2) running the
// authorization code flow with state, nonce and PKCE S256. It knows
// nothing of routes, cookies or accounts: Start returns where to send the
// browser and the Flow to keep with it; Finish checks the IdP's answer
// against that Flow and returns who signed in.
package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"github.com/ssobridge/ssobridge/internal/groupname"
	"github.com/ssobridge/ssobridge/internal/outside"
	"github.com/ssobridge/ssobridge/internal/poll"
	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
	"golang.org/x/oauth2"
)

// FlowTTL is how long a sign-in started at the IdP may take.
const FlowTTL = 10 * time.Minute

// Errors of a sign-in; each has its own page.
var (
	// ErrDenied: the IdP answered with an error (the user declined,
	// access_denied, or the IdP refused the request).
	ErrDenied = wayin.NewRefusal(views.RefusedDenied, "oidc: the identity provider refused the sign-in")
	// ErrBadState: the answer does not belong to this browser's flow (a
	// forged or replayed callback, or the flow cookie is gone).
	ErrBadState = wayin.NewRefusal(views.RefusedBadState, "oidc: the answer does not match a sign-in started in this browser")
	// ErrExpired: the flow is older than FlowTTL.
	ErrExpired = wayin.NewRefusal(views.RefusedExpired, "oidc: the sign-in took too long")
	// ErrUnavailable: the IdP could not be reached (discovery, token or
	// key endpoints).
	ErrUnavailable = wayin.NewRefusal(views.RefusedUnavailable, "oidc: the identity provider is unavailable")
	// ErrInvalidToken: the IdP's ID token did not verify (signature,
	// issuer, audience, expiry, nonce) or lacks an email.
	ErrInvalidToken = wayin.NewRefusal(views.RefusedUnavailable, "oidc: the identity provider's token did not verify")
)

// Config is the relying party.
type Config struct {
	Issuer, ClientID, ClientSecret string
	Scopes                         []string // must include openid
	GroupsClaim                    string   // where the groups are (default "groups")
	AdminGroup                     string   // asked for: scopes gain "groups" when it is set
	HTTPClient                     *http.Client
	// Now is the clock of the flow's expiry (the app's); ID tokens are
	// checked against the real clock, as the IdP that signs them is.
	Now func() time.Time
}

// Flow is what a browser carries from Start to Finish (the caller keeps it
// bound to the browser, sealed, and uses it once).
type Flow struct {
	State, Nonce, Verifier string
	Next                   string    // where the sign-in continues
	RedirectURL            string    // the callback it was started with
	Expires                time.Time // Start + FlowTTL
}

// Identity is who signed in.
type Identity struct {
	Subject       string
	Email         string
	EmailVerified bool
	GivenName     string
	FamilyName    string
	Name          string
	Groups        []string
	// Admin: AdminGroup is set and the user is a member of it.
	Admin bool
}

// discoveryRetry is how long a failed discovery is answered from memory:
// while the IdP is down, sign-ins and probes get its error at once rather
// than each waiting, in turn, for an attempt of its own.
const discoveryRetry = 5 * time.Second

// Provider is the relying party of one IdP. Discovery runs on first use
// and again after a failure, so an IdP that is down at start is not fatal.
// With Watch running, the IdP's health (discovery and keys) is checked in
// the background: while it is down, Start and Discover answer
// ErrUnavailable at once, and it recovers by itself.
type Provider struct {
	cfg     Config
	mu      sync.Mutex
	p       *gooidc.Provider
	lastErr error     // the last failed discovery
	lastTry time.Time // when it was made (real time: it paces network attempts)
	watched bool      // Watch has checked at least once: health is its last result
	health  error     // the last health check's error; nil: healthy
}

// New returns a Provider; call Discover to try the IdP now.
func New(cfg Config) *Provider {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = "groups"
	}
	if cfg.AdminGroup != "" && !slices.Contains(cfg.Scopes, "groups") {
		// Dex and most IdPs send groups only when asked for them.
		cfg.Scopes = append(slices.Clone(cfg.Scopes), "groups")
	}
	return &Provider{cfg: cfg}
}

// Scopes are the scopes the bridge asks for.
func (p *Provider) Scopes() []string { return p.cfg.Scopes }

// Discover fetches the IdP's discovery document (once it has succeeded,
// it is kept). With Watch running it answers the last health check
// without a network call.
func (p *Provider) Discover(ctx context.Context) error {
	_, err := p.provider(ctx)
	return err
}

// CheckHealth fetches the discovery document and the signing keys afresh
// and records the result: on success the new document replaces the old
// (an IdP may move its endpoints), on failure sign-ins answer
// ErrUnavailable until a later check succeeds.
func (p *Provider) CheckHealth(ctx context.Context) error {
	err := p.checkHealth(ctx)
	p.mu.Lock()
	p.watched, p.health = true, err
	p.mu.Unlock()
	return err
}

func (p *Provider) checkHealth(ctx context.Context) error {
	cctx := gooidc.ClientContext(ctx, p.cfg.HTTPClient)
	prov, err := gooidc.NewProvider(cctx, p.cfg.Issuer)
	if err != nil {
		return fmt.Errorf("%w: discovery at %s: %w", ErrUnavailable, p.cfg.Issuer, err)
	}
	var doc struct {
		JWKS string `json:"jwks_uri"`
	}
	if err := prov.Claims(&doc); err != nil || doc.JWKS == "" {
		return fmt.Errorf("%w: discovery at %s names no jwks_uri", ErrUnavailable, p.cfg.Issuer)
	}
	if err := checkKeys(ctx, p.cfg.HTTPClient, doc.JWKS); err != nil {
		return fmt.Errorf("%w: signing keys at %s: %w", ErrUnavailable, doc.JWKS, err)
	}
	p.mu.Lock()
	p.p, p.lastErr = prov, nil
	p.mu.Unlock()
	return nil
}

// checkKeys fetches a JWKS document and checks that it lists a key.
func checkKeys(ctx context.Context, hc *http.Client, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("answered %s", resp.Status)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return fmt.Errorf("not a JWKS document: %w", err)
	}
	if len(set.Keys) == 0 {
		return errors.New("no keys")
	}
	return nil
}

// Watch checks the IdP's health every interval until ctx ends, the first
// time one interval from now: the caller has just run Discover, so a check
// at once would fetch the same document twice at start. changed, when set,
// is called when the health changes from what the last discovery found:
// with the error when the IdP goes down, with nil when it is back.
func (p *Provider) Watch(ctx context.Context, interval time.Duration, changed func(err error)) {
	p.mu.Lock()
	last := p.lastErr
	p.mu.Unlock()
	poll.Run(ctx, poll.Schedule{Every: interval, Timeout: min(interval, 10*time.Second)}, last, p.CheckHealth, func(prev, err error) {
		if changed != nil && (err != nil) != (prev != nil) {
			changed(err)
		}
	})
}

func (p *Provider) provider(ctx context.Context) (*gooidc.Provider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.watched && p.health != nil {
		return nil, p.health
	}
	if p.p != nil {
		return p.p, nil
	}
	if p.lastErr != nil && time.Since(p.lastTry) < discoveryRetry {
		return nil, p.lastErr
	}
	prov, err := gooidc.NewProvider(gooidc.ClientContext(ctx, p.cfg.HTTPClient), p.cfg.Issuer)
	if err != nil {
		p.lastErr, p.lastTry = fmt.Errorf("%w: discovery at %s: %w", ErrUnavailable, p.cfg.Issuer, err), time.Now()
		return nil, p.lastErr
	}
	p.p = prov
	return prov, nil
}

func (p *Provider) oauth(prov *gooidc.Provider, redirectURL string) *oauth2.Config {
	return &oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, Endpoint: prov.Endpoint(),
		RedirectURL: redirectURL, Scopes: p.cfg.Scopes}
}

func random() string { return randid.Token(32) }

// Start begins a sign-in that returns to redirectURL and then continues to
// next: the URL to send the browser to, and the Flow to keep with it.
func (p *Provider) Start(ctx context.Context, redirectURL, next string) (string, Flow, error) {
	prov, err := p.provider(ctx)
	if err != nil {
		return "", Flow{}, err
	}
	f := Flow{State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(), Next: next, RedirectURL: redirectURL,
		Expires: p.cfg.Now().Add(FlowTTL)}
	u := p.oauth(prov, redirectURL).AuthCodeURL(f.State, gooidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier))
	return u, f, nil
}

// Finish checks the IdP's answer (the callback's query) against the flow:
// the state, the IdP's error if any, then the code exchanged with the PKCE
// verifier, the ID token verified (issuer, audience, expiry, signature) and
// its nonce, the email and names from the token or the userinfo endpoint.
func (p *Provider) Finish(ctx context.Context, f Flow, q url.Values) (Identity, error) {
	switch {
	case f.State == "" || q.Get("state") != f.State:
		return Identity{}, ErrBadState
	case !p.cfg.Now().Before(f.Expires):
		return Identity{}, ErrExpired
	case q.Get("error") != "":
		// The IdP's words are for the log, not for a decision.
		return Identity{}, fmt.Errorf("%w: the identity provider answered with the error code %s; its own description: %s", ErrDenied, outside.Quote(q.Get("error")), outside.Quote(q.Get("error_description")))
	case q.Get("code") == "":
		return Identity{}, fmt.Errorf("%w: no code in the answer", ErrDenied)
	}
	prov, err := p.provider(ctx)
	if err != nil {
		return Identity{}, err
	}
	cctx := gooidc.ClientContext(ctx, p.cfg.HTTPClient)
	tok, err := p.oauth(prov, f.RedirectURL).Exchange(cctx, q.Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			// The IdP answered and refused the code (used, expired, wrong
			// verifier): a replayed or tampered callback.
			return Identity{}, fmt.Errorf("%w: the code was refused: %s", ErrBadState, re.ErrorCode)
		}
		return Identity{}, fmt.Errorf("%w: token endpoint: %w", ErrUnavailable, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Identity{}, fmt.Errorf("%w: no ID token", ErrInvalidToken)
	}
	idt, err := prov.Verifier(&gooidc.Config{ClientID: p.cfg.ClientID}).Verify(cctx, raw)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	if idt.Nonce != f.Nonce {
		return Identity{}, fmt.Errorf("%w: the nonce does not match", ErrInvalidToken)
	}
	var c claims
	if err := idt.Claims(&c.m); err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	if c.str("email") == "" && prov.UserInfoEndpoint() != "" {
		// Some IdPs put the email in userinfo only.
		if ui, err := prov.UserInfo(cctx, oauth2.StaticTokenSource(tok)); err == nil {
			var more map[string]any
			if ui.Claims(&more) == nil {
				for k, v := range more {
					if _, ok := c.m[k]; !ok {
						c.m[k] = v
					}
				}
			}
		}
	}
	id := Identity{Subject: idt.Subject, Email: c.str("email"), EmailVerified: c.verified(), GivenName: c.str("given_name"),
		FamilyName: c.str("family_name"), Name: c.str("name"), Groups: c.strings(p.cfg.GroupsClaim)}
	if id.Email == "" {
		return Identity{}, fmt.Errorf("%w: no email claim (ask for the email scope)", ErrInvalidToken)
	}
	id.Admin = groupname.In(id.Groups, p.cfg.AdminGroup)
	return id, nil
}

// claims reads an ID token's claims leniently: an unknown groups claim,
// or one of another shape, is no groups, not an error.
type claims struct{ m map[string]any }

func (c claims) str(k string) string { s, _ := c.m[k].(string); return s }

func (c claims) verified() bool {
	switch v := c.m["email_verified"].(type) {
	case bool:
		return v
	case string: // some IdPs send "true"
		return v == "true"
	}
	return false
}

func (c claims) strings(k string) []string {
	switch v := c.m[k].(type) {
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		return []string{v}
	}
	return nil
}
