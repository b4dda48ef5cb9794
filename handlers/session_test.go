package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts"
	"github.com/ssobridge/ssobridge/accounts/signin"
	"github.com/ssobridge/ssobridge/store"
)

var (
	testHashKey  = []byte("0123456789abcdef0123456789abcdef")
	testBlockKey = []byte("fedcba9876543210fedcba9876543210")
)

func testSessionMap() map[interface{}]interface{} {
	return map[interface{}]interface{}{keyAccount: int64(42), keyEpoch: int64(3), keyIssued: int64(1_795_000_000), keyLastSeen: int64(1_795_000_100),
		keyToken: "cmFuZG9tLXRva2VuLW9mLTQzLWNoYXJzLXJhbmRvbS10b2tlbg", keyHandoff: true, keyNoConsole: false}
}

func TestSessionSerializerRoundTrip(t *testing.T) {
	var ser sessionSerializer
	b, err := ser.Serialize(testSessionMap())
	require.NoError(t, err)
	var got map[interface{}]interface{}
	require.NoError(t, ser.Deserialize(b, &got))
	assert.Equal(t, testSessionMap(), got)

	for name, bad := range map[string][]byte{"empty": nil, "format": {9, 1, 1, 1, 1}, "format 1 (no token)": {1, 84, 6, 2, 2},
		"truncated": b[:3], "token cut": b[:len(b)-1], "trailing": append(append([]byte{}, b...), 0)} {
		assert.Error(t, ser.Deserialize(bad, &got), name)
	}

	// Format 2 (no flags byte): read as a handoff session, which launches
	// but does not open the console.
	v, _ := sessionValuesOf(testSessionMap())
	v.handoff = false
	v3, err := v.encode()
	require.NoError(t, err)
	v2 := append([]byte{sessionFormatV2}, v3[1:len(v3)-len(v.token)-2]...)
	v2 = append(append(v2, byte(len(v.token))), v.token...)
	old, err := decodeSession(v2)
	require.NoError(t, err)
	assert.Equal(t, v.account, old.account)
	assert.Equal(t, v.token, old.token)
	assert.True(t, old.handoff)
	// Format 3 (no no-console bit): read as a session that opens no
	// console until the password upgrades it.
	v3old := append([]byte{}, v3...)
	v3old[0] = sessionFormatV3
	three, err := decodeSession(v3old)
	require.NoError(t, err)
	assert.False(t, three.handoff)
	assert.True(t, three.noConsole)
	v.noConsole = true
	v4, err := v.encode()
	require.NoError(t, err)
	four, err := decodeSession(v4)
	require.NoError(t, err)
	assert.True(t, four.noConsole)
	assert.False(t, four.handoff)
	bad := append([]byte{}, v3...)
	bad[len(v3)-len(v.token)-2] = 7
	_, err = decodeSession(bad)
	assert.Error(t, err, "unknown flags")
	_, err = ser.Serialize(map[interface{}]interface{}{keyAccount: "not a number"})
	assert.Error(t, err)
	noToken := testSessionMap()
	noToken[keyToken] = ""
	_, err = ser.Serialize(noToken)
	assert.Error(t, err, "a session without its token is not written")
}

