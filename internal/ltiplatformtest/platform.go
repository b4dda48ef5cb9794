// Package ltiplatformtest runs the sample LMS (samplelms) for tests on an
// httptest server: plain http on loopback, or https under a host name of
// its own (a site other than the tool's), with a helper that answers an
// authorization request as a browser would see it.
package ltiplatformtest

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/go-jose/go-jose/v4"

	"net/http/httptest"

	"github.com/ssobridge/ssobridge/demo/samplelms"
)

// The role URIs of LTI Core's vocabulary the tests use.
const (
	RoleLearner       = samplelms.RoleLearner
	RoleInstructor    = samplelms.RoleInstructor
	RoleAdministrator = samplelms.RoleAdministrator
)

// User is someone the platform knows, by login_hint.
type User = samplelms.User

// Platform is the running platform.
type Platform struct {
	*samplelms.LMS
	Server *httptest.Server
}

// Start serves a platform on loopback; tool is the tool's base URL
// (its login at /lti/login, its redirect URI /lti/launch).
func Start(t testing.TB, tool string) *Platform {
	t.Helper()
	p := &Platform{LMS: samplelms.New(tool, nil)}
	p.KeepIssued = true
	p.Server = httptest.NewServer(p.Handler())
	t.Cleanup(p.Server.Close)
	p.SetURL(p.Server.URL)
	p.Issuer = p.Server.URL
	return p
}

// StartTLS serves the platform over https (httptest's certificate), as
// browsers reach it at https://<host>:<port> (a name of their own mapped
// to loopback: a site other than the tool's). The tool reads its key set
// at 127.0.0.1 (JWKSURL) with Server.Client().
func StartTLS(t testing.TB, tool, host string) *Platform {
	t.Helper()
	p := &Platform{LMS: samplelms.New(tool, nil)}
	p.KeepIssued = true
	p.Server = httptest.NewTLSServer(p.Handler())
	t.Cleanup(p.Server.Close)
	_, port, _ := strings.Cut(strings.TrimPrefix(p.Server.URL, "https://"), ":")
	p.SetURL("https://" + host + ":" + port)
	p.Issuer = p.URL()
	return p
}

// JWKSURL is the platform's key set, at the address the tool reads it.
func (p *Platform) JWKSURL() string { return p.Server.URL + samplelms.JWKSPath }

// Answer is what the platform's page posts back to the tool for an
// authorization request (the URL the tool sent the browser to): the
// fields of the form it submits by itself, as a browser would post them.
func (p *Platform) Answer(t testing.TB, authRequest string) url.Values {
	t.Helper()
	form, err := p.AnswerForm(authRequest)
	if err != nil {
		t.Fatal(err)
	}
	return form
}

// AnswerForm is Answer for a caller that is not the test's goroutine (a
// load of many browsers): the error instead of failing the test.
func (p *Platform) AnswerForm(authRequest string) (url.Values, error) {
	resp, err := p.Server.Client().Get(authRequest)
	if err != nil {
		return nil, fmt.Errorf("the platform's authorization endpoint: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the platform's authorization endpoint answered %d", resp.StatusCode)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("the platform's page: %w", err)
	}
	form := url.Values{}
	doc.Find("form input").Each(func(_ int, s *goquery.Selection) { form.Set(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	if form.Get("id_token") == "" {
		return nil, errors.New("the platform's page posts no id_token")
	}
	return form, nil
}

// SignWith signs claims with any key and algorithm (a forgery's).
func SignWith(alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	return samplelms.SignWith(alg, key, kid, claims)
}
