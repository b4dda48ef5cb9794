package platformsim_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/demo/platformsim"
)

func newPair(tb testing.TB, method apiclient.AuthMethod) (*platformsim.Server, *apiclient.Client) {
	tb.Helper()
	cred := platformsim.NewCredential(true)
	sim, err := platformsim.New(platformsim.Config{Credentials: []platformsim.Credential{cred}})
	require.NoError(tb, err)
	srv := httptest.NewServer(sim)
	tb.Cleanup(srv.Close)
	c, err := apiclient.New(apiclient.Options{BaseURL: srv.URL,
		Credentials: apiclient.Credentials{Method: method, APIKey: cred.Key, APISecret: cred.Secret}})
	require.NoError(tb, err)
	return sim, c
}

// TestClientAndEmulatorAgree runs the client's calls against the
// emulator's independent verifier, with both auth methods.
func TestClientAndEmulatorAgree(t *testing.T) {
	for _, m := range []apiclient.AuthMethod{apiclient.AuthHMAC, apiclient.AuthSimple} {
		t.Run(string(m), func(t *testing.T) {
			sim, c := newPair(t, m)
			ctx := context.Background()
			// "+", "." and non-ASCII must survive the query encoding the
			// signature covers, and a lookup must find the user again.
			for _, email := range []string{"jürgen+o.x@example.com", "zoë@example.com", "plain@example.com"} {
				res, err := c.EnsureUser(ctx, apiclient.NewUser{FirstName: "Zoë", LastName: "Ångström", Email: email})
				require.NoError(t, err, email)
				assert.True(t, res.Created)
				again, err := c.EnsureUser(ctx, apiclient.NewUser{FirstName: "Zoë", LastName: "Ångström", Email: email})
				require.NoError(t, err)
				assert.Equal(t, res.User.UserID, again.User.UserID)
				assert.Len(t, sim.Users(email), 1)
				id, err := strconv.ParseInt(string(res.User.UserID), 10, 64)
				require.NoError(t, err)
				assert.Greater(t, id, int64(1)<<53, "ids beyond float precision survive")
				tok, err := c.IssueLoginToken(ctx, res.User.UserID, apiclient.TokenProperties{RedirectTo: "/editor/projects?x=1&y=ü"})
				require.NoError(t, err)
				assert.Equal(t, platformsim.TokenUnconsumed, sim.TokenState(tok.Token))
			}
		})
	}
}

func TestClientSeesEmulatorFaults(t *testing.T) {
	sim, c := newPair(t, apiclient.AuthHMAC)
	ctx := context.Background()
	sim.InjectFault(platformsim.EndpointCreateUser, platformsim.Fault{Ghost: true, Times: 1})
	res, err := c.EnsureUser(ctx, apiclient.NewUser{FirstName: "G", LastName: "H", Email: "ghost@example.com"})
	require.NoError(t, err)
	assert.Len(t, sim.Users("ghost@example.com"), 1)
	assert.Equal(t, 1, sim.Calls(platformsim.EndpointCreateUser), "no second create after the ghost")
	assert.NotEmpty(t, res.User.UserID)

	sim.SetClockOffset(10 * 60 * 1e9)
	_, err = c.ListUsers(ctx, "", 0, 1)
	require.ErrorIs(t, err, apiclient.ErrClockSkew)
}

// BenchmarkEmulatorListUsers measures signed list-users requests per second
// through loopback HTTP (client and emulator on this machine).
func BenchmarkEmulatorListUsers(b *testing.B) {
	sim, c := newPair(b, apiclient.AuthHMAC)
	for i := range 50 {
		_, err := sim.AddUser("U", "N", fmt.Sprintf("u%d@example.com", i))
		require.NoError(b, err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.ListUsers(context.Background(), "u7@example.com", 0, 20); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkEmulatorIssueToken measures signed token issuance per second.
func BenchmarkEmulatorIssueToken(b *testing.B) {
	sim, c := newPair(b, apiclient.AuthHMAC)
	u, err := sim.AddUser("U", "N", "u@example.com")
	require.NoError(b, err)
	var errs atomic.Int32
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.IssueLoginToken(context.Background(), apiclient.UserID(u.ID), apiclient.TokenProperties{}); err != nil {
				errs.Add(1)
			}
		}
	})
	require.Zero(b, errs.Load())
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
