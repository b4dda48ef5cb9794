package apiclient

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// AuthMethod selects how requests are authenticated.
type AuthMethod string

// The two authentication methods of the Partner API.
const (
	AuthHMAC   AuthMethod = "hmac"
	AuthSimple AuthMethod = "simple"
)

// Default scheme names; the real platform may spell them its own way.
const (
	DefaultSchemeHMAC   = "SVC"
	DefaultSchemeSimple = "SVCSIMPLE"
)

// DateLayout is the Date header format the platform requires: RFC 1123
// style with the literal suffix "UTC" (not "GMT").
const DateLayout = "Mon, 02 Jan 2006 15:04:05"

// FormatDate renders t as the platform's Date header value.
func FormatDate(t time.Time) string {
	return t.UTC().Format(DateLayout) + " UTC"
}

// Credentials are what the platform issued to the partner.
type Credentials struct {
	Method       AuthMethod
	APIKey       string
	APISecret    string
	SchemeHMAC   string // defaults to DefaultSchemeHMAC
	SchemeSimple string // defaults to DefaultSchemeSimple
}

// Signer authenticates requests. It holds the secret and never prints it.
type Signer struct {
	creds      Credentials
	authPrefix string // "SVC key:" or "SVCSIMPLE secret"
	macs       sync.Pool
	date       atomic.Pointer[cachedDate]
}

// cachedDate saves formatting the Date header again within one second.
type cachedDate struct {
	unix int64
	text string
}

// NewSigner validates the credentials and returns a signer.
func NewSigner(c Credentials) (*Signer, error) {
	if c.SchemeHMAC == "" {
		c.SchemeHMAC = DefaultSchemeHMAC
	}
	if c.SchemeSimple == "" {
		c.SchemeSimple = DefaultSchemeSimple
	}
	switch c.Method {
	case AuthHMAC:
		if c.APIKey == "" {
			return nil, fmt.Errorf("apiclient: HMAC method needs an API key")
		}
	case AuthSimple:
	default:
		return nil, fmt.Errorf("apiclient: unknown auth method %q (want %q or %q)", c.Method, AuthHMAC, AuthSimple)
	}
	if c.APISecret == "" {
		return nil, fmt.Errorf("apiclient: API secret is empty")
	}
	for _, s := range []string{c.SchemeHMAC, c.SchemeSimple} {
		if strings.ContainsAny(s, " \t\r\n:") {
			return nil, fmt.Errorf("apiclient: scheme name %q must be one word", s)
		}
	}
	sg := &Signer{creds: c}
	if c.Method == AuthSimple {
		sg.authPrefix = c.SchemeSimple + " " + c.APISecret
	} else {
		sg.authPrefix = c.SchemeHMAC + " " + c.APIKey + ":"
	}
	key := []byte(c.APISecret)
	sg.macs.New = func() any { return &macState{mac: hmac.New(sha256.New, key), buf: make([]byte, 0, 512)} }
	return sg, nil
}

// Method reports the authentication method in use.
func (s *Signer) Method() AuthMethod { return s.creds.Method }

// Scheme reports the Authorization scheme name in use.
func (s *Signer) Scheme() string {
	if s.creds.Method == AuthSimple {
		return s.creds.SchemeSimple
	}
	return s.creds.SchemeHMAC
}

// KeyID reports the API key (not secret) for diagnostics.
func (s *Signer) KeyID() string { return s.creds.APIKey }

// String hides the secret from fmt and loggers.
func (s *Signer) String() string {
	return fmt.Sprintf("Signer{method=%s scheme=%s key=%s}", s.creds.Method, s.Scheme(), s.creds.APIKey)
}

// Sign sets Date and Authorization on req. body must be the exact bytes
// that will be sent (nil for none). now is the signing time.
func (s *Signer) Sign(req *http.Request, body []byte, now time.Time) {
	date := s.formatDate(now)
	// Direct map writes: the keys are canonical already.
	req.Header["Date"] = []string{date}
	if s.creds.Method == AuthSimple {
		req.Header["Authorization"] = []string{s.authPrefix}
		return
	}
	st := s.macs.Get().(*macState)
	st.mac.Reset()
	st.buf = appendStringToSign(st.buf[:0], req.Method, body, date, req.URL)
	st.mac.Write(st.buf)
	var sum [sha256.Size]byte
	mac := st.mac.Sum(sum[:0])
	s.macs.Put(st)
	auth := make([]byte, 0, len(s.authPrefix)+base64.StdEncoding.EncodedLen(sha256.Size))
	auth = append(auth, s.authPrefix...)
	auth = base64.StdEncoding.AppendEncode(auth, mac)
	req.Header["Authorization"] = []string{string(auth)}
}

func (s *Signer) formatDate(now time.Time) string {
	unix := now.Unix()
	if c := s.date.Load(); c != nil && c.unix == unix {
		return c.text
	}
	text := FormatDate(now)
	s.date.Store(&cachedDate{unix: unix, text: text})
	return text
}

// macState is a keyed HMAC and a buffer for the string to sign, reused
// across requests.
type macState struct {
	mac hash.Hash
	buf []byte
}

// StringToSign joins verb, md5hex(body), date and the full URL with LF.
func StringToSign(method string, body []byte, date, fullURL string) string {
	return string(append(appendSignPrefix(nil, method, body, date), fullURL...))
}

// appendSignPrefix appends "VERB\nmd5hex(body)\nDate\n".
func appendSignPrefix(b []byte, method string, body []byte, date string) []byte {
	sum := md5.Sum(body)
	b = append(b, method...)
	b = append(b, '\n')
	b = hex.AppendEncode(b, sum[:])
	b = append(b, '\n')
	b = append(b, date...)
	return append(b, '\n')
}

// appendStringToSign appends the string to sign to b without building the
// full URL as a separate string.
func appendStringToSign(b []byte, method string, body []byte, date string, u *url.URL) []byte {
	b = appendSignPrefix(b, method, body, date)
	b = append(b, u.Scheme...)
	b = append(b, "://"...)
	b = append(b, u.Host...)
	b = append(b, escapedPath(u)...)
	if u.RawQuery != "" || u.ForceQuery {
		b = append(b, '?')
		b = append(b, u.RawQuery...)
	}
	return b
}

// FullURL is the URL exactly as Go's HTTP client puts it on the wire:
// scheme://host[:port] + escaped path + ?raw query.
func FullURL(u *url.URL) string {
	s := u.Scheme + "://" + u.Host + escapedPath(u)
	if u.RawQuery != "" || u.ForceQuery {
		s += "?" + u.RawQuery
	}
	return s
}

// escapedPath is the path as RequestURI writes it.
func escapedPath(u *url.URL) string {
	if u.RawPath == "" && u.Path != "" && !needsEscape(u.Path) {
		return u.Path // the common case, without EscapedPath's allocations
	}
	if p := u.EscapedPath(); p != "" {
		return p
	}
	return "/"
}

// needsEscape reports whether path has a byte that EscapedPath would encode.
func needsEscape(path string) bool {
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_.~/$&+,:;=@", c) >= 0: // what url.EscapedPath leaves as is
		default:
			return true
		}
	}
	return false
}
