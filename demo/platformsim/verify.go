package platformsim

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"time"
)

// dateLayout is the only Date format the platform accepts.
const dateLayout = "Mon, 02 Jan 2006 15:04:05 UTC"

// authenticate checks the Authorization (and, for HMAC, Date) of r against
// the spec. It returns the credential, or a reason for a 401.
func (s *Server) authenticate(r *http.Request, body []byte) (Credential, string) {
	values := r.Header.Values("Authorization")
	if len(values) != 1 || values[0] == "" {
		return Credential{}, "Authorization header missing"
	}
	scheme, rest, ok := strings.Cut(values[0], " ")
	if !ok || rest == "" || strings.HasPrefix(rest, " ") || strings.ContainsAny(rest, " \t\r\n") {
		return Credential{}, "Authorization header malformed: want '<scheme> <credential>' with exactly one space"
	}
	switch scheme {
	case s.cfg.SchemeSimple:
		return s.verifySimple(rest)
	case s.cfg.SchemeHMAC:
		return s.verifyHMAC(r, rest, body)
	default:
		return Credential{}, "unknown Authorization scheme"
	}
}

func (s *Server) verifySimple(secret string) (Credential, string) {
	var found Credential
	ok := false
	// Compare against every secret so timing does not tell which matched.
	for _, c := range s.cfg.Credentials {
		if subtle.ConstantTimeCompare([]byte(c.Secret), []byte(secret)) == 1 {
			found, ok = c, true
		}
	}
	if !ok {
		return Credential{}, "invalid API secret"
	}
	return found, ""
}

func (s *Server) verifyHMAC(r *http.Request, cred string, body []byte) (Credential, string) {
	key, sig, ok := strings.Cut(cred, ":")
	if !ok || key == "" || sig == "" {
		return Credential{}, "Authorization header malformed: want '<key>:<signature>'"
	}
	dates := r.Header.Values("Date")
	if len(dates) != 1 {
		return Credential{}, "Date header missing"
	}
	date := dates[0]
	t, err := time.Parse(dateLayout, date)
	if err != nil || t.Format(dateLayout) != date {
		return Credential{}, "Date header must look like 'Mon, 02 Jan 2006 15:04:05 UTC'"
	}
	if d := s.now().Sub(t); d > s.cfg.Skew || d < -s.cfg.Skew {
		return Credential{}, "Date is outside the accepted clock skew"
	}
	c, known := s.creds[key]
	// Verify even for an unknown key, so timing does not reveal keys.
	secret := c.Secret
	if !known {
		secret = "unknown-key-placeholder"
	}
	sum := md5.Sum(body)
	stringToSign := r.Method + "\n" + hex.EncodeToString(sum[:]) + "\n" + date + "\n" + requestURL(r)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(stringToSign))
	want := m.Sum(nil)
	got, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(want, got) || !known {
		return Credential{}, "signature does not verify"
	}
	return c, ""
}

// requestURL is the full URL as received: scheme, Host, and the raw
// request target (escaped path and query exactly as on the wire).
func requestURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.RequestURI
}
