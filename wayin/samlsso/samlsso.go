// Package samlsso signs users in with the partner's SAML 2.0 identity
// provider: the bridge is a service provider of Web Browser SSO (an
// AuthnRequest over HTTP-Redirect, the Response over HTTP-POST) built on
// crewjam/saml, which checks the XML signatures. It knows nothing of
// routes, cookies or accounts: Start returns where to send the browser and
// the Flow to keep with it; Finish checks the IdP's answer against the
// flows the browser holds and returns who signed in.
package samlsso

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/crewjam/saml"
	"github.com/crewjam/saml/samlsp"
	"github.com/jonboulle/clockwork"
	dsig "github.com/russellhaering/goxmldsig"

	"github.com/ssobridge/ssobridge/internal/groupname"
	"github.com/ssobridge/ssobridge/internal/poll"
	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// FlowTTL is how long a sign-in started at the IdP may take.
const FlowTTL = 10 * time.Minute

// MaxResponseBytes bounds the posted SAMLResponse (base64). A response
// with its certificate and a few dozen groups is 10-30 KB; the bound keeps
// a hostile body's parse short.
const MaxResponseBytes = 256 << 10

// AssertionKind is the single-use kind under which assertion IDs are kept
// in the store (Store.UseOnce): a replay is refused on every instance.
const AssertionKind = "saml-assertion"

// Errors of a sign-in; each class has its own page.
var (
	// ErrUnavailable: the IdP's metadata has never been read (unreachable
	// or invalid since start).
	ErrUnavailable = wayin.NewRefusal(views.RefusedUnavailable, "saml: the identity provider's metadata is not available")
	// ErrDenied: the IdP answered with a status other than Success (the
	// user cancelled, or the IdP refused).
	ErrDenied = wayin.NewRefusal(views.RefusedDenied, "saml: the identity provider refused the sign-in")
	// ErrBadState: the answer does not belong to a sign-in this browser
	// started (another browser's, unsolicited, or the flow cookie is gone).
	ErrBadState = wayin.NewRefusal(views.RefusedBadState, "saml: the answer does not match a sign-in started in this browser")
	// ErrReplayed: the assertion was accepted before, here or on another
	// instance.
	ErrReplayed = wayin.NewRefusal(views.RefusedReplayed, "saml: the assertion was used before")
	// ErrFlowExpired: the sign-in is older than FlowTTL.
	ErrFlowExpired = wayin.NewRefusal(views.RefusedExpired, "saml: the sign-in took too long")
	// ErrExpired: the assertion's validity has ended (past the skew
	// allowance).
	ErrExpired = wayin.NewRefusal(views.RefusedClock, "saml: the assertion has expired")
	// ErrNotYetValid: the assertion is not valid yet (past the skew
	// allowance): the IdP's clock is ahead of the bridge's.
	ErrNotYetValid = wayin.NewRefusal(views.RefusedClock, "saml: the assertion is not yet valid")
	// ErrInvalid: the answer is not one the bridge accepts: a signature
	// that does not verify against the metadata's certificates (or none),
	// another audience, destination, recipient or issuer, a malformed or
	// oversized body, a DTD, or no email.
	ErrInvalid = wayin.NewRefusal(views.RefusedInvalid, "saml: the identity provider's answer was refused")
)

// Common names of the attributes a user's details come in: the short
// names, the LDAP OIDs (Shibboleth, most school IdPs) and the claim URIs
// (Entra ID, AD FS). A configured name replaces the list.
var (
	emailNames = []string{"email", "mail", "emailAddress", "urn:oid:0.9.2342.19200300.100.1.3",
		"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress"}
	firstNames = []string{"firstName", "givenName", "given_name", "urn:oid:2.5.4.42",
		"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname"}
	lastNames = []string{"lastName", "sn", "surname", "family_name", "urn:oid:2.5.4.4",
		"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname"}
	fullNames = []string{"displayName", "name", "cn", "urn:oid:2.16.840.1.113730.3.1.241", "urn:oid:2.5.4.3",
		"http://schemas.microsoft.com/identity/claims/displayname"}
	groupNames = []string{"groups", "memberOf", "http://schemas.microsoft.com/ws/2008/06/identity/claims/groups"}
)

// OneTime records single-use ids (the store's UseOnce): ErrUsed (from
// package accounts) when the id was recorded before.
type OneTime interface {
	UseOnce(ctx context.Context, kind, id string, until time.Time) error
}

