package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// How instances on one PostgreSQL database tell each other's caches what
// they changed: NOTIFY in the writing transaction, LISTEN on a connection
// of each instance's own.

// changesChannel carries, on commit, what a write voided: "a:<account id>"
// (the account and its sessions), "s:<session id>", "l:<account id>" (its
// link). Every instance's cache drops it at once (see OnChange).
const changesChannel = "ssobridge_changes"

// notify queues a change notice in the transaction (sent on commit).
func notify(ctx context.Context, tx *sql.Tx, change string) error {
	_, err := tx.ExecContext(ctx, "SELECT pg_notify($1, $2)", changesChannel, change)
	return err
}

// listenerPing is how often the LISTEN connection proves it is caught up.
const listenerPing = 250 * time.Millisecond

// OnChange calls changed with each change notice any instance commits,
// from a connection of its own that LISTENs, and caughtUp(t) once every
// notice committed before t has been passed to changed: a ping round trip
// on the connection proves that, at least every listenerPing. After a
// failure it reconnects, and changed gets "*" (everything may have changed
// meanwhile). OnChange returns once the first LISTEN is in place (or, at
// most 5 s, has failed), so no change committed after it is missed; it
// runs until Close.
func (s *Postgres) OnChange(changed func(change string), caughtUp func(time.Time)) {
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	first := make(chan struct{})
	var once sync.Once
	ready := func() { once.Do(func() { close(first) }) }
	s.listening.Add(1)
	go func() {
		defer s.listening.Done()
		for wait := 10 * time.Millisecond; ctx.Err() == nil; wait = min(2*wait, 2*time.Second) {
			if s.listen(ctx, changed, caughtUp, ready) {
				wait = 10 * time.Millisecond
			}
			ready()
			changed("*")
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
	}()
	select {
	case <-first:
	case <-time.After(5 * time.Second):
	}
}

// listen holds one LISTEN connection until it fails or ctx ends (calling
// listening once it is in place); it reports whether it was listening.
func (s *Postgres) listen(ctx context.Context, changed func(string), caughtUp func(time.Time), listening func()) bool {
	conn, err := pgx.ConnectConfig(ctx, s.listenCfg)
	if err != nil {
		return false
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+changesChannel); err != nil {
		return false
	}
	s.listenerPID.Store(conn.PgConn().PID())
	listening()
	done, cancelDone := context.WithCancel(ctx)
	cancelDone() // drains only what has arrived
	nextPing := time.Now()
	for {
		if now := time.Now(); !now.Before(nextPing) {
			// The ping's answer comes after every notice committed before
			// it was sent: pass those on, then say so.
			sent := now
			if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
				return true
			}
			for n, err := conn.WaitForNotification(done); err == nil; n, err = conn.WaitForNotification(done) {
				changed(n.Payload)
			}
			caughtUp(sent)
			nextPing = sent.Add(listenerPing)
		}
		wctx, cancel := context.WithDeadline(ctx, nextPing)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			changed(n.Payload)
		case ctx.Err() != nil:
			return true
		case !pgconn.Timeout(err) && !errors.Is(err, context.DeadlineExceeded):
			return true
		}
	}
}
