package handlers

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCookieSealer(t *testing.T) {
	now := time.Unix(1_795_000_000, 0)
	clock := func() time.Time { return now }
	s := newCookieSealer(purposeSession, SessionKeys{testHashKey, testBlockKey}, SessionKeys{}, time.Hour, clock)
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
		"line breaks the decoder skips": "AX0" + strings.Repeat("\r", 60) + "0", "only line breaks": strings.Repeat("\n", 80),
	} {
		_, _, err := s.open(nil, "c", bad)
		assert.ErrorIs(t, err, errSealed, name)
	}
	_, _, err = s.open(nil, "other", v)
	assert.ErrorIs(t, err, errSealed, "the name is bound in")
	_, _, err = newCookieSealer(purposeSession, SessionKeys{[]byte("another deployment's hash key, 32+"), testBlockKey}, SessionKeys{}, time.Hour, clock).open(nil, "c", v)
	assert.ErrorIs(t, err, errSealed, "other keys")

	now = now.Add(time.Hour + time.Second)
	_, _, err = s.open(nil, "c", v)
	assert.ErrorIs(t, err, errSealExpiry, "older than maxAge")
	now = now.Add(-time.Hour - 2*time.Minute)
	_, _, err = s.open(nil, "c", v)
	assert.ErrorIs(t, err, errSealExpiry, "sealed in the future, beyond a minute of skew")
}

// Every purpose seals under a key of its own: a value sealed for one (a
// SAML flow, a waiting launch's URL) never opens as another's (a session),
// whatever name it is given; the session's key is the one sessions had
// before the purposes were separated (no one is signed out by it).
func TestSealPurposesHaveKeysOfTheirOwn(t *testing.T) {
	clock := func() time.Time { return time.Unix(1_795_000_000, 0) }
	keys := SessionKeys{testHashKey, testBlockKey}
	purposes := []sealPurpose{purposeSession, purposeCSRF, purposeWaiting, "oidc flow", "saml flow", "lti flow", purposeGrant}
	for _, from := range purposes {
		v := newCookieSealer(from, keys, SessionKeys{}, time.Hour, clock).seal("name", []byte("payload"))
		for _, to := range purposes {
			_, _, err := newCookieSealer(to, keys, SessionKeys{}, time.Hour, clock).open(nil, "name", v)
			if from == to {
				assert.NoError(t, err, "%s opens its own", from)
			} else {
				assert.ErrorIs(t, err, errSealed, "sealed for %s, opened as %s", from, to)
			}
		}
	}
	assert.Equal(t, "ssobridge cookie seal v1", purposeSession.hkdfInfo(), "the sessions' derivation is unchanged")

	// JSON through the flows' sealer, and nothing else opens it.
	s := newCookieSealer("saml flow", keys, SessionKeys{}, time.Hour, clock)
	v, err := s.SealJSON("f", map[string]string{"relay": "r1"})
	require.NoError(t, err)
	var got map[string]string
	require.NoError(t, s.OpenJSON("f", v, &got))
	assert.Equal(t, "r1", got["relay"])
	assert.ErrorIs(t, newCookieSealer("oidc flow", keys, SessionKeys{}, time.Hour, clock).OpenJSON("f", v, &got), errSealed)
}

func FuzzCookieOpen(f *testing.F) {
	clock := func() time.Time { return time.Unix(1_795_000_000, 0) }
	s := newCookieSealer(purposeSession, SessionKeys{testHashKey, testBlockKey}, SessionKeys{}, time.Hour, clock)
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

// Rotating the session keys signs nobody out: with the old keys as the
// previous ones, a session and a form from before the rotation still
// work, and new cookies are sealed under the new keys only. Once the
// previous keys are dropped, the old cookies no longer open. A cookie
// written by securecookie (no release ever wrote one) is not read.
func TestSessionKeyRotation(t *testing.T) {
	f := setup(t)
	ada := f.account("ada@example.com", false)
	before := f.client()
	before.signIn("ada@example.com")
	token := before.csrf("/")

	newHash, newBlock := []byte("the new hash key, at least 32 bytes long"), []byte("new block key, 32 bytes long....")
	f.reconfigure(func(d *Deps) {
		d.Sessions.PreviousHashKey, d.Sessions.PreviousBlockKey = d.Sessions.HashKey, d.Sessions.BlockKey
		d.Sessions.HashKey, d.Sessions.BlockKey = newHash, newBlock
	})
	r := before.post("/launch", url.Values{"_csrf": {token}})
	require.Equal(t, http.StatusSeeOther, r.status, "a session and a form from before the rotation")
	require.Len(t, f.launcher.made(), 1)
	assert.Equal(t, ada.ID, f.launcher.made()[0].account.ID)

	after := f.client()
	after.signIn("ada@example.com")
	v := after.cookie(SessionCookie)
	_, _, err := newCookieSealer(purposeSession, SessionKeys{newHash, newBlock}, SessionKeys{}, 0, f.clock.Now).open(nil, SessionCookie, v)
	assert.NoError(t, err, "new cookies are sealed under the new keys")
	_, _, err = newCookieSealer(purposeSession, SessionKeys{testHashKey, testBlockKey}, SessionKeys{}, 0, f.clock.Now).open(nil, SessionCookie, v)
	assert.ErrorIs(t, err, errSealed, "and not under the old ones")

	f.reconfigure(func(d *Deps) { d.Sessions.PreviousHashKey, d.Sessions.PreviousBlockKey = nil, nil })
	assert.Equal(t, http.StatusOK, after.get("/").status, "a session sealed under the new keys")
	r = before.get("/")
	assert.Equal(t, http.StatusSeeOther, r.status, "the previous keys are gone")
	assert.Equal(t, "/login?expired=1", r.header.Get("Location"))

	m := newSessionManager(SessionConfig{HashKey: newHash, BlockKey: newBlock}, sessionRules(f.accts, f.clock.Now), f.clock.Now)
	sv, err := m.read(v)
	require.NoError(t, err)
	legacy := securecookie.New(newHash, newBlock)
	legacy.SetSerializer(sessionSerializer{})
	old, err := legacy.Encode(SessionCookie, sv.toMap())
	require.NoError(t, err)
	after.setCookie(SessionCookie, old)
	assert.Equal(t, http.StatusSeeOther, after.get("/").status, "a securecookie cookie is not read")
}
