package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"path/filepath"
	"time"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/handlers"
	"github.com/ssobridge/ssobridge/internal/logbuf"
	"github.com/ssobridge/ssobridge/internal/version"
	"github.com/ssobridge/ssobridge/store"
)

// shutdownGrace is how long a stop waits for requests in flight: a
// launch's bound, and a little for the answer to be written.
const shutdownGrace = handlers.DefaultLaunchTimeout + 5*time.Second

// Serve answers on ln (and /metrics on server.metrics_addr, when set)
// until ctx ends. Then /readyz fails at once, the listeners close, and
// requests in flight get up to shutdownGrace to finish (a launch, and its
// audit row, within its bound) before Serve returns. It first prints to out
// where the bridge listens and, for the embedded demo, the demo login.
func (a *App) Serve(ctx context.Context, ln net.Listener, out io.Writer) error {
	say := startupPrinter(a.cfg.Log, out)
	servers := []*http.Server{a.httpServer(a.handler)}
	listeners := []net.Listener{ln}
	url := a.cfg.PublicURL(ln.Addr().String())
	ver := version.Get().Short() // which build answers, in the first line
	if a.cfg.Server.PublicURL == "" {
		say("ssobridge listening on "+url+" (version "+ver+")", "ssobridge listening", "url", url, "version", ver)
	} else {
		// Behind a proxy the public URL is not where this process listens:
		// both, so each instance's line says which it is.
		local := "http://" + ln.Addr().String()
		say("ssobridge listening on "+local+" (public URL "+url+", version "+ver+")", "ssobridge listening", "addr", local, "url", url, "version", ver)
	}
	if addr := a.cfg.Server.MetricsAddr; addr != "" {
		mln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listen on %s (server.metrics_addr): %w", addr, err)
		}
		servers, listeners = append(servers, a.httpServer(a.metricsHandler())), append(listeners, mln)
		murl := "http://" + mln.Addr().String() + "/metrics"
		say("metrics at "+murl, "metrics", "url", murl)
		if a.cfg.Server.Pprof {
			purl := "http://" + mln.Addr().String() + "/debug/pprof/"
			say("profiler at "+purl, "profiler", "url", purl)
		}
	}
	// The demo login beside the URL: the two things a newcomer needs.
	line, err := a.EnsureDemoAccount(ctx)
	if err != nil {
		return err
	}
	if line != "" {
		say(line, line)
	}
	if a.sim != nil {
		say("platform emulator (embedded) at "+a.sim.URL, "platform emulator (embedded)", "url", a.sim.URL)
	}
	for _, d := range a.demos {
		u := d.Listening(url)
		say(d.Name+" (demo; "+d.Note+") at "+u, d.Name+" (demo)", "url", u)
	}
	for _, note := range a.afterStart {
		a.logger.Info(note.msg, note.attrs...)
	}
	go logbuf.FlushingPanics(a.flushLog, func() { a.prune(ctx) })

	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go logbuf.FlushingPanics(a.flushLog, func() { errc <- srv.Serve(listeners[i]) })
	}
	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	a.stopping.Store(true)
	a.logger.Info("shutting down", "grace", shutdownGrace)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	var errs []error
	for _, srv := range servers {
		errs = append(errs, srv.Shutdown(sctx))
	}
	a.Drain(sctx)
	if serveErr != nil {
		return serveErr
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// The last line, as the first said where it listened: written by
	// Close, once every log line before it is out.
	a.stopped = func() { say("ssobridge stopped", "ssobridge stopped") }
	return nil
}

// Drain is the end of a stop, once the server answers no more requests:
// the launches of users on the waiting page run on until ctx ends, their
// ends going to their tickets, which the users' next refresh reads on any
// instance.
func (a *App) Drain(ctx context.Context) {
	a.stopping.Store(true)
	if err := a.line.Drain(ctx); err != nil {
		a.logger.Warn("stopped before every waiting launch ended; the next refresh takes them over", "err", err)
	}
}

// startNote is a log line kept for after the start-up lines.
type startNote struct {
	msg   string
	attrs []any
}

// LogAfterStart logs an INFO line once Serve has printed where the bridge
// listens (and the demo login): notes about the process's settings do
// not push those lines down.
func (a *App) LogAfterStart(msg string, attrs ...any) {
	a.afterStart = append(a.afterStart, startNote{msg, attrs})
}

// metricsHandler serves /metrics and, with server.pprof, Go's profiler
// under /debug/pprof/ (on server.metrics_addr only; config refuses pprof
// without it).
func (a *App) metricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", a.metrics.Handler())
	if a.cfg.Server.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// httpServer serves h with the bridge's timeouts; its errors go to the log.
