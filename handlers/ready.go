package handlers

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/ssobridge/ssobridge/launch"
)

// readiness checks the store and the platform. The platform's answer is
// cached briefly so frequent probes do not spend its rate limit.
type readiness struct {
	store    interface{ Ping(context.Context) error }
	platform func(ctx context.Context) error
	idp      func(ctx context.Context) error // nil: OIDC is off
	saml     func(ctx context.Context) error // nil: SAML is off
	lti      func(ctx context.Context) error // nil: LTI is off
	now      func() time.Time
	logger   *slog.Logger

	mu      sync.Mutex
	checked time.Time
	last    string
}

const platformCheckTTL = 15 * time.Second

func newReadiness(s interface{ Ping(context.Context) error }, p func(ctx context.Context) error, now func() time.Time, logger *slog.Logger) *readiness {
	return &readiness{store: s, platform: p, now: now, logger: logger}
}

// ReadyStatus is the /readyz answer.
type ReadyStatus struct {
	Ready    bool   `json:"ready"`
	Store    string `json:"store,omitempty"`
	Platform string `json:"platform,omitempty"`
	IdP      string `json:"idp,omitempty"`  // the identity provider's discovery, when OIDC is on
	SAML     string `json:"saml,omitempty"` // the SAML identity provider's metadata, when SAML is on
	// LTI is "degraded" while a platform's key set is unreadable: its
	// launches fail (or use the keys read before), everything else works,
	// so the instance stays ready.
	LTI      string `json:"lti,omitempty"`
	Stopping bool   `json:"stopping,omitempty"` // the process is draining before it exits
}

func (r *readiness) check(ctx context.Context) ReadyStatus {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st := ReadyStatus{Store: "ok", Platform: "ok"}
	if err := r.store.Ping(ctx); err != nil {
		st.Store = "unavailable"
		r.logger.Warn("not ready: the store does not answer", "err", err)
	}
	if r.platform != nil {
		st.Platform = r.platformStatus(ctx)
	}
	st.Ready = st.Store == "ok" && st.Platform == "ok"
	if r.idp != nil {
		st.IdP = "ok"
		if err := r.idp(ctx); err != nil {
			st.IdP, st.Ready = "unavailable", false
			r.logger.Warn("not ready: the identity provider does not answer", "err", err)
		}
	}
	if r.saml != nil {
		st.SAML = "ok"
		if err := r.saml(ctx); err != nil {
			st.SAML, st.Ready = "unavailable", false
			r.logger.Warn("not ready: the SAML identity provider's metadata has not been read", "err", err)
		}
	}
	if r.lti != nil {
		st.LTI = "ok"
		if err := r.lti(ctx); err != nil {
			st.LTI = "degraded"
			r.logger.Warn("LTI degraded: a platform's key set is unreadable", "err", err)
		}
	}
	return st
}

func (r *readiness) platformStatus(ctx context.Context) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.checked.IsZero() && r.now().Sub(r.checked) < platformCheckTTL {
		return r.last
	}
	r.last = launch.Classify(r.platform(ctx))
	r.checked = r.now()
	return r.last
}
