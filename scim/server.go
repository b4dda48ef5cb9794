// Package scim is the bridge's SCIM 2.0 service provider (RFC 7643/7644):
// the partner's identity provider (Entra ID, Okta, OneLogin, JumpCloud)
// creates, changes, deactivates and removes accounts, and keeps the
// groups whose one named by scim.admin_group makes partner admins. The
// protocol (routing, schemas, filter and PATCH parsing, error bodies) is
// github.com/elimity-com/scim's; this package maps it onto the account
// rules (accounts.Directory), and adds what the library leaves out: the
// bearer token, the body limit, the forms Entra ID sends that the RFC
// does not (string booleans, a filter on a work email's value), and a 503
// with Retry-After while the store is away.
package scim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/elimity-com/scim"
	scimerrors "github.com/elimity-com/scim/errors"
	"github.com/elimity-com/scim/optional"
	"github.com/elimity-com/scim/schema"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/regulation"
	"github.com/ssobridge/ssobridge/scim/internal/scimreq"
	"github.com/ssobridge/ssobridge/store"
)

// MaxBody is the largest request body served (ServiceProviderConfig says
// so); a larger one is answered 413.
const MaxBody = 1 << 20

// Regulator counts failed token checks (regulation.Regulator) under the
// client IP and an address of that IP's own (store.SCIMTokenAddress): an IP that
// fails regulation.max_retries times within find_time is banned, as an
// address is for sign-in, and a banned IP is refused whatever token it
// sends, so a guess can be tried only a few times per ban.
type Regulator interface {
	Admit(ctx context.Context, email, ip string) (regulation.Attempt, time.Time, error)
	Fail(ctx context.Context, a regulation.Attempt) (bool, error)
	BannedUntil(ctx context.Context, email, ip string) (time.Time, error)
}

// Config is what the service provider needs.
type Config struct {
	Directory *accounts.Directory
	// Tokens are the accepted bearer tokens (two while one is rotated).
	Tokens []string
	// Regulator counts a wrong or missing token (nil: not counted).
	Regulator Regulator
	// Now is the clock (time.Now if nil).
	Now func() time.Time
	// ClientIP is the request's client address, as the rest of the
	// bridge reads it (behind a trusted proxy, from its header).
	ClientIP func(*http.Request) string
	// BaseURL is the service provider's public base, e.g.
	// https://bridge.example.com/scim/v2, for the resources' locations.
	BaseURL string
	Logger  *slog.Logger
}

// Handler serves /v2/... (mount it under /scim with the prefix stripped).
type Handler struct {
	srv       scim.Server
	tokens    [][sha256.Size]byte
	regulator Regulator
	now       func() time.Time
	clientIP  func(*http.Request) string
	logger    *slog.Logger
}