// Config is the service provider.
type Config struct {
	// MetadataURL or MetadataFile is where the IdP's metadata is read
	// (entity ID, SSO URL, signing certificates).
	MetadataURL, MetadataFile string
	// EntityID is the bridge's entity ID; ACSURL its AssertionConsumerService
	// (absolute, as the IdP posts to it).
	EntityID, ACSURL string
	// Attribute names; empty: the common names (see above). Email empty
	// also takes the NameID when its format is emailAddress.
	EmailAttribute, FirstNameAttribute, LastNameAttribute, GroupsAttribute string
	AdminGroup                                                             string
	AllowIDPInitiated                                                      bool
	// Key and Certificate, when set, sign AuthnRequests and are published
	// in the metadata.
	Key         crypto.Signer
	Certificate *x509.Certificate
	// Skew is the clock difference allowed on the assertion's validity.
	Skew       time.Duration
	HTTPClient *http.Client
	// Now is the clock of every time check (the app's).
	Now  func() time.Time
	Used OneTime
	// RetryEvery is how soon a failed metadata read is tried again, and
	// the least time between reads after a signature failure (default
	// 15s).
	RetryEvery time.Duration
}

// Flow is a sign-in started in a browser: the caller keeps it bound to the
// browser (sealed) and hands it back to Finish.
type Flow struct {
	RequestID string    `json:"r"` // the AuthnRequest's ID: the Response's InResponseTo
	Relay     string    `json:"s"` // the RelayState sent: an opaque random reference
	Next      string    `json:"n"` // where the sign-in continues
	Expires   time.Time `json:"e"`
}

// Identity is who signed in.
type Identity struct {
	NameID      string
	Email       string
	GivenName   string
	FamilyName  string
	Name        string
	Groups      []string
	Admin       bool // AdminGroup is set and the user is a member of it
	Unsolicited bool // an IdP-initiated sign-in (no flow): it lands at /
	Flow        Flow // the flow it answered (zero when unsolicited)
}

// SP is the service provider of one IdP. Its metadata is read by Refresh
// (and Watch, periodically): until it has been read once, sign-ins answer
// ErrUnavailable; a later failure keeps the last good metadata.
type SP struct {
	cfg   Config
	clock *dsig.Clock
	acs   url.URL

	mu       sync.Mutex
	sp       *saml.ServiceProvider // nil until metadata has been read
	lastErr  error                 // the last read's error; nil: it succeeded
	lastRead time.Time             // when the last read was made (real time: it paces network reads)
}

