package handlers

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/ssobridge/ssobridge/internal/seal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every purpose seals under a key of its own: a value sealed for one (a
// SAML flow, a waiting launch's URL) never opens as another's (a session),
// whatever name it is given; the session's key is the one sessions had
// before the purposes were separated (no one is signed out by it).
func TestSealPurposesHaveKeysOfTheirOwn(t *testing.T) {
	clock := func() time.Time { return time.Unix(1_795_000_000, 0) }
	keys := SessionKeys{Hash: testHashKey, Block: testBlockKey}
	purposes := []seal.Purpose{purposeSession, purposeCSRF, purposeWaiting, "oidc flow", "saml flow", "lti flow", purposeGrant}
	for _, from := range purposes {
		v := seal.New(from, keys, SessionKeys{}, time.Hour, clock).Seal("name", []byte("payload"))
		for _, to := range purposes {
			_, _, err := seal.New(to, keys, SessionKeys{}, time.Hour, clock).Open(nil, "name", v)
			if from == to {
				assert.NoError(t, err, "%s opens its own", from)
			} else {
				assert.ErrorIs(t, err, seal.ErrNotSealed, "sealed for %s, opened as %s", from, to)
			}
		}
	}

	// JSON through the flows' sealer, and nothing else opens it.
	s := seal.New("saml flow", keys, SessionKeys{}, time.Hour, clock)
	v, err := s.SealJSON("f", map[string]string{"relay": "r1"})
	require.NoError(t, err)
	var got map[string]string
	require.NoError(t, s.OpenJSON("f", v, &got))
	assert.Equal(t, "r1", got["relay"])
	assert.ErrorIs(t, seal.New("oidc flow", keys, SessionKeys{}, time.Hour, clock).OpenJSON("f", v, &got), seal.ErrNotSealed)
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
	_, _, err := seal.New(purposeSession, SessionKeys{Hash: newHash, Block: newBlock}, SessionKeys{}, 0, f.clock.Now).Open(nil, SessionCookie, v)
	assert.NoError(t, err, "new cookies are sealed under the new keys")
	_, _, err = seal.New(purposeSession, SessionKeys{Hash: testHashKey, Block: testBlockKey}, SessionKeys{}, 0, f.clock.Now).Open(nil, SessionCookie, v)
	assert.ErrorIs(t, err, seal.ErrNotSealed, "and not under the old ones")

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
