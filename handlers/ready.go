package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ssobridge/ssobridge/internal/version"
	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/wayin"
)

// readiness checks the store and the platform. The platform's answer is
// cached briefly so frequent probes do not spend its rate limit.
type readiness struct {
	store    interface{ Ping(context.Context) error }
	platform func(ctx context.Context) error
	ways     []wayin.Way // each says whether it can take arrivals
	now      func() time.Time
	logger   *slog.Logger
	version  string // this build's, read once (the build information is parsed at each read)

	mu          sync.Mutex
	checked     time.Time
	last        string
	lastSummary string // the readiness last logged
}

// platformCheckTTL bounds how often /readyz calls the platform (the
// load balancer may probe every second).
const platformCheckTTL = 15 * time.Second

func newReadiness(s interface{ Ping(context.Context) error }, p func(ctx context.Context) error, ways []wayin.Way, now func() time.Time, logger *slog.Logger) *readiness {
	return &readiness{store: s, platform: p, ways: ways, now: now, logger: logger, version: version.Get().Short()}
}

// ReadyStatus is the /readyz answer.
type ReadyStatus struct {
	Ready    bool   `json:"ready"`
	Store    string `json:"store,omitempty"`
	Platform string `json:"platform,omitempty"`
	// Ways are the ways in that can fail, by name ("idp", "saml", "lti"):
	// "ok", "unavailable" (an essential one: the instance is not ready) or
	// "degraded". In JSON each is a key of its own beside the others.
	Ways     map[string]string `json:"-"`
	Stopping bool              `json:"stopping,omitempty"` // the process is draining before it exits
	// Version is the build that answers (package version): during a
	// rolling upgrade, which instances run which.
	Version string `json:"version,omitempty"`
}

// MarshalJSON writes the ways in as keys of their own.
func (s ReadyStatus) MarshalJSON() ([]byte, error) {
	type plain ReadyStatus
	b, err := json.Marshal(plain(s))
	if err != nil || len(s.Ways) == 0 {
		return b, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range s.Ways {
		m[k] = v
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (s *ReadyStatus) UnmarshalJSON(b []byte) error {
	type plain ReadyStatus
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for k, v := range m {
		if str, ok := v.(string); ok && k != "store" && k != "platform" && k != "version" {
			if s.Ways == nil {
				s.Ways = map[string]string{}
			}
			s.Ways[k] = str
		}
	}
	return nil
}

func (r *readiness) check(ctx context.Context) ReadyStatus {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st := ReadyStatus{Store: "ok", Platform: "ok", Version: r.version}
	var why []any // the causes, for the log line of a change
	if err := r.store.Ping(ctx); err != nil {
		st.Store = "unavailable"
		why = append(why, "store_err", err.Error())
	}
	if r.platform != nil {
		st.Platform = r.platformStatus(ctx)
	}
	st.Ready = st.Store == "ok" && st.Platform == "ok"
	for _, w := range r.ways {
		state := "ok"
		if err := w.Ready(ctx); err != nil {
			state = "degraded"
			if w.Essential() {
				state, st.Ready = "unavailable", false
			}
			why = append(why, w.Name()+"_err", err.Error())
		}
		if st.Ways == nil {
			st.Ways = map[string]string{}
		}
		st.Ways[w.Name()] = state
	}
	r.note(st, why)
	return st
}

// note logs a change of readiness, once: probes come every few seconds,
// and each is no log line of its own (they are counted in
// ssobridge_probes_total).
func (r *readiness) note(st ReadyStatus, why []any) {
	summary := fmt.Sprintf("ready=%v store=%s platform=%s stopping=%v", st.Ready, st.Store, st.Platform, st.Stopping)
	for _, name := range slices.Sorted(maps.Keys(st.Ways)) {
		summary += " " + name + "=" + st.Ways[name]
	}
	r.mu.Lock()
	changed := summary != r.lastSummary
	r.lastSummary = summary
	r.mu.Unlock()
	switch {
	case !changed:
	case st.Ready && !strings.Contains(summary, "degraded"):
		r.logger.Info("ready", "state", summary)
	case st.Ready:
		r.logger.Warn("ready, a way in degraded", append([]any{"state", summary}, why...)...)
	default:
		r.logger.Warn("not ready", append([]any{"state", summary}, why...)...)
	}
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
