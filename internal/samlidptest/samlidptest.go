// Package samlidptest runs a real SAML 2.0 identity provider in-process
// for tests: crewjam/saml's samlidp, on 127.0.0.1, with users and service
// providers added through its own admin API, and a client that signs in
// at it as a browser does (the AuthnRequest redirect, the login form) and
// returns the auto-submitting response form without posting it, so a test
// can post it as it is, altered, or somewhere else.
package samlidptest

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/crewjam/saml/samlidp"
)

// IdP is a running identity provider.
type IdP struct {
	URL    string // its base URL as browsers reach it: /metadata, /sso, /login
	admin  string // its base URL on loopback, for the test's own calls
	Server *samlidp.Server
	srv    *httptest.Server
	down   atomic.Bool
	mu     sync.Mutex
	key    *rsa.PrivateKey
	cert   *x509.Certificate
}

// Start runs an IdP over http on 127.0.0.1 until the test ends.
func Start(t testing.TB) *IdP { return start(t, "") }

// StartTLS runs an IdP over https (httptest's certificate) that browsers
// reach as host (a name the browser resolves to 127.0.0.1), so that it is
// another site than the service provider.
func StartTLS(t testing.TB, host string) *IdP { return start(t, host) }

func start(t testing.TB, host string) *IdP {
	t.Helper()
	i := &IdP{}
	i.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if i.down.Load() {
			http.Error(w, "down for the test", http.StatusServiceUnavailable)
			return
		}
		i.mu.Lock()
		h := i.Server
		i.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	if host == "" {
		i.srv.Start()
		i.URL = i.srv.URL
	} else {
		i.srv.StartTLS()
		_, port, _ := net.SplitHostPort(i.srv.Listener.Addr().String())
		i.URL = "https://" + net.JoinHostPort(host, port)
	}
	i.admin = i.srv.URL
	t.Cleanup(i.srv.Close)
	u, _ := url.Parse(i.URL)
	i.key, i.cert = KeyPair(t, "test IdP")
	s, err := samlidp.New(samlidp.Options{URL: *u, Key: i.key, Certificate: i.cert, Store: &samlidp.MemoryStore{},
		Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	i.Server = s
	return i
}

// quiet drops the IdP's log lines (its errors reach the test as pages).
type quiet struct{}

func (quiet) Printf(string, ...any)     {}
func (quiet) Print(...any)              {}
func (quiet) Println(...any)            {}
func (quiet) Fatal(v ...any)            { panic(fmt.Sprint(v...)) }
func (quiet) Fatalf(f string, v ...any) { panic(fmt.Sprintf(f, v...)) }
func (quiet) Fatalln(v ...any)          { panic(fmt.Sprint(v...)) }
func (quiet) Panic(v ...any)            { panic(fmt.Sprint(v...)) }
func (quiet) Panicf(f string, v ...any) { panic(fmt.Sprintf(f, v...)) }
func (quiet) Panicln(v ...any)          { panic(fmt.Sprint(v...)) }

// MetadataURL is where the IdP publishes its metadata.
func (i *IdP) MetadataURL() string { return i.URL + "/metadata" }

// Metadata is the IdP's metadata as it is now.
func (i *IdP) Metadata(t testing.TB) []byte {
	t.Helper()
	resp, err := i.srv.Client().Get(i.admin + "/metadata")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the IdP's metadata: %s %v", resp.Status, err)
	}
	return b
}

// SetDown makes every request answer 503 (true) or be served again.
func (i *IdP) SetDown(down bool) { i.down.Store(down) }

// Rollover gives the IdP a new signing key and certificate: its metadata
// lists the new one, and it signs with it from now on.
func (i *IdP) Rollover(t testing.TB) {
	t.Helper()
	key, cert := KeyPair(t, "test IdP, rolled over")
	i.mu.Lock()
	defer i.mu.Unlock()
	i.Server.IDP.Key, i.Server.IDP.Certificate = key, cert
}

// KeyPair makes an RSA key and a self-signed certificate for it.
func KeyPair(t testing.TB, name string) (*rsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert
}

// User is a user of the IdP.
type User struct {
	Name, Password, Email, GivenName, Surname string
	Groups                                    []string
}

// AddUser adds (or replaces) a user.
func (i *IdP) AddUser(t testing.TB, u User) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"password": u.Password, "email": u.Email, "given_name": u.GivenName,
		"surname": u.Surname, "groups": u.Groups})
	i.put(t, "/users/"+url.PathEscape(u.Name), "application/json", body)
}

// AddService registers a service provider by its metadata.
func (i *IdP) AddService(t testing.TB, id string, metadata []byte) {
	t.Helper()
	i.put(t, "/services/"+url.PathEscape(id), "application/samlmetadata+xml", metadata)
}

func (i *IdP) put(t testing.TB, path, contentType string, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, i.admin+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	resp, err := i.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("PUT %s: %s: %s", path, resp.Status, b)
	}
}

// Form is the IdP's answer as a browser gets it: the form that would post
// itself to the service provider.
type Form struct {
	Action string
	Values url.Values // SAMLResponse, RelayState
}

// SignIn follows authnURL (the service provider's redirect to the IdP's
// SSO URL) with c, signs in with the login form and returns the response
// form. c keeps the IdP's session in its cookie jar, if it has one.
func SignIn(c *http.Client, authnURL, user, password string) (Form, error) {
	resp, err := c.Get(authnURL)
	if err != nil {
		return Form{}, err
	}
	page, err := formOf(resp)
	if err != nil {
		return Form{}, err
	}
	if page.Values.Has("SAMLResponse") { // the IdP's session was still open
		return page, nil
	}
	page.Values.Set("user", user)
	page.Values.Set("password", password)
	resp, err = c.PostForm(page.Action, page.Values)
	if err != nil {
		return Form{}, err
	}
	f, err := formOf(resp)
	if err == nil && !f.Values.Has("SAMLResponse") {
		err = fmt.Errorf("the IdP did not answer with a response form (wrong password?)")
	}
	return f, err
}

// formOf reads the first form of an HTML page with its inputs' values.
func formOf(resp *http.Response) (Form, error) {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2000))
		return Form{}, fmt.Errorf("%s answered %s: %s", resp.Request.URL, resp.Status, strings.TrimSpace(string(b)))
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		return Form{}, err
	}
	form := doc.Find("form").First()
	if form.Length() == 0 {
		return Form{}, fmt.Errorf("%s: no form on the page", resp.Request.URL)
	}
	action, _ := form.Attr("action")
	u, err := resp.Request.URL.Parse(action)
	if err != nil {
		return Form{}, err
	}
	f := Form{Action: u.String(), Values: url.Values{}}
	form.Find("input").Each(func(_ int, in *goquery.Selection) {
		if name, ok := in.Attr("name"); ok {
			v, _ := in.Attr("value")
			f.Values.Set(name, v)
		}
	})
	return f, nil
}

// AddShortcut lets a signed-in user start an IdP-initiated sign-in at
// /login/<name> for the service provider entityID.
func (i *IdP) AddShortcut(t testing.TB, name, entityID string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"service_provider": entityID})
	i.put(t, "/shortcuts/"+url.PathEscape(name), "application/json", body)
}

// Unsolicited follows an IdP-initiated sign-in URL with c (whose jar holds
// the IdP's session) and returns the response form.
func Unsolicited(c *http.Client, u string) (Form, error) {
	resp, err := c.Get(u)
	if err != nil {
		return Form{}, err
	}
	return formOf(resp)
}