func TestSessionStartAndRead(t *testing.T) {
	now := time.Unix(1_795_000_000, 0).UTC()
	st := newTestStore(t, func() time.Time { return now })
	acct, err := st.CreateAccount(t.Context(), store.NewAccount{Email: "ada@example.com", FirstName: "Ada", LastName: "Lovelace", PasswordHash: "hash:x"})
	require.NoError(t, err)
	acct.SessionEpoch = 2
	m := newSessionManager(SessionConfig{HashKey: testHashKey, BlockKey: testBlockKey, MaxAge: time.Hour}, sessionRules(st, func() time.Time { return now }), func() time.Time { return now })
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/login", nil)
	req.Header.Set("User-Agent", "TestBrowser/1.0")
	_, err = m.start(context.Background(), req, rec, acct, sessionFlags{})
	require.NoError(t, err)
	c := rec.Result().Cookies()[0]
	assert.Equal(t, SessionCookie, c.Name)
	assert.True(t, c.HttpOnly)
	assert.Equal(t, http.SameSiteLaxMode, c.SameSite)
	s, err := m.store.Get(&http.Request{Header: http.Header{"Cookie": {c.String()}}}, SessionCookie)
	require.NoError(t, err)
	assert.Equal(t, acct.ID, s.Values[keyAccount])
	assert.Equal(t, int64(2), s.Values[keyEpoch])
	token, _ := s.Values[keyToken].(string)
	rec2, err := st.SessionByID(context.Background(), accounts.SessionID(token))
	require.NoError(t, err, "the session is recorded under its token's ID")
	assert.Equal(t, store.Session{ID: accounts.SessionID(token), AccountID: acct.ID, CreatedAt: now, LastSeenAt: now, UserAgent: "TestBrowser/1.0"}, rec2)
	assert.NotContains(t, c.Value, token, "the token travels encrypted")
}