// New checks cfg and returns an SP; call Refresh to read the metadata.
func New(cfg Config) (*SP, error) {
	if (cfg.MetadataURL == "") == (cfg.MetadataFile == "") {
		return nil, errors.New("saml: set the IdP's metadata URL or file (one of them)")
	}
	acs, err := url.Parse(cfg.ACSURL)
	if err != nil || acs.Scheme == "" || acs.Host == "" {
		return nil, fmt.Errorf("saml: the ACS URL %q is not absolute", cfg.ACSURL)
	}
	if cfg.EntityID == "" {
		return nil, errors.New("saml: no entity ID")
	}
	if (cfg.Key == nil) != (cfg.Certificate == nil) {
		return nil, errors.New("saml: a signing key needs its certificate, and a certificate its key")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RetryEvery <= 0 {
		cfg.RetryEvery = 15 * time.Second
	}
	if cfg.Used == nil {
		return nil, errors.New("saml: no store for used assertion IDs")
	}
	return &SP{cfg: cfg, acs: *acs, clock: dsig.NewFakeClock(appClock{Clock: clockwork.NewRealClock(), now: cfg.Now})}, nil
}

// appClock is the app's clock as the SAML library takes it (it reads only
// Now).
type appClock struct {
	clockwork.Clock
	now func() time.Time
}

func (c appClock) Now() time.Time { return c.now() }

// provider is the library's service provider for metadata md.
func (s *SP) provider(md *saml.EntityDescriptor) *saml.ServiceProvider {
	sp := &saml.ServiceProvider{
		EntityID: s.cfg.EntityID, AcsURL: s.acs, IDPMetadata: md, HTTPClient: s.cfg.HTTPClient, Clock: s.clock,
		AuthnNameIDFormat: saml.EmailAddressNameIDFormat, AllowIDPInitiated: s.cfg.AllowIDPInitiated,
		// Only HTTP-POST is offered and taken: no artifact resolution (a
		// call from the bridge to the IdP on a browser's say-so).
		AssertionConsumerServiceBindings: []string{saml.HTTPPostBinding},
		// The metadata says how long to cache it, not a validUntil: an IdP
		// that keeps a saved copy (a Shibboleth file) would otherwise
		// refuse the bridge two days later.
		MetadataOmitValidUntil: true,
		// SHA-1 digests admit forged collisions; every IdP named in
		// docs/saml.md signs with SHA-256.
		RejectSHA1Signatures: true,
	}
	if s.cfg.Key != nil {
		sp.Key, sp.Certificate, sp.SignatureMethod = s.cfg.Key, s.cfg.Certificate, signatureMethod(s.cfg.Key)
	}
	return sp
}

func signatureMethod(k crypto.Signer) string {
	if _, ok := k.Public().(*rsa.PublicKey); ok {
		return dsig.RSASHA256SignatureMethod
	}
	return dsig.ECDSASHA256SignatureMethod
}

// Refresh reads the IdP's metadata now. On success it replaces the
// metadata in use (a rolled-over certificate is taken at once); on failure
// the last good metadata stays in use and the error is returned.
func (s *SP) Refresh(ctx context.Context) error {
	md, err := s.readMetadata(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastRead, s.lastErr = time.Now(), err
	if err != nil {
		return err
	}
	s.sp = s.provider(md)
	return nil
}

func (s *SP) readMetadata(ctx context.Context) (*saml.EntityDescriptor, error) {
	var (
		data []byte
		err  error
		from = s.cfg.MetadataFile
	)
	if from != "" {
		data, err = os.ReadFile(from)
	} else {
		from = s.cfg.MetadataURL
		data, err = s.fetch(ctx, from)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %w", ErrUnavailable, from, err)
	}
	md, err := samlsp.ParseMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not IdP metadata: %w", ErrUnavailable, from, err)
	}
	if len(md.IDPSSODescriptors) == 0 || ssoURL(md) == "" {
		return nil, fmt.Errorf("%w: %s names no SingleSignOnService with the HTTP-Redirect binding", ErrUnavailable, from)
	}
	if n := signingCertCount(md); n == 0 {
		return nil, fmt.Errorf("%w: %s lists no signing certificate", ErrUnavailable, from)
	}
	return md, nil
}

func (s *SP) fetch(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("answered %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20+1))
	if err == nil && len(data) > 4<<20 {
		err = errors.New("larger than 4 MiB")
	}
	return data, err
}

func ssoURL(md *saml.EntityDescriptor) string {
	for _, d := range md.IDPSSODescriptors {
		for _, e := range d.SingleSignOnServices {
			if e.Binding == saml.HTTPRedirectBinding {
				return e.Location
			}
		}
	}
	return ""
}

func signingCertCount(md *saml.EntityDescriptor) int {
	n := 0
	for _, d := range md.IDPSSODescriptors {
		for _, k := range d.KeyDescriptors {
			if k.Use == "" || k.Use == "signing" {
				n += len(k.KeyInfo.X509Data.X509Certificates)
			}
		}
	}
	return n
}

// status is the metadata's state: loaded once a read has succeeded (the
// metadata in use is the last good one), and the last read's error (nil
// when it succeeded).
func (s *SP) status() (loaded bool, lastErr error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sp != nil, s.lastErr
}

// Ready is nil when sign-in can start (the metadata has been read).
func (s *SP) Ready(context.Context) error {
	_, err := s.current()
	return err
}

// current is the service provider in use, or ErrUnavailable.
func (s *SP) current() (*saml.ServiceProvider, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sp == nil {
		if s.lastErr != nil {
			return nil, s.lastErr
		}
		return nil, ErrUnavailable
	}
	return s.sp, nil
}

// Watch reads the metadata again every interval until ctx ends, and every
// RetryEvery while no read has succeeded. changed, when set, is called
// when a read's outcome differs from the one before: with the error when
// it starts failing, nil when it succeeds again.
func (s *SP) Watch(ctx context.Context, interval time.Duration, changed func(err error)) {
	_, last := s.status()
	sched := poll.Schedule{Every: interval, Retry: min(interval, s.cfg.RetryEvery), Timeout: 10 * time.Second,
		Retrying: func(error) bool { loaded, _ := s.status(); return !loaded }}
	poll.Run(ctx, sched, last, s.Refresh, func(prev, err error) {
		if changed != nil && (err != nil) != (prev != nil) {
			changed(err)
		}
	})
}

// refreshAfterSignatureFailure reads the metadata again, at most once per
// RetryEvery, when a response's signature did not verify against the
// metadata used: the IdP may have rolled over its certificate. It reports
// whether the metadata in use has changed since.
func (s *SP) refreshAfterSignatureFailure(ctx context.Context, used *saml.ServiceProvider) bool {
	s.mu.Lock()
	if s.sp != used {
		s.mu.Unlock()
		return true
	}
	if time.Since(s.lastRead) < s.cfg.RetryEvery {
		s.mu.Unlock()
		return false
	}
	s.lastRead = time.Now() // the others within RetryEvery do not read again
	s.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = s.Refresh(rctx) // a failure keeps the metadata in use; Watch logs it
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sp != used
}

// Metadata is the bridge's SP metadata (entity ID, the ACS with the
// HTTP-POST binding, NameID format emailAddress, the signing certificate
// when one is set). It needs no IdP metadata.
func (s *SP) Metadata() ([]byte, error) {
	sp := s.provider(nil)
	b, err := xml.MarshalIndent(sp.Metadata(), "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), b...), nil
}

func random() string { return randid.Token(16) }

// Start begins a sign-in that continues to next: the IdP URL to send the
// browser to (an AuthnRequest over HTTP-Redirect, signed when a key is
// set, RelayState an opaque reference of the flow) and the Flow to keep.
func (s *SP) Start(_ context.Context, next string) (string, Flow, error) {
	sp, err := s.current()
	if err != nil {
		return "", Flow{}, err
	}
	req, err := sp.MakeAuthenticationRequest(ssoURL(sp.IDPMetadata), saml.HTTPRedirectBinding, saml.HTTPPostBinding)
	if err != nil {
		return "", Flow{}, fmt.Errorf("saml: AuthnRequest: %w", err)
	}
	f := Flow{RequestID: req.ID, Relay: random(), Next: next, Expires: s.cfg.Now().Add(FlowTTL)}
	u, err := req.Redirect(f.Relay, sp)
	if err != nil {
		return "", Flow{}, fmt.Errorf("saml: AuthnRequest: %w", err)
	}
	return u.String(), f, nil
}

// Finish checks the IdP's answer (the posted form: SAMLResponse and
// RelayState) against the flows this browser holds: the flow the
// RelayState names gives the request ID the Response must answer; with
// none, only an unsolicited response is taken, and only when IdP-initiated
// sign-in is allowed. The library then checks the signatures (against the
// metadata's certificates, read again once if they fail), the issuer,
// destination, recipient, audience, InResponseTo and times; the identity
// comes only from the assertion a verified signature covers. Last, the
// times again with the bridge's skew allowance, and the assertion ID is
// recorded in the store, once.
func (s *SP) Finish(ctx context.Context, flows []Flow, form url.Values) (Identity, error) {
	raw := form.Get("SAMLResponse")
	if raw == "" {
		return Identity{}, fmt.Errorf("%w: no SAMLResponse in the form", ErrInvalid)
	}
	if len(raw) > MaxResponseBytes {
		return Identity{}, fmt.Errorf("%w: the SAMLResponse is %d bytes, more than %d", ErrInvalid, len(raw), MaxResponseBytes)
	}
	if form.Has("SAMLart") || form.Has("SigAlg") || form.Has("Signature") {
		return Identity{}, fmt.Errorf("%w: only the HTTP-POST binding is taken", ErrInvalid)
	}
	doc, err := base64.StdEncoding.DecodeString(strings.TrimSpace(raw))
	if err != nil {
		return Identity{}, fmt.Errorf("%w: the SAMLResponse is not base64", ErrInvalid)
	}
	if err := CheckXML(doc); err != nil {
		return Identity{}, err
	}
	var flow Flow
	if relay := form.Get("RelayState"); relay != "" {
		for _, f := range flows {
			if f.Relay == relay {
				flow = f
			}
		}
	}
	switch {
	case flow.RequestID == "" && !s.cfg.AllowIDPInitiated:
		return Identity{}, fmt.Errorf("%w: no sign-in started in this browser has that RelayState (and IdP-initiated sign-in is off)", ErrBadState)
	case flow.RequestID != "" && !s.cfg.Now().Before(flow.Expires):
		return Identity{}, ErrFlowExpired
	}
	sp, err := s.current()
	if err != nil {
		return Identity{}, err
	}
	var ids []string
	if flow.RequestID != "" {
		ids = []string{flow.RequestID}
	}
	a, err := sp.ParseXMLResponse(doc, ids, s.acs)
	if errors.Is(reason(err), saml.ErrInvalidSignature) && s.refreshAfterSignatureFailure(ctx, sp) {
		sp, _ = s.current()
		a, err = sp.ParseXMLResponse(doc, ids, s.acs)
	}
	if err != nil {
		return Identity{}, classify(err)
	}
	if err := s.checkTimes(a); err != nil {
		return Identity{}, err
	}
	id, err := s.identity(a)
	if err != nil {
		return Identity{}, err
	}
	if flow.RequestID == "" {
		id.Unsolicited = true
	}
	id.Flow = flow
	sum := sha256.Sum256([]byte(issuer(a) + "\x00" + a.ID))
	switch err := s.cfg.Used.UseOnce(ctx, AssertionKind, hex.EncodeToString(sum[:]), s.usedUntil(a)); {
	case errors.Is(err, store.ErrUsed):
		return Identity{}, fmt.Errorf("%w: assertion %s", ErrReplayed, a.ID)
	case err != nil:
		return Identity{}, fmt.Errorf("saml: recording the assertion: %w", err)
	}
	return id, nil
}

// CheckXML refuses what the bridge never takes in a response, before any
// parse that builds a tree: a DTD (<!DOCTYPE>, <!ENTITY>: entity
// expansion), a processing instruction other than the XML declaration,
// and nesting deeper than a response needs.
func CheckXML(doc []byte) error {
	d := xml.NewDecoder(bytes.NewReader(doc))
	depth := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: the response is not well-formed XML: %w", ErrInvalid, err)
		}
		switch t := tok.(type) {
		case xml.Directive:
			return fmt.Errorf("%w: the response carries a DTD or entity declaration", ErrInvalid)
		case xml.ProcInst:
			if t.Target != "xml" {
				return fmt.Errorf("%w: the response carries a processing instruction", ErrInvalid)
			}
		case xml.StartElement:
			if depth++; depth > 64 {
				return fmt.Errorf("%w: the response nests deeper than 64 elements", ErrInvalid)
			}
		case xml.EndElement:
			depth--
		}
	}
}

// reason is the library's own error inside its InvalidResponseError.
func reason(err error) error {
	var ire *saml.InvalidResponseError
	if errors.As(err, &ire) && ire.PrivateErr != nil {
		return ire.PrivateErr
	}
	return err
}

// classify maps the library's refusal to the bridge's classes, keeping its
// words for the log.
func classify(err error) error {
	why := reason(err)
	var bad saml.ErrBadStatus
	switch {
	case errors.As(why, &bad):
		return fmt.Errorf("%w: status %s", ErrDenied, bad.Status)
	case errors.Is(why, saml.ErrRequestIDMismatch):
		return fmt.Errorf("%w: %w", ErrBadState, why)
	case errors.Is(why, saml.ErrExpired):
		return fmt.Errorf("%w: %w", ErrExpired, why)
	case errors.Is(why, saml.ErrNotYetValid):
		return fmt.Errorf("%w: %w", ErrNotYetValid, why)
	}
	return fmt.Errorf("%w: %w", ErrInvalid, why)
}

// checkTimes holds the assertion to the bridge's skew allowance (the
// library allows three minutes).
func (s *SP) checkTimes(a *saml.Assertion) error {
	now := s.cfg.Now()
	if c := a.Conditions; c != nil {
		if !c.NotBefore.IsZero() && now.Before(c.NotBefore.Add(-s.cfg.Skew)) {
			return fmt.Errorf("%w: NotBefore %s is ahead of the bridge's clock by more than %s", ErrNotYetValid, c.NotBefore.UTC().Format(time.RFC3339), s.cfg.Skew)
		}
		if !c.NotOnOrAfter.IsZero() && !now.Before(c.NotOnOrAfter.Add(s.cfg.Skew)) {
			return fmt.Errorf("%w: NotOnOrAfter %s has passed (skew allowed: %s)", ErrExpired, c.NotOnOrAfter.UTC().Format(time.RFC3339), s.cfg.Skew)
		}
	}
	if a.Subject != nil {
		for _, sc := range a.Subject.SubjectConfirmations {
			if d := sc.SubjectConfirmationData; d != nil && !d.NotOnOrAfter.IsZero() && !now.Before(d.NotOnOrAfter.Add(s.cfg.Skew)) {
				return fmt.Errorf("%w: the subject confirmation ended at %s (skew allowed: %s)", ErrExpired, d.NotOnOrAfter.UTC().Format(time.RFC3339), s.cfg.Skew)
			}
		}
	}
	return nil
}

// usedUntil is how long the assertion ID is kept: while the library would
// still take the assertion (its latest deadline plus the library's skew),
// at least the flow's lifetime.
func (s *SP) usedUntil(a *saml.Assertion) time.Time {
	until := a.IssueInstant.Add(saml.MaxIssueDelay)
	if c := a.Conditions; c != nil && c.NotOnOrAfter.After(until) {
		until = c.NotOnOrAfter
	}
	until = until.Add(saml.MaxClockSkew)
	if floor := s.cfg.Now().Add(FlowTTL); until.Before(floor) {
		return floor
	}
	return until
}

func issuer(a *saml.Assertion) string {
	if a.Issuer.Value != "" {
		return a.Issuer.Value
	}
	return "-"
}

// identity reads who signed in from the verified assertion.
func (s *SP) identity(a *saml.Assertion) (Identity, error) {
	attrs := attributes(a)
	id := Identity{
		GivenName:  first(attrs, names(s.cfg.FirstNameAttribute, firstNames)),
		FamilyName: first(attrs, names(s.cfg.LastNameAttribute, lastNames)),
		Name:       first(attrs, fullNames),
		Groups:     all(attrs, names(s.cfg.GroupsAttribute, groupNames)),
	}
	var nameIDFormat string
	if a.Subject != nil && a.Subject.NameID != nil {
		id.NameID, nameIDFormat = strings.TrimSpace(a.Subject.NameID.Value), a.Subject.NameID.Format
	}
	switch {
	case s.cfg.EmailAttribute != "":
		id.Email = first(attrs, []string{s.cfg.EmailAttribute})
	case nameIDFormat == string(saml.EmailAddressNameIDFormat) && id.NameID != "":
		id.Email = id.NameID
	default:
		id.Email = first(attrs, emailNames)
	}
	if id.Email == "" {
		where := "an emailAddress NameID or an attribute named email"
		if s.cfg.EmailAttribute != "" {
			where = "the attribute " + s.cfg.EmailAttribute + " (saml.email_attribute)"
		}
		return Identity{}, fmt.Errorf("%w: the assertion has no email: expected %s", ErrInvalid, where)
	}
	if p := mailaddr.Problem(id.Email); p != "" {
		return Identity{}, fmt.Errorf("%w: the assertion's email: %s", ErrInvalid, truncate(p, 160))
	}
	id.Admin = groupname.In(id.Groups, s.cfg.AdminGroup)
	return id, nil
}

func names(configured string, defaults []string) []string {
	if configured != "" {
		return []string{configured}
	}
	return defaults
}

// attributes are the assertion's attribute values by Name and by
// FriendlyName.
func attributes(a *saml.Assertion) map[string][]string {
	m := map[string][]string{}
	for _, st := range a.AttributeStatements {
		for _, at := range st.Attributes {
			var vals []string
			for _, v := range at.Values {
				if s := strings.TrimSpace(v.Value); s != "" {
					vals = append(vals, s)
				}
			}
			for _, k := range []string{at.Name, at.FriendlyName} {
				if k != "" {
					m[strings.ToLower(k)] = append(m[strings.ToLower(k)], vals...)
				}
			}
		}
	}
	return m
}

func first(attrs map[string][]string, keys []string) string {
	for _, k := range keys {
		if v := attrs[strings.ToLower(k)]; len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

func all(attrs map[string][]string, keys []string) []string {
	for _, k := range keys {
		if v := attrs[strings.ToLower(k)]; len(v) > 0 {
			return v
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// LoadKeyPair reads the bridge's signing certificate and its private key
// (PEM: PKCS#8, PKCS#1 or SEC 1) and checks that they belong together.
func LoadKeyPair(certFile, keyFile string) (crypto.Signer, *x509.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s and %s: %w", certFile, keyFile, err)
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("%s: not a signing key", keyFile)
	}
	switch signer.Public().(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey:
	default:
		return nil, nil, fmt.Errorf("%s: use an RSA or ECDSA key", keyFile)
	}
	return signer, pair.Leaf, nil
}

// Describe says what the metadata in use names, for `ssobridge check`.
func (s *SP) Describe() (entityID, sso string, certs int, err error) {
	sp, err := s.current()
	if err != nil {
		return "", "", 0, err
	}
	return sp.IDPMetadata.EntityID, ssoURL(sp.IDPMetadata), signingCertCount(sp.IDPMetadata), nil
}