// New builds the service provider of c.
func New(c Config) (*Handler, error) {
	if c.Directory == nil || c.Directory.Store == nil {
		return nil, errors.New("scim: no account directory")
	}
	if len(c.Tokens) == 0 {
		return nil, errors.New("scim: no bearer token")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ClientIP == nil {
		c.ClientIP = func(r *http.Request) string { return r.RemoteAddr }
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	h := &Handler{regulator: c.Regulator, now: c.Now, clientIP: c.ClientIP, logger: c.Logger}
	for _, t := range c.Tokens {
		h.tokens = append(h.tokens, sha256.Sum256([]byte(t)))
	}
	users := &userHandler{dir: c.Directory, st: c.Directory.Store}
	groups := &groupHandler{dir: c.Directory, st: c.Directory.Store}
	srv, err := scim.NewServer(&scim.ServerArgs{
		ServiceProviderConfig: &scim.ServiceProviderConfig{
			AuthenticationSchemes: []scim.AuthenticationScheme{{Type: scim.AuthenticationTypeOauthBearerToken, Name: "Bearer token",
				Description: "The token from the bridge's scim.token_file (or SSOBRIDGE_SCIM_TOKEN), as Authorization: Bearer <token>", Primary: true}},
			MaxResults:       maxResults,
			SupportFiltering: true,
			SupportPatch:     true,
		},
		ResourceTypes: []scim.ResourceType{
			{ID: optional.NewString("User"), Name: "User", Endpoint: "/Users", Description: optional.NewString("A partner account"),
				Schema: schema.CoreUserSchema(), SchemaExtensions: []scim.SchemaExtension{{Schema: schema.ExtensionEnterpriseUser()}}, Handler: users},
			{ID: optional.NewString("Group"), Name: "Group", Endpoint: "/Groups", Description: optional.NewString("A group (scim.admin_group's members are partner admins)"),
				Schema: schema.CoreGroupSchema(), Handler: groups},
		},
	}, scim.WithBaseURL(c.BaseURL), scim.WithLogger(libLogger{c.Logger}))
	if err != nil {
		return nil, err
	}
	h.srv = srv
	return h, nil
}

// maxResults is the most resources a page holds.
const maxResults = 100

// ServeHTTP checks the token and the body, then lets the library answer.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/scim+json")
	ip := h.clientIP(r)
	bannedUntil, err := h.bannedUntil(r.Context(), ip)
	if err != nil {
		writeUnavailable(w)
		return
	}
	banned := !bannedUntil.IsZero()
	if refusal := h.tokenRefusal(r); banned || refusal != "" {
		// One answer whatever was wrong with the token (none, a malformed
		// header, a wrong one); a banned client is told until when. The
		// log line says which, never the token.
		detail := "A valid bearer token is required (scim.token_file or SSOBRIDGE_SCIM_TOKEN)."
		if banned {
			until := bannedUntil.UTC().Format(time.RFC3339)
			detail = "A valid bearer token is required (scim.token_file or SSOBRIDGE_SCIM_TOKEN), or this client is banned until " + until +
				" after repeated wrong tokens (the console's Sign-in bans page lifts it)."
			h.logger.Warn("scim: request refused: this client IP is banned after repeated wrong tokens", "ip", ip, "until", until)
		} else {
			h.logger.Warn("scim: request refused: "+refusal, "ip", ip)
			h.countFailure(r.Context(), ip)
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="scim"`)
		writeError(w, http.StatusUnauthorized, "", detail)
		return
	}
	if r.ContentLength > MaxBody {
		writeError(w, http.StatusRequestEntityTooLarge, "", "The request body is over 1 MiB.")
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			writeError(w, http.StatusRequestEntityTooLarge, "", "The request body is over 1 MiB.")
			return
		case err != nil:
			writeError(w, http.StatusBadRequest, scimerrors.ScimTypeInvalidSyntax, "The request body could not be read.")
			return
		}
		if strings.HasSuffix(r.URL.Path, "/.search") && !filterFits(w, scimreq.SearchFilter(body)) {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(scimreq.NormalizeBody(body)))
	}
	if !filterFits(w, r.URL.Query().Get("filter")) {
		return
	}
	scimreq.NormalizeFilter(r)
	o := &outcome{logger: h.logger}
	h.srv.ServeHTTP(&outcomeWriter{ResponseWriter: w, o: o}, r.WithContext(context.WithValue(r.Context(), outcomeKey{}, o)))
}

// filterFits answers a filter over scimreq's bounds (400 invalidFilter)
// before any parser reads it, and reports whether it fits.
func filterFits(w http.ResponseWriter, f string) bool {
	if err := scimreq.CheckFilter(f); err != nil {
		writeError(w, http.StatusBadRequest, scimerrors.ScimTypeInvalidFilter,
			fmt.Sprintf("The filter is too large: at most %d bytes and %d levels of parentheses or brackets.", scimreq.MaxFilter, scimreq.MaxFilterDepth))
		return false
	}
	return true
}

// bannedUntil is when the ban on the client IP for failing token checks
// (or sign-in) too often ends; zero: none.
func (h *Handler) bannedUntil(ctx context.Context, ip string) (time.Time, error) {
	if h.regulator == nil {
		return time.Time{}, nil
	}
	return h.regulator.BannedUntil(ctx, store.SCIMTokenAddress(ip), ip)
}

// countFailure counts a failed token check for the client IP, and logs
// the ban it starts.
func (h *Handler) countFailure(ctx context.Context, ip string) {
	if h.regulator == nil {
		return
	}
	a, until, err := h.regulator.Admit(ctx, store.SCIMTokenAddress(ip), ip)
	started := false
	if err == nil && until.IsZero() {
		started, err = h.regulator.Fail(ctx, a)
	}
	if err != nil {
		h.logger.Warn("scim: a failed token check was not counted", "err", err)
		return
	}
	if started {
		if until, err = h.regulator.BannedUntil(ctx, store.SCIMTokenAddress(ip), ip); err == nil {
			h.logger.Warn("scim: client IP banned after repeated wrong tokens: every SCIM request from it is refused until the ban ends",
				"ip", ip, "until", until.UTC().Format(time.RFC3339), "lift", "the console's Sign-in bans page, or ssobridge bans revoke --email "+store.SCIMTokenAddress(ip))
		}
	}
}

// writeUnavailable answers 503 while the store is away.
func writeUnavailable(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
	writeError(w, http.StatusServiceUnavailable, "", "The bridge's database is unavailable for a moment: retry in 30 seconds.")
}

// tokenRefusal is "" when the request carries one of the tokens
// (compared in constant time, of their digests, so the length of the
// tokens leaks nothing either); else what was wrong, for the log.
func (h *Handler) tokenRefusal(r *http.Request) string {
	header := r.Header.Get("Authorization")
	if header == "" {
		return "no Authorization header"
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "the Authorization header is not \"Bearer <token>\""
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	match := 0
	for _, t := range h.tokens {
		match |= subtle.ConstantTimeCompare(sum[:], t[:])
	}
	if match != 1 {
		return "wrong bearer token (not scim.token_file's or SSOBRIDGE_SCIM_TOKEN's)"
	}
	return ""
}

// writeError writes a SCIM error body.
func writeError(w http.ResponseWriter, status int, scimType scimerrors.ScimType, detail string) {
	raw, _ := json.Marshal(scimerrors.ScimError{Status: status, ScimType: scimType, Detail: detail})
	w.Header().Set("Content-Type", "application/scim+json")
	w.WriteHeader(status)
	_, _ = w.Write(raw)
}

// outcome is what a request's handler learnt that the library's error
// model cannot carry: the store is away (503, which the library turns
// into a 500).
type outcome struct {
	unavailable bool
	logger      *slog.Logger // for what fails on the bridge's side
}

type outcomeKey struct{}

func outcomeOf(ctx context.Context) *outcome {
	if o, ok := ctx.Value(outcomeKey{}).(*outcome); ok {
		return o
	}
	return &outcome{logger: slog.New(slog.DiscardHandler)}
}

// retryAfter is the Retry-After of a 503 while the store is away.
const retryAfter = 30 * time.Second

// outcomeWriter turns the library's 500 for an unavailable store into a
// 503 with Retry-After and a body that says so.
type outcomeWriter struct {
	http.ResponseWriter
	o        *outcome
	replaced bool
}

// WriteHeader answers 503 in place of a 500 the store caused.
func (w *outcomeWriter) WriteHeader(status int) {
	if status == http.StatusInternalServerError && w.o.unavailable {
		w.replaced = true
		writeUnavailable(w.ResponseWriter)
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write drops the library's body of a replaced answer.
func (w *outcomeWriter) Write(b []byte) (int, error) {
	if w.replaced {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// libLogger gives the library's errors to the bridge's log.
type libLogger struct{ l *slog.Logger }

func (l libLogger) Error(args ...any) { l.l.Error("scim", "detail", args) }
