package lti

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/ssobridge/ssobridge/internal/outside"
	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/store"
)

// Names and Role Provisioning Services 2.0: a course's roster, read with
// an OAuth 2.0 client-credentials token the tool asks for with a JWT
// signed by its key (RFC 7523).
const (
	// NRPSScope is the scope of reading a course's memberships.
	NRPSScope      = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
	nrpsMediaType  = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
	assertionType  = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	maxRosterPages = 100
	maxRosterBytes = 8 << 20 // one page
)

// ErrServices: a platform's token endpoint or roster could not be read
// (the launch itself is not affected).
var ErrServices = errors.New("lti: the platform's services could not be read")

// Member is a member of a course as the roster lists it.
type Member struct {
	UserID     string   `json:"user_id"`
	Status     string   `json:"status"` // Active (or empty), Inactive, Deleted
	Name       string   `json:"name"`
	GivenName  string   `json:"given_name"`
	FamilyName string   `json:"family_name"`
	Email      string   `json:"email"`
	Roles      []string `json:"roles"`
}

// Active reports whether the member is active in the course.
func (m Member) Active() bool { return m.Status == "" || strings.EqualFold(m.Status, "Active") }

// Services reads platforms' LTI Advantage services as the tool: tokens
// are cached per platform until they expire. Safe for concurrent use.
type Services struct {
	key ToolKey
	hc  *http.Client
	now func() time.Time

	mu      sync.Mutex
	sources map[string]oauth2.TokenSource // by token URL and client id
}

// NewServices reads services with the tool's key over hc (nil: its own,
// 10 s timeout).
func NewServices(key ToolKey, hc *http.Client, now func() time.Time) *Services {
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	if now == nil {
		now = time.Now
	}
	return &Services{key: key, hc: hc, now: now, sources: map[string]oauth2.TokenSource{}}
}

// assertionSource asks the token endpoint for a token with a fresh client
// assertion each time (a new jti; aud the token URL).
type assertionSource struct {
	s        *Services
	tokenURL string
	clientID string
}

func (a assertionSource) Token() (*oauth2.Token, error) {
	now := a.s.now()
	assertion, err := a.s.key.sign(map[string]any{"iss": a.clientID, "sub": a.clientID, "aud": a.tokenURL,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": randid.Token(16)})
	if err != nil {
		return nil, err
	}
	cfg := clientcredentials.Config{ClientID: a.clientID, TokenURL: a.tokenURL, Scopes: []string{NRPSScope}, AuthStyle: oauth2.AuthStyleInParams,
		EndpointParams: url.Values{"client_assertion_type": {assertionType}, "client_assertion": {assertion}}}
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), oauth2.HTTPClient, a.s.hc), 15*time.Second)
	defer cancel()
	return cfg.Token(ctx)
}

// token is a bearer token for the platform's services (cached until it
// expires).
func (s *Services) token(p Platform) (string, error) {
	if p.TokenURL == "" {
		return "", fmt.Errorf("%w: %s has no token_url (%s)", ErrServices, p.Name, p.settingKey("token_url"))
	}
	k := p.TokenURL + "\x00" + p.ClientID
	s.mu.Lock()
	src, ok := s.sources[k]
	if !ok {
		src = oauth2.ReuseTokenSource(nil, assertionSource{s: s, tokenURL: p.TokenURL, clientID: p.ClientID})
		s.sources[k] = src
	}
	s.mu.Unlock()
	tok, err := src.Token()
	if err != nil {
		return "", fmt.Errorf("%w: the token endpoint of %s: %w", ErrServices, p.Name, err)
	}
	return tok.AccessToken, nil
}

// EachMember reads a course's roster from its memberships URL (the
// launch's NRPS claim), page by page as its Link headers go on (at most
// maxRosterPages pages), and calls fn with each member as it is decoded:
// neither a page nor the roster is ever held whole, so a roster of a
// million members costs what one member does. fn's error stops the read.
func (s *Services) EachMember(ctx context.Context, p Platform, membershipsURL string, fn func(Member) error) error {
	if Origin(membershipsURL) == "" {
		return fmt.Errorf("%w: the memberships URL %s is not https", ErrServices, outside.Quote(membershipsURL))
	}
	next := membershipsURL
	for page := 0; next != ""; page++ {
		if page == maxRosterPages {
			return fmt.Errorf("%w: the roster of %s goes on past %d pages", ErrServices, p.Name, maxRosterPages)
		}
		link, err := s.page(ctx, p, next, fn)
		if err != nil {
			return err
		}
		next = link
		if next != "" && Origin(next) == "" {
			return fmt.Errorf("%w: the roster's next page %s is not https", ErrServices, outside.Quote(next))
		}
	}
	return nil
}

