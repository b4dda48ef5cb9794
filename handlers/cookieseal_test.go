package handlers

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCookieSealer(t *testing.T) {
	now := time.Unix(1_795_000_000, 0)
	clock := func() time.Time { return now }
	s := newCookieSealer(testHashKey, testBlockKey, time.Hour, clock)
	v := s.seal("c", []byte("payload"))

	got, sealed, err := s.open(nil, "c", v)
	require.NoError(t, err)
	assert.Equal(t, "payload", string(got))
	assert.Equal(t, now, sealed)
	assert.NotEqual(t, v, s.seal("c", []byte("payload")), "a fresh nonce every time")
	assert.NotContains(t, v, base64.RawURLEncoding.EncodeToString([]byte("payload")))

	raw, err := base64.RawURLEncoding.DecodeString(v)
	require.NoError(t, err)
	for i := range raw {
		flipped := append([]byte{}, raw...)
		flipped[i] ^= 0x01
		_, _, err := s.open(nil, "c", base64.RawURLEncoding.EncodeToString(flipped))
		require.ErrorIs(t, err, errSealed, "byte %d flipped", i)
	}
	for name, bad := range map[string]string{
		"empty": "", "not base64": "%%%%" + v, "cut": v[:len(v)-2], "too short": v[:20], "padded base64": v + "==", "huge": string(make([]byte, 5000)),
	} {
		_, _, err := s.open(nil, "c", bad)
		assert.ErrorIs(t, err, errSealed, name)
	}
	_, _, err = s.open(nil, "other", v)
	assert.ErrorIs(t, err, errSealed, "the name is bound in")
	_, _, err = newCookieSealer([]byte("another deployment's hash key, 32+"), testBlockKey, time.Hour, clock).open(nil, "c", v)
	assert.ErrorIs(t, err, errSealed, "other keys")

	now = now.Add(time.Hour + time.Second)
	_, _, err = s.open(nil, "c", v)
	assert.ErrorIs(t, err, errSealExpiry, "older than maxAge")
	now = now.Add(-time.Hour - 2*time.Minute)
	_, _, err = s.open(nil, "c", v)
	assert.ErrorIs(t, err, errSealExpiry, "sealed in the future, beyond a minute of skew")
}

func FuzzCookieOpen(f *testing.F) {
	clock := func() time.Time { return time.Unix(1_795_000_000, 0) }
	s := newCookieSealer(testHashKey, testBlockKey, time.Hour, clock)
	f.Add(s.seal("c", []byte("payload")), []byte("payload"))
	f.Add("", []byte{})
	f.Add("AQ", []byte{0})
	f.Fuzz(func(t *testing.T, value string, payload []byte) {
		if got, _, err := s.open(nil, "c", value); err == nil {
			// Only a value this sealer made opens; it gives back what was sealed.
			again, _, err := s.open(nil, "c", s.seal("c", got))
			require.NoError(t, err)
			require.Equal(t, got, again)
		}
		got, _, err := s.open(nil, "c", s.seal("c", payload))
		if len(payload) < 3000 {
			require.NoError(t, err)
			require.Equal(t, string(payload), string(got))
		}
	})
}

// Cookies written by securecookie before the sealer still read: an upgrade
// signs nobody out and breaks no open form. New ones are sealed.
func TestCookiesWrittenBeforeTheSealerStillRead(t *testing.T) {
	f := setup(t)
	ada := f.account("ada@example.com", false)
	c := f.client()
	c.signIn("ada@example.com")
	sealedSession := c.cookie(SessionCookie)
	_, _, err := newCookieSealer(testHashKey, testBlockKey, 0, f.clock.Now).open(nil, SessionCookie, sealedSession)
	require.NoError(t, err, "new cookies are sealed")

	v, err := newSessionManager(SessionConfig{HashKey: testHashKey, BlockKey: testBlockKey}, f.accts, f.clock.Now).read(sealedSession)
	require.NoError(t, err)
	legacy := securecookie.New(testHashKey, testBlockKey)
	legacy.SetSerializer(sessionSerializer{})
	old, err := legacy.Encode(SessionCookie, v.toMap())
	require.NoError(t, err)
	c.setCookie(SessionCookie, old)

	secret := make([]byte, csrfSecretLen)
	oldCSRF := securecookie.New(testHashKey, testBlockKey)
	oldCSRF.SetSerializer(securecookie.NopEncoder{})
	enc, err := oldCSRF.Encode(csrfPlainName, append([]byte{}, secret...))
	require.NoError(t, err)
	c.setCookie(csrfPlainName, enc)

	r := c.post("/launch", url.Values{"_csrf": {mask(secret)}})
	assert.Equal(t, http.StatusSeeOther, r.status, "a launch with both cookies from before the sealer")
	assert.Len(t, f.launcher.made(), 1)
	assert.Equal(t, ada.ID, f.launcher.made()[0].account.ID)

	page := c.get("/")
	require.Equal(t, http.StatusOK, page.status)
	renewed := setCookieHeader(page, csrfPlainName)
	require.NotEmpty(t, renewed, "a page renews the old anti-forgery cookie, sealed")
}
