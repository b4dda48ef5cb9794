// Package metrics holds the bridge's Prometheus metrics, on a registry of
// their own: launches, sign-ins, the platform's calls and retries, the
// line, probes, the store's errors and the shared budget.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ssobridge/ssobridge/launch"
	"github.com/ssobridge/ssobridge/store"
)

// Metrics are the bridge's Prometheus metrics, on a registry of their own.
type Metrics struct {
	// Every launch observes four series; the children for label values
	// seen before are kept here, so a launch does not hash its labels
	// and look them up in the vectors (nor format its status) again.
	mu       sync.RWMutex
	children map[childKey]*observers

	reg              *prometheus.Registry
	launches         *prometheus.CounterVec
	launchDuration   *prometheus.HistogramVec
	logins           *prometheus.CounterVec
	platformRequests *prometheus.CounterVec
	platformDuration *prometheus.HistogramVec
	platformRetries  *prometheus.CounterVec
	lineWait         prometheus.Histogram
	lineRefused      prometheus.Counter
	sessionTouches   prometheus.Counter
	probes           *prometheus.CounterVec
}

// Probe counts a health or readiness probe.
func (m *Metrics) Probe(path string, status int) {
	m.probes.WithLabelValues(path, strconv.Itoa(status)).Inc()
}

// New registers the metrics on a new registry.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.launches = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ssobridge_launches_total", Help: "Launches by outcome and path."}, []string{"outcome", "path"})
	m.launchDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ssobridge_launch_duration_seconds", Help: "Launch latency, click to redirect.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"outcome"})
	m.logins = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ssobridge_logins_total", Help: "Sign-in attempts by outcome."}, []string{"outcome"})
	m.platformRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ssobridge_platform_requests_total", Help: "Partner API attempts by endpoint and status (0: no answer)."}, []string{"endpoint", "status"})
	m.platformDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ssobridge_platform_request_duration_seconds", Help: "Partner API attempt latency.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"endpoint"})
	m.platformRetries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ssobridge_platform_retries_total", Help: "Partner API retries by endpoint and reason."}, []string{"endpoint", "reason"})
	m.lineWait = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ssobridge_line_wait_seconds",
		Help:    "How long users who waited in line for the platform's pace waited, arrival to the editor.",
		Buckets: []float64{1, 2, 3, 5, 10, 20, 30, 45, 60, 90, 120, 300}})
	m.lineRefused = prometheus.NewCounter(prometheus.CounterOpts{Name: "ssobridge_line_refused_total", Help: "Arrivals told the platform is too busy (the line was longer than platform.max_wait)."})
	m.sessionTouches = prometheus.NewCounter(prometheus.CounterOpts{Name: "ssobridge_session_touches_total",
		Help: "Writes of a session's last-seen time (at most one per session a minute, whatever cookie comes back)."})
	m.probes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ssobridge_probes_total", Help: "Health and readiness probes by path and status (they are not in the access log)."}, []string{"path", "status"})
	m.reg.MustRegister(m.probes, m.launches, m.launchDuration, m.logins, m.platformRequests, m.platformDuration, m.platformRetries, m.lineWait, m.lineRefused, m.sessionTouches,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// WatchStore exports the store's health, read at each scrape:
// ssobridge_store_up, ssobridge_store_outages_total,
// ssobridge_store_unavailable_seconds_total and
// ssobridge_store_errors_total by kind (timeout: no answer within
// store.timeout; connection: refused or broken; refused: turned away at
// once during an outage).
func (m *Metrics) WatchStore(health func() store.OutageStats) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ssobridge_store_up", Help: "1 while the database answers, 0 during an outage."},
			func() float64 {
				if health().Up {
					return 1
				}
				return 0
			}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ssobridge_store_outages_total", Help: "Database outages begun."},
			func() float64 { return float64(health().Outages) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ssobridge_store_unavailable_seconds_total", Help: "Time the database was unavailable."},
			func() float64 { return health().Down.Seconds() }),
		storeErrors{health: health, desc: prometheus.NewDesc("ssobridge_store_errors_total", "Store calls that failed because the database was away, by kind.", []string{"kind"}, nil)},
	)
}

// storeErrors collects ssobridge_store_errors_total from one reading.
type storeErrors struct {
	health func() store.OutageStats
	desc   *prometheus.Desc
}

func (s storeErrors) Describe(ch chan<- *prometheus.Desc) { ch <- s.desc }