func (a *App) httpServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: shutdownGrace + 25*time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(a.logger.Handler(), slog.LevelWarn)}
}

// startupPrinter returns how the start-up lines are written to out: the
// text for people, or one JSON object a line (msg and attrs) when
// log.format is json, so a log collector reads every line.
func startupPrinter(cfg config.Log, out io.Writer) func(text, msg string, attrs ...any) {
	if cfg.Format != "json" {
		return func(text, _ string, _ ...any) { fmt.Fprintln(out, text) }
	}
	logger := newLogger(config.Log{Level: "info", Format: "json"}, out)
	return func(_, msg string, attrs ...any) { logger.Info(msg, attrs...) }
}

// prune deletes, now and hourly, audit events older than audit.retention
// (when set), sign-in attempts older than regulation.find_time, sessions
// idle longer than session.idle_timeout and single-use ids (portal token
// jtis, IdP states) past their time.
func (a *App) prune(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		a.prunePass(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// prunePass prunes once. While the database is away the pass is put off
// to the next hour with one WARN line: the store's guard has logged the
// outage, and four ERROR lines more would only repeat it.
func (a *App) prunePass(ctx context.Context, now time.Time) {
	failed := func(what string, err error) (stop bool) {
		switch {
		case err == nil || ctx.Err() != nil:
			return ctx.Err() != nil
		case errors.Is(err, store.ErrUnavailable):
			a.logger.Warn("pruning put off to the next hour: the database is unavailable", "err", err)
			return true
		}
		a.logger.Error(what+" pruning failed", "err", err)
		return false
	}
	if r := a.cfg.Audit.Retention; r > 0 {
		start := time.Now()
		n, err := pruneInBatches(ctx, pruneHoldFor(a.cfg.Store.Driver), func(ctx context.Context, after int64, limit int) (int64, int64, error) {
			n, next, err := a.store.PruneEvents(ctx, now.Add(-r), after, limit)
			// A chunk partly deleted holds rows younger than their ids
			// suggest: are any stamped in the future? (Its range is
			// bounded; the young tail, where no row goes, is not read
			// again.)
			if err == nil && n > 0 && n < int64(limit) && next != 0 && !a.futureEventsSeen.Load() {
				a.noteFutureEvents(ctx, after, next, now)
			}
			return n, next, err
		})
		if failed("audit", err) {
			return
		}
		if n > 0 {
			a.logger.Info("audit events pruned", "count", n, "retention", r, "took", time.Since(start).Round(time.Millisecond))
		}
	}
	if _, err := a.store.PruneSignIns(ctx, now.Add(-a.cfg.Regulation.FindTime)); failed("sign-in attempts", err) {
		return
	}
	if _, err := a.store.PruneUsedIDs(ctx, now); failed("single-use id", err) {
		return
	}
	// A waiting launch's ticket nobody came back for: its token expired.
	if _, err := a.store.PruneTickets(ctx, now); failed("waiting launch", err) {
		return
	}
	// A session idle past the timeout is void anyway: drop its record.
	start := time.Now()
	n, err := pruneSessions(ctx, a.store, now.Add(-a.cfg.Session.IdleTimeout))
	if !failed("session", err) && n > 0 {
		a.logger.Info("idle sessions pruned", "count", n, "took", time.Since(start).Round(time.Millisecond))
	}
}

// futureSkew is how far ahead of this process's clock an event's time
// may be before retention calls it stamped in the future.
const futureSkew = time.Hour

// noteFutureEvents logs, once a process, events of a chunk retention could
// not delete whole that are stamped in the future (a clock that ran
// ahead, an imported log): they no longer stop the pass, but whoever
// reads the log should know why they outlive the retention.
func (a *App) noteFutureEvents(ctx context.Context, after, upTo int64, now time.Time) {
	n, first, err := a.store.EventsStampedAfter(ctx, after, upTo, now.Add(futureSkew))
	if err != nil || n == 0 || !a.futureEventsSeen.CompareAndSwap(false, true) {
		return
	}
	a.logger.Warn("audit events stamped in the future: a clock ran ahead when they were written; they stay until their time passes the retention, and no longer stop its pass",
		"count_in_chunk", n, "first_id", first)
}

// Retention deletes in bounded batches: one statement never holds
// SQLite's writer or a PostgreSQL lock for long, nor outlives the store's
// deadline (a single DELETE of millions of rows rolled back every time on
// PostgreSQL, and held SQLite's writer for 30 s). A batch is sized by how
// long the last one took, so a statement takes about its hold
// (pruneHoldFor) whatever the database and its load, and a pause at least
// as long as the statement lets users' writes in between.
const (
	pruneBatch = 5000 // the most rows a statement deletes
	// youngStretch is how many events in a row, all too young to go, end
	// a pass over the audit log: the recent days at its end (a pass reads
	// that many more rows than it deletes, about ten statements).
	youngStretch  = 50000
	pruneMinBatch = 250
	pruneGap      = 10 * time.Millisecond // the least pause between statements
)

// pruneHoldFor is how long one retention statement should take on the
// driver. On PostgreSQL a DELETE blocks no launch's insert, and a 5 ms
// hold kept the pass over 6.6 million rows from ending within 6 minutes
// (25 ms ends it in about 2). On SQLite every launch's audit row waits for
// the one writer the DELETE holds: at 25 ms the pass took the launches'
// p99 to 2.2-2.4 times a quiet minute's, so it holds less and runs longer.
func pruneHoldFor(driver string) time.Duration {
	if driver == "postgres" {
		return 25 * time.Millisecond
	}
	return 8 * time.Millisecond
}

// pruneWalk walks a table with prune (from the zero key, each call going
// on after where the last stopped) until the walk reaches the end, ctx
// ends or a chunk fails, and returns the rows deleted in all. With
// untilYoung above 0 it also stops once that many rows in a row were all
// too young to go (the audit log's tail: its ids follow time). A few
// young rows before old ones (a clock set wrong once, rows of an
// instance whose clock ran ahead, a restored log) do not stop it: the
// walk once stopped at the first chunk it could not delete whole, and a
// single such row kept millions of expired rows for good. size gives the
// next chunk's rows from the last one's and how long it took.
func pruneWalk[K comparable](ctx context.Context, prune func(ctx context.Context, after K, limit int) (n int64, next K, err error),
	untilYoung int, size func(limit int, took time.Duration) int) (int64, error) {
	var total int64
	var after, end K
	limit, young := pruneBatch, 0
	for {
		start := time.Now()
		n, next, err := prune(ctx, after, limit)
		took := time.Since(start)
		total += n
		if n > 0 {
			young = 0
		} else {
			young += limit
		}
		if err != nil || next == end || (untilYoung > 0 && young >= untilYoung) {
			return total, err
		}
		after, limit = next, size(limit, took)
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(max(pruneGap, took)):
		}
	}
}

// pruneInBatches walks the audit log (pruneWalk), each chunk sized by
// how long the last took against hold (nextBatch).
func pruneInBatches(ctx context.Context, hold time.Duration, prune func(ctx context.Context, after int64, limit int) (n, next int64, err error)) (int64, error) {
	return pruneWalk(ctx, prune, youngStretch, func(limit int, took time.Duration) int { return nextBatch(limit, took, hold) })
}

// pruneSessions walks every session (pruneWalk), pruneBatch at a time,
// deleting those last seen before `before`; it returns the sessions
// deleted.
func pruneSessions(ctx context.Context, s interface {
	PruneSessions(ctx context.Context, before time.Time, after string, limit int) (int64, string, error)
}, before time.Time) (int64, error) {
	return pruneWalk(ctx, func(ctx context.Context, after string, limit int) (int64, string, error) {
		return s.PruneSessions(ctx, before, after, limit)
	}, 0, func(int, time.Duration) int { return pruneBatch })
}

// nextBatch is the size of the batch after one of limit rows that took
// took: half as many when it held the writer over twice hold, twice as
// many when under half of it.
func nextBatch(limit int, took, hold time.Duration) int {
	switch {
	case took > 2*hold:
		return max(pruneMinBatch, limit/2)
	case took < hold/2:
		return min(pruneBatch, 2*limit)
	}
	return limit
}

// demoLoginFile keeps the demo account's password in the data directory,
// so every start of the demo can print it again.
const demoLoginFile = "demo-login.txt"

// DemoEmail is the embedded demo's admin account.
const DemoEmail = accounts.DemoEmail

// EnsureDemoAccount creates the demo's admin account when the store is
// empty (embedded demo only) and returns the line to print: the demo login
// while it is true, else why none is printed; "" with a real platform.
func (a *App) EnsureDemoAccount(ctx context.Context) (string, error) {
	if a.sim == nil {
		return "", nil
	}
	return accounts.EnsureDemoAccount(ctx, a.store, a.hasher, filepath.Join(a.cfg.DataDir(), demoLoginFile))
}
