// Package regulation bans an email or a client IP that fails to sign in
// too often, on every instance that shares the store.
package regulation

import (
	"context"
	"time"

	"github.com/ssobridge/ssobridge/store"
)

// Regulator bans an email or a client IP for BanTime once it fails too
// often within FindTime (the model is Authelia's regulator). Its state
// lives in the store, so a ban holds on every instance on the database and
// after a restart. An attempt takes its place in the count before its
// password is verified (Admit), so parallel attempts can never test more
// passwords than the limit. Unknown emails are counted like known ones:
// a ban says nothing of which emails have accounts.
type Regulator struct {
	store store.SignIns
	cfg   store.RegulationConfig
	now   func() time.Time
}

// New returns a Regulator on store; now is the clock (time.Now if
// nil).
func New(st store.SignIns, cfg store.RegulationConfig, now func() time.Time) *Regulator {
	if now == nil {
		now = time.Now
	}
	return &Regulator{store: st, cfg: cfg, now: now}
}

// Attempt is an admitted sign-in attempt, to be resolved by Fail or
// Succeed.
type Attempt struct{ id int64 }

// Admit counts an attempt before its password is verified. A non-zero
// bannedUntil refuses it: a ban holds until then. ErrBusy refuses it too:
// as many attempts as the limit are being verified; try again shortly.
func (r *Regulator) Admit(ctx context.Context, email, ip string) (a Attempt, bannedUntil time.Time, err error) {
	id, until, err := r.store.AdmitSignIn(ctx, store.SignIn{Email: email, IP: ip, At: r.now()}, r.cfg)
	return Attempt{id: id}, until, err
}

// BannedUntil is when the ban in force on email or ip ends; zero: none.
// It counts no attempt (a check before anything else is looked at).
func (r *Regulator) BannedUntil(ctx context.Context, email, ip string) (time.Time, error) {
	return r.store.BannedUntil(ctx, email, ip, r.now())
}

// Fail records that the attempt's password was wrong and reports whether
// that started a ban.
func (r *Regulator) Fail(ctx context.Context, a Attempt) (banStarted bool, err error) {
	return r.store.FailSignIn(ctx, a.id, r.cfg, r.now())
}

// Succeed clears the failures counted for the attempt's email.
func (r *Regulator) Succeed(ctx context.Context, a Attempt) error {
	return r.store.SucceedSignIn(ctx, a.id)
}