func (s storeErrors) Collect(ch chan<- prometheus.Metric) {
	h := s.health()
	for kind, n := range map[string]int64{"timeout": h.Timeouts, "connection": h.Lost, "refused": h.Refused} {
		ch <- prometheus.MustNewConstMetric(s.desc, prometheus.CounterValue, float64(n), kind)
	}
}

// PlatformBudget is the platform's rate budget as it stands
// (pacing.Stats, in the handlers' terms).
type PlatformBudget struct {
	Rate, Share float64 // all instances' rate, and this one's part (0: not limited)
	Instances   int     // instances calling the platform
	Paused      bool    // a 429 holds every call
	Waiting     int     // calls waiting for their turn
}

// WatchPlatformBudget exports the budget, read at each scrape:
// ssobridge_platform_rate_limit (requests/s, all instances; 0: not
// limited), ssobridge_platform_rate_share (this instance's),
// ssobridge_platform_instances, ssobridge_platform_waiting_calls and
// ssobridge_platform_paused.
func (m *Metrics) WatchPlatformBudget(budget func() PlatformBudget) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ssobridge_platform_rate_limit", Help: "The platform rate all instances keep to, requests/s (0: not limited)."},
			func() float64 { return budget().Rate }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ssobridge_platform_rate_share", Help: "This instance's share of the platform rate, requests/s."},
			func() float64 { return budget().Share }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ssobridge_platform_instances", Help: "Instances calling the platform, as last counted."},
			func() float64 { return float64(budget().Instances) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ssobridge_platform_waiting_calls", Help: "Platform calls waiting for their turn in this instance's budget."},
			func() float64 { return float64(budget().Waiting) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ssobridge_platform_paused", Help: "1 while a 429 holds every platform call."},
			func() float64 {
				if budget().Paused {
					return 1
				}
				return 0
			}),
	)
}

// WatchLine exports the line's length, read at each scrape:
// ssobridge_line_launches, the launches in flight on this instance.
func (m *Metrics) WatchLine(inFlight func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ssobridge_line_launches",
		Help: "Launches in flight on this instance (waiting for the platform's pace or running)."},
		func() float64 { return float64(inFlight()) }))
}

// LineLanded observes a user who reached the editor through the line
// (waitline.Config.OnLanded).
func (m *Metrics) LineLanded(wait time.Duration) { m.lineWait.Observe(wait.Seconds()) }

// LineRefused counts an arrival turned away (waitline.Config.OnRefused).
func (m *Metrics) LineRefused() { m.lineRefused.Inc() }

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// childKey names the series one observation updates.
type childKey struct {
	kind   byte // 'l': launch, 'p': platform attempt
	a, b   string
	status int
}

// observers are a counter and a histogram of one childKey.
type observers struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// observersOf returns the series of k, made by mk the first time.
func (m *Metrics) observersOf(k childKey, mk func() *observers) *observers {
	m.mu.RLock()
	o := m.children[k]
	m.mu.RUnlock()
	if o != nil {
		return o
	}
	o = mk()
	m.mu.Lock()
	if m.children == nil {
		m.children = map[childKey]*observers{}
	}
	m.children[k] = o
	m.mu.Unlock()
	return o
}

// Launch observes a launch (launch.Options.OnDone).
func (m *Metrics) Launch(outcome string, path launch.Path, d time.Duration) {
	o := m.observersOf(childKey{kind: 'l', a: outcome, b: string(path)}, func() *observers {
		return &observers{m.launches.WithLabelValues(outcome, string(path)), m.launchDuration.WithLabelValues(outcome)}
	})
	o.count.Inc()
	o.duration.Observe(d.Seconds())
}

// PlatformAttempt observes a Partner API attempt (apiclient.Hooks.OnAttempt).
func (m *Metrics) PlatformAttempt(endpoint string, status int, d time.Duration) {
	o := m.observersOf(childKey{kind: 'p', a: endpoint, status: status}, func() *observers {
		return &observers{m.platformRequests.WithLabelValues(endpoint, strconv.Itoa(status)), m.platformDuration.WithLabelValues(endpoint)}
	})
	o.count.Inc()
	o.duration.Observe(d.Seconds())
}

// PlatformRetry observes a retry (apiclient.Hooks.OnRetry).
func (m *Metrics) PlatformRetry(endpoint, reason string, _ time.Duration) {
	m.platformRetries.WithLabelValues(endpoint, reason).Inc()
}

// Login counts a sign-in by its outcome.
func (m *Metrics) Login(outcome string) { m.logins.WithLabelValues(outcome).Inc() }

// SessionTouched counts a write of a session's last-seen time.
func (m *Metrics) SessionTouched() { m.sessionTouches.Inc() }