// page reads one page of a roster, calling fn with each member, and
// returns its next page's URL.
func (s *Services) page(ctx context.Context, p Platform, u string, fn func(Member) error) (string, error) {
	tok, err := s.token(p)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrServices, err)
	}
	req.Header.Set("Accept", nrpsMediaType)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := s.hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w: the roster of %s: %w", ErrServices, p.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%w: the roster of %s answered %d", ErrServices, p.Name, resp.StatusCode)
	}
	next, err := NextLink(resp.Header.Values("Link"), u)
	if err != nil {
		return "", fmt.Errorf("%w: the roster of %s: %w", ErrServices, p.Name, err)
	}
	if err := eachListed(io.LimitReader(resp.Body, maxRosterBytes), fn); err != nil {
		var stop stopped
		if errors.As(err, &stop) {
			return "", stop.err
		}
		return "", fmt.Errorf("%w: the roster of %s is not a membership container: %w", ErrServices, p.Name, err)
	}
	return next, nil
}

// stopped carries fn's own error through the decoding.
type stopped struct{ err error }

func (s stopped) Error() string { return s.err.Error() }

// eachListed decodes a membership container's "members" one by one,
// skipping its other keys.
func eachListed(r io.Reader, fn func(Member) error) error {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		if key != "members" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		if err := expectDelim(dec, '['); err != nil {
			return err
		}
		for dec.More() {
			var m Member
			if err := dec.Decode(&m); err != nil {
				return err
			}
			if err := fn(m.bounded()); err != nil {
				return stopped{err}
			}
		}
		if err := expectDelim(dec, ']'); err != nil {
			return err
		}
	}
	return expectDelim(dec, '}')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("expected %q", want)
	}
	return nil
}

// maxMemberName bounds a member's names (an account's names are at most
// 100 characters).
const maxMemberName = 100

// bounded is m with its names cut to what an account keeps.
func (m Member) bounded() Member {
	for _, f := range []*string{&m.Name, &m.GivenName, &m.FamilyName} {
		*f = store.Cut(strings.TrimSpace(*f), maxMemberName)
	}
	return m
}

// NextLink is the URL of rel="next" in Link header values (RFC 8288),
// resolved against base; "" if there is none.
func NextLink(values []string, base string) (string, error) {
	for _, v := range values {
		for _, link := range splitLinks(v) {
			target, params, ok := strings.Cut(link, ">")
			target = strings.TrimSpace(target)
			if !ok || !strings.HasPrefix(target, "<") {
				continue
			}
			for _, param := range strings.Split(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(param), "=")
				if !strings.EqualFold(strings.TrimSpace(k), "rel") {
					continue
				}
				for _, rel := range strings.Fields(strings.Trim(strings.TrimSpace(val), `"`)) {
					if strings.EqualFold(rel, "next") {
						b, err := url.Parse(base)
						if err != nil {
							return "", err
						}
						u, err := b.Parse(target[1:])
						if err != nil {
							return "", fmt.Errorf("a next link that is not a URL: %w", err)
						}
						return u.String(), nil
					}
				}
			}
		}
	}
	return "", nil
}

// splitLinks splits a Link header value at the commas between links (not
// those inside <...> or quotes).
func splitLinks(v string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i, r := range v {
		switch {
		case r == '"':
			quoted = !quoted
		case r == '<' && !quoted:
			depth++
		case r == '>' && !quoted && depth > 0:
			depth--
		case r == ',' && !quoted && depth == 0:
			out = append(out, v[start:i])
			start = i + 1
		}
	}
	return append(out, v[start:])
}

// CheckTokenEndpoint reads a platform's token endpoint as `check` does:
// with the tool's key (key set), it asks for a token as the roster would
// and says whether one was granted; without it (the key kept in the
// store), it asks without a client assertion and expects the OAuth error
// a token endpoint answers, which shows the endpoint is there.
func CheckTokenEndpoint(ctx context.Context, hc *http.Client, p Platform, key *ToolKey) (string, error) {
	if key != nil {
		s := NewServices(*key, hc, nil)
		if _, err := s.token(p); err != nil {
			return "", err
		}
		return "a token was granted to the tool's key", nil
	}
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {NRPSScope}, "client_id": {p.ClientID}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrServices, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w: the token endpoint: %w", ErrServices, err)
	}
	defer resp.Body.Close()
	var answer struct {
		Error string `json:"error"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&answer)
	if (resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnauthorized) && answer.Error != "" {
		return "it answers (" + answer.Error + " without the tool's key, which the store keeps)", nil
	}
	return "", fmt.Errorf("%w: the token endpoint answered %d, not an OAuth 2.0 token endpoint's error", ErrServices, resp.StatusCode)
}
