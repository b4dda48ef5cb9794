package samplelms

import (
	"bufio"
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Names and Role Provisioning Services, as a platform offers them: an
// OAuth 2.0 token endpoint that grants client credentials to a tool that
// proves itself with a JWT signed by its key (checked against the tool's
// key set), and the course's memberships, page by page.
const (
	TokenPath       = "/token"
	MembershipsPath = "/nrps/course-7/memberships"
	nrpsScope       = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
	nrpsMediaType   = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
)

// Member is someone on the course's roster.
type Member struct {
	UserID, Email, GivenName, FamilyName, Status string
	Roles                                        []string
}

// nrps is the platform's roster service state.
type nrps struct {
	size     int                // the roster's members
	member   func(i int) Member // the ith member (0-based)
	pageSize int
	tokens   map[string]time.Time // access tokens and when they expire
	jtis     map[string]bool      // client assertions used
	grants   int                  // tokens granted
	reads    int                  // roster pages served
	refusal  string               // why the last token request was refused
	down     bool                 // the token endpoint answers 503
	offered  bool                 // launches carry the NRPS claim
}

// OfferRoster makes launches carry the NRPS claim (the course's
// memberships URL) and sets the roster, served pageSize members a page.
func (l *LMS) OfferRoster(members []Member, pageSize int) {
	list := slices.Clone(members)
	l.OfferGeneratedRoster(len(list), pageSize, func(i int) Member { return list[i] })
}

// OfferGeneratedRoster offers a roster of size members made on demand by
// member (a roster of a million costs nothing until it is read, and each
// page is written member by member).
func (l *LMS) OfferGeneratedRoster(size, pageSize int, member func(i int) Member) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roster.size, l.roster.member, l.roster.pageSize, l.roster.offered = size, member, max(pageSize, 1), true
}

// SetTokenDown makes the token endpoint answer 503 (an outage), or serve
// again.
func (l *LMS) SetTokenDown(down bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roster.down = down
}

// RosterStats are how many tokens the platform granted and roster pages
// it served, and why it last refused a token ("" if it did not).
func (l *LMS) RosterStats() (grants, reads int, refusal string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.roster.grants, l.roster.reads, l.roster.refusal
}

// TokenURL is the token endpoint a tool registers.
func (l *LMS) TokenURL() string { return l.URL() + TokenPath }

// nrpsClaims add the NRPS claim to a launch's claims.
func (l *LMS) nrpsClaims(c map[string]any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.roster.offered {
		c["https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"] = map[string]any{
			"context_memberships_url": l.public + MembershipsPath, "service_versions": []string{"2.0"}}
	}
}

// serveToken grants a token for a client assertion (RFC 7523) signed by
// a key of the tool's key set: iss and sub the client id, aud this
// endpoint, unexpired, its jti never seen; the scope NRPS's.
func (l *LMS) serveToken(w http.ResponseWriter, r *http.Request) {
	refuse := func(status int, code, why string) {
		l.mu.Lock()
		l.roster.refusal = why
		l.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": why})
	}
	l.mu.Lock()
	down := l.roster.down
	l.mu.Unlock()
	if down {
		refuse(http.StatusServiceUnavailable, "temporarily_unavailable", "the token endpoint is down")
		return
	}
	if r.PostFormValue("grant_type") != "client_credentials" || r.PostFormValue("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		refuse(http.StatusBadRequest, "unsupported_grant_type", "client_credentials with a JWT client assertion only")
		return
	}
	if !slices.Contains(strings.Fields(r.PostFormValue("scope")), nrpsScope) {
		refuse(http.StatusBadRequest, "invalid_scope", "the scope must hold NRPS's")
		return
	}
	tok, err := jwt.ParseSigned(r.PostFormValue("client_assertion"), []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		refuse(http.StatusUnauthorized, "invalid_client", "the client assertion is not an RS256 JWT")
		return
	}
	set, err := l.toolKeys(r.Context())
	if err != nil {
		refuse(http.StatusUnauthorized, "invalid_client", err.Error())
		return
	}
	keys := set.Key(tok.Headers[0].KeyID)
	var std jwt.Claims
	if len(keys) == 0 || tok.Claims(keys[0].Key, &std) != nil {
		refuse(http.StatusUnauthorized, "invalid_client", "the client assertion does not verify against the tool's key set")
		return
	}
	l.mu.Lock()
	now, public, client := l.now(), l.public, l.ClientID
	l.mu.Unlock()
	switch {
	case std.Issuer != client || std.Subject != client:
		refuse(http.StatusUnauthorized, "invalid_client", "iss and sub must be the client id")
		return
	case !std.Audience.Contains(public + TokenPath):
		refuse(http.StatusUnauthorized, "invalid_client", "aud must be the token endpoint")
		return
	case std.Expiry == nil || std.ValidateWithLeeway(jwt.Expected{Time: now}, 30*time.Second) != nil:
		refuse(http.StatusUnauthorized, "invalid_client", "the client assertion is outside its time")
		return
	case std.ID == "":
		refuse(http.StatusUnauthorized, "invalid_client", "no jti")
		return
	}
	l.mu.Lock()
	if l.roster.jtis == nil {
		l.roster.jtis, l.roster.tokens = map[string]bool{}, map[string]time.Time{}
	}
	if l.roster.jtis[std.ID] {
		l.mu.Unlock()
		refuse(http.StatusUnauthorized, "invalid_client", "the client assertion's jti was used before")
		return
	}
	l.roster.jtis[std.ID] = true
	access := "access-" + strconv.Itoa(len(l.roster.tokens)+1) + "-" + std.ID
	l.roster.tokens[access] = now.Add(time.Hour)
	l.roster.grants++
	l.roster.refusal = ""
	l.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600, "scope": nrpsScope})
}

// serveMemberships is the course's roster for a granted token, a page at
// a time (?page=, from 1), the next page named by a Link header.
func (l *LMS) serveMemberships(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	exp, ok := l.roster.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	if !ok || !l.now().Before(exp) {
		http.Error(w, "invalid token", http.StatusUnauthorized)
		return
	}
	if r.Header.Get("Accept") != nrpsMediaType {
		http.Error(w, "Accept must be "+nrpsMediaType, http.StatusNotAcceptable)
		return
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	from := min((page-1)*l.roster.pageSize, l.roster.size)
	to := min(from+l.roster.pageSize, l.roster.size)
	l.roster.reads++
	if to < l.roster.size {
		w.Header().Set("Link", "<"+l.public+MembershipsPath+"?page="+strconv.Itoa(page+1)+`>; rel="next"`)
	}
	w.Header().Set("Content-Type", nrpsMediaType)
	head, _ := json.Marshal(map[string]any{"id": l.public + MembershipsPath, "context": map[string]any{"id": "course-7", "title": l.Course}})
	bw := bufio.NewWriter(w)
	_, _ = bw.Write(head[:len(head)-1]) // the container's keys, then its members one by one
	_, _ = bw.WriteString(`,"members":[`)
	enc := json.NewEncoder(bw)
	for i := from; i < to; i++ {
		m := l.roster.member(i)
		entry := map[string]any{"user_id": m.UserID, "roles": m.Roles, "given_name": m.GivenName, "family_name": m.FamilyName,
			"name": strings.TrimSpace(m.GivenName + " " + m.FamilyName), "status": cmp.Or(m.Status, "Active")}
		if m.Email != "" {
			entry["email"] = m.Email
		}
		if i > from {
			_ = bw.WriteByte(',')
		}
		_ = enc.Encode(entry)
	}
	_, _ = bw.WriteString("]}\n")
	_ = bw.Flush()
}
