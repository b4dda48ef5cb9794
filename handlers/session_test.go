package handlers

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/accounts"
)

var (
	testHashKey  = []byte("0123456789abcdef0123456789abcdef")
	testBlockKey = []byte("fedcba9876543210fedcba9876543210")
)

func sessionValues() map[interface{}]interface{} {
	return map[interface{}]interface{}{keyAccount: int64(42), keyEpoch: int64(3), keyIssued: int64(1_795_000_000), keyLastSeen: int64(1_795_000_100)}
}

func TestSessionSerializerRoundTrip(t *testing.T) {
	var ser sessionSerializer
	b, err := ser.Serialize(sessionValues())
	require.NoError(t, err)
	var got map[interface{}]interface{}
	require.NoError(t, ser.Deserialize(b, &got))
	assert.Equal(t, sessionValues(), got)

	for name, bad := range map[string][]byte{"empty": nil, "format": {9, 1, 1, 1, 1}, "truncated": b[:3], "trailing": append(append([]byte{}, b...), 0)} {
		assert.Error(t, ser.Deserialize(bad, &got), name)
	}
	_, err = ser.Serialize(map[interface{}]interface{}{keyAccount: "not a number"})
	assert.Error(t, err)
}

func TestSessionStartAndRead(t *testing.T) {
	now := time.Unix(1_795_000_000, 0)
	m := newSessionManager(SessionConfig{HashKey: testHashKey, BlockKey: testBlockKey, MaxAge: time.Hour}, nil, func() time.Time { return now })
	rec := httptest.NewRecorder()
	require.NoError(t, m.start(httptest.NewRequest("POST", "/login", nil), rec, accounts.Account{ID: 7, SessionEpoch: 2}))
	c := rec.Result().Cookies()[0]
	assert.Equal(t, SessionCookie, c.Name)
	assert.True(t, c.HttpOnly)
	assert.Equal(t, http.SameSiteLaxMode, c.SameSite)
	s, err := m.store.Get(&http.Request{Header: http.Header{"Cookie": {c.String()}}}, SessionCookie)
	require.NoError(t, err)
	assert.Equal(t, int64(7), s.Values[keyAccount])
	assert.Equal(t, int64(2), s.Values[keyEpoch])
}

// BenchmarkSessionDecode compares decoding a session cookie with gob
// (securecookie's default) and with the compact serializer the app uses.
func BenchmarkSessionDecode(b *testing.B) {
	for _, tc := range []struct {
		name string
		ser  securecookie.Serializer
	}{{"gob", securecookie.GobEncoder{}}, {"compact", sessionSerializer{}}} {
		b.Run(tc.name, func(b *testing.B) {
			sc := securecookie.New(testHashKey, testBlockKey).SetSerializer(tc.ser)
			enc, err := sc.Encode(SessionCookie, sessionValues())
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
			v := sessionValues()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sc.Encode(SessionCookie, v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