// BenchmarkSessionDecode compares opening a session cookie as the app does
// (sealed, into sessionValues) with securecookie, gob (its default) and the
// compact serializer (the legacy codec).
func BenchmarkSessionDecode(b *testing.B) {
	b.Run("sealed", func(b *testing.B) {
		m := newSessionManager(SessionConfig{HashKey: testHashKey, BlockKey: testBlockKey}, sessionRules(newTestStore(b, time.Now), time.Now), time.Now)
		v, _ := sessionValuesOf(testSessionMap())
		enc, err := sealedSessionCodec{m.sealer}.Encode(SessionCookie, v.toMap())
		require.NoError(b, err)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.read(enc); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, tc := range []struct {
		name string
		ser  securecookie.Serializer
	}{{"gob", securecookie.GobEncoder{}}, {"compact", sessionSerializer{}}} {
		b.Run(tc.name, func(b *testing.B) {
			sc := securecookie.New(testHashKey, testBlockKey).SetSerializer(tc.ser)
			enc, err := sc.Encode(SessionCookie, testSessionMap())
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				var v map[interface{}]interface{}
				if err := sc.Decode(SessionCookie, enc, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSessionEncode is the same for encoding (sign-in, idle refresh).
func BenchmarkSessionEncode(b *testing.B) {
	for _, tc := range []struct {
		name string
		ser  securecookie.Serializer
	}{{"gob", securecookie.GobEncoder{}}, {"compact", sessionSerializer{}}} {
		b.Run(tc.name, func(b *testing.B) {
			sc := securecookie.New(testHashKey, testBlockKey).SetSerializer(tc.ser)
			v := testSessionMap()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sc.Encode(SessionCookie, v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSessionRules: what voids a session, for pages (a redirect to the
// sign-in page) and actions (the 401 page).
func TestSessionRules(t *testing.T) {
	tests := []struct {
		name   string
		breakS func(f *fixture, c *client, acct store.Account)
	}{
		{"idle too long", func(f *fixture, _ *client, _ store.Account) { f.clock.Advance(2*time.Hour + time.Minute) }},
		{"older than max age, never idle", func(f *fixture, c *client, _ store.Account) {
			for range 11 {
				f.clock.Advance(time.Hour)
				require.Equal(f.t, http.StatusOK, c.get("/").status)
			}
			f.clock.Advance(time.Hour + time.Minute) // 12h01 after sign-in, idle 1h01
		}},
		{"account disabled", func(f *fixture, _ *client, a store.Account) {
			require.NoError(f.t, f.accts.SetDisabled(f.t.Context(), a.ID, true))
		}},
		{"signed out elsewhere", func(f *fixture, _ *client, a store.Account) {
			require.NoError(f.t, f.accts.EndSessions(f.t.Context(), a.ID))
		}},
		{"password changed", func(f *fixture, _ *client, a store.Account) {
			require.NoError(f.t, f.accts.SetPasswordHash(f.t.Context(), a.ID, "hash:new one"))
		}},
		{"tampered cookie", func(_ *fixture, c *client, _ store.Account) {
			c.setCookie(SessionCookie, "tampered"+c.cookie(SessionCookie))
		}},
		{"cookie of another deployment", func(f *fixture, c *client, _ store.Account) {
			other := setup(f.t, func(d *Deps) { d.Sessions.HashKey = []byte("another deployment's hash key, 32+") })
			other.account("ada@example.com", false)
			oc := other.client()
			oc.signIn("ada@example.com")
			c.setCookie(SessionCookie, oc.cookie(SessionCookie))
		}},
		{"account deleted", func(f *fixture, _ *client, a store.Account) {
			require.NoError(f.t, f.accts.DeleteAccount(f.t.Context(), a.ID))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t)
			ada := f.account("ada@example.com", false)
			f.account("keeper@example.com", true)
			c := f.client()
			c.signIn("ada@example.com")
			require.Equal(t, http.StatusOK, c.get("/").status)
			tok := c.csrf("/")
			tt.breakS(f, c, ada)

			r := c.post("/launch", url.Values{"_csrf": {tok}})
			assert.Equal(t, http.StatusUnauthorized, r.status, "an action: the 401 page")
			assert.Equal(t, "session-expired", r.class())
			assert.Contains(t, setCookieHeader(r, SessionCookie), "Max-Age=0", "the void cookie is dropped")
			assert.Empty(t, f.launcher.made())

			c.setCookie(SessionCookie, "tampered")
			r = c.get("/")
			assert.Equal(t, http.StatusSeeOther, r.status, "a page: to sign-in")
			assert.Equal(t, "/login?expired=1", r.header.Get("Location"))
		})
	}
}

// The session's row is written at most once a minute per session,
// whatever cookie the client sends back: one that replays the cookie of its
// sign-in (never storing the renewed one) costs no write per request.
func TestSessionTouchDecidedByTheStoredRow(t *testing.T) {
	f := setup(t)
	f.reconfigure(func(d *Deps) { d.Store.Sessions = f.accts }) // its writes counted
	f.account("ada@example.com", false)
	c := f.client()
	c.signIn("ada@example.com")
	old := c.cookie(SessionCookie)
	require.NotEmpty(t, old)
	replay := func() *response {
		req, _ := http.NewRequest("GET", c.base+"/", nil)
		req.AddCookie(&http.Cookie{Name: SessionCookie, Value: old})
		return f.client().do(req)
	}
	f.accts.touches.Store(0)
	for minute := range 3 {
		f.clock.Advance(61 * time.Second)
		for range 20 {
			require.Equal(t, http.StatusOK, replay().status, "minute %d", minute)
		}
		assert.Equal(t, int32(minute+1), f.accts.touches.Load(), "one write in minute %d, not one per request", minute)
	}
	assert.Contains(t, f.client().get("/metrics").body, "ssobridge_session_touches_total 3", "the writes are counted where an operator sees them")
}

// The idle clock is refreshed by activity, at most once a minute.
func TestSessionIdleRefresh(t *testing.T) {
	f := setup(t)
	f.account("ada@example.com", false)
	c := f.client()
	c.signIn("ada@example.com")
	r := c.get("/")
	assert.Empty(t, setCookieHeader(r, SessionCookie), "no rewrite within the minute")
	for range 3 {
		f.clock.Advance(time.Hour + 59*time.Minute)
		r = c.get("/")
		require.Equal(t, http.StatusOK, r.status, "activity keeps it alive")
		assert.NotEmpty(t, setCookieHeader(r, SessionCookie), "the idle clock was refreshed")
	}
}

// sessionRules are the sign-in rules over st, as New builds them.
func sessionRules(st store.Store, now func() time.Time) *signin.Service {
	return signin.New(signin.Config{Accounts: st, Sessions: st, Links: st, Now: now})
}
