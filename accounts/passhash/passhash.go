package passhash

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// HashParams are argon2id parameters.
type HashParams struct {
	MemoryKiB   uint32
	Iterations  uint32
	Parallelism uint8
}

// Hasher hashes and verifies passwords with argon2id, at most Concurrency
// at a time, so a storm of logins queues instead of exhausting memory; a
// caller that waits longer than MaxHashWait for a slot gets ErrBusy rather
// than joining an ever longer queue.
type Hasher struct {
	params HashParams
	slots  chan struct{}
	dummy  string // verified against for unknown emails, to spend equal work
	// verifications counts argon2id verifications (tests, diagnostics).
	verifications atomic.Int64
	// kdf is argon2.IDKey; a test swaps it to watch how many run at once.
	kdf func(password, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte
}

// Verifications reports how many argon2id verifications ran.
func (h *Hasher) Verifications() int64 { return h.verifications.Load() }

// ErrPasswordMismatch is a wrong password.
var ErrPasswordMismatch = errors.New("password does not match")

// ErrBusy: no hashing slot came free within MaxHashWait.
var ErrBusy = errors.New("accounts: too many passwords being checked at once")

// ErrWeakPassword: a new password is refused; the error CheckPassword
// returns is one (errors.Is) and says why.
var ErrWeakPassword = errors.New("password refused")

// Why a new password is refused: each is also ErrWeakPassword
// (errors.Is), so a page can say it in the person's language.
var (
	ErrPasswordTooShort  = errors.New("too short")
	ErrPasswordTooLong   = errors.New("too long")
	ErrPasswordBlank     = errors.New("only spaces")
	ErrPasswordTooCommon = errors.New("too common")
)

// weakPassword is a refused password: its text is the reason alone, for
// the person who chose it; why is one of the ErrPassword errors.
type weakPassword struct {
	why  error
	text string
}

func (w weakPassword) Error() string { return w.text }
func (w weakPassword) Is(target error) bool {
	return target == ErrWeakPassword || target == w.why
}

// MaxHashWait is how long a hash or verification waits for a slot.
const MaxHashWait = 5 * time.Second

// MinPasswordLength is the shortest password accepted for new accounts.
const MinPasswordLength = 8

// NewHasher returns a Hasher.
func NewHasher(p HashParams, concurrency int) (*Hasher, error) {
	if p.MemoryKiB < 8 || p.Iterations < 1 || p.Parallelism < 1 {
		return nil, fmt.Errorf("accounts: invalid argon2 parameters %+v", p)
	}
	if concurrency < 1 {
		concurrency = 1
	}
	h := &Hasher{params: p, slots: make(chan struct{}, concurrency), kdf: argon2.IDKey}
	dummy, err := h.Hash(context.Background(), "dummy password for unknown accounts")
	if err != nil {
		return nil, err
	}
	h.dummy = dummy
	return h, nil
}

func (h *Hasher) acquire(ctx context.Context) error {
	select {
	case h.slots <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(MaxHashWait)
	defer t.Stop()
	select {
	case h.slots <- struct{}{}:
		return nil
	case <-t.C:
		return ErrBusy
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release frees the slot once the hash's memory is collected: argon2id
// leaves its whole memory (19 MiB by default) as garbage at every hash,
// and a collection now, before the next hash takes the slot, keeps the
// heap at the slots' hashes. Left to the memory limit, the collector ran
// again and again inside the next hashes' allocations: a storm of 300
// sign-ins peaked at 100-112 MiB RSS at 13 sign-ins/s; collected here, at
// 93 MiB and 29/s (e2e/BenchmarkLoginStorm, docs/performance.md).
func (h *Hasher) release() {
	runtime.GC()
	<-h.slots
}

// CheckPassword tells why a new password is not acceptable, as NIST SP
// 800-63B asks: too short or too long, only white space, or one of the
// most common passwords (which are tried first by anyone guessing).
func CheckPassword(pw string) error {
	switch {
	case utf8.RuneCountInString(pw) < MinPasswordLength:
		return weakPassword{ErrPasswordTooShort, fmt.Sprintf("a password needs at least %d characters", MinPasswordLength)}
	case len(pw) > 1024:
		return weakPassword{ErrPasswordTooLong, "a password is limited to 1024 bytes"}
	case strings.TrimSpace(pw) == "":
		return weakPassword{ErrPasswordBlank, "a password cannot be only spaces"}
	case isCommonPassword(pw):
		return weakPassword{ErrPasswordTooCommon, "this password is one of the most common ones, which are guessed first; choose another (a few unrelated words make a good one)"}
	}
	return nil
}

// Hash returns a PHC-style argon2id hash of pw.
func (h *Hasher) Hash(ctx context.Context, pw string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer h.release()
	p := h.params
	key := h.kdf([]byte(pw), salt, p.Iterations, p.MemoryKiB, p.Parallelism, 32)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.MemoryKiB, p.Iterations, p.Parallelism,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// NoPassword is the hash of an account that has no password yet (e.g.
// imported): nothing verifies against it until an admin sets one.
const NoPassword = "!"

// Verify checks pw against encoded. It returns ErrPasswordMismatch for a
// wrong password.
func (h *Hasher) Verify(ctx context.Context, pw, encoded string) error {
	if encoded == NoPassword {
		return h.VerifyDummy(ctx, pw) // same work as a real check
	}
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return errors.New("accounts: unsupported password hash")
	}
	var version int
	var p HashParams
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return errors.New("accounts: unsupported argon2 version")
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Iterations, &p.Parallelism); err != nil {
		return errors.New("accounts: malformed argon2 parameters")
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 || p.MemoryKiB > 1<<21 || p.Iterations > 64 {
		return errors.New("accounts: malformed password hash")
	}
	if err := h.acquire(ctx); err != nil {
		return err
	}
	defer h.release()
	h.verifications.Add(1)
	got := h.kdf([]byte(pw), salt, p.Iterations, p.MemoryKiB, p.Parallelism, uint32(len(want)))
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return ErrPasswordMismatch
	}
	return nil
}

// VerifyDummy spends the same work as Verify for an account that does not
// exist, so timing does not reveal which emails have accounts. It always
// returns ErrPasswordMismatch (or the context's error).
func (h *Hasher) VerifyDummy(ctx context.Context, pw string) error {
	if err := h.Verify(ctx, pw+"\x00unknown", h.dummy); err != nil && !errors.Is(err, ErrPasswordMismatch) {
		return err
	}
	return ErrPasswordMismatch
}
