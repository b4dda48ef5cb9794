package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/pgtest"
	"github.com/ssobridge/ssobridge/platformsim"
	"github.com/ssobridge/ssobridge/portal"
)

// rush sends n new users through the portal handoff at once, spread over
// the instances, and returns the status of each arrival.
func rush(t *testing.T, apps []*testApp, n int, prefix string) []int {
	t.Helper()
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			br := apps[i%len(apps)].browser(t)
			br.c.Timeout = 2 * time.Minute
			tok, err := portal.SignHS256([]byte(e2ePortalSecret), e2ePortalIssuer, e2ePortalAud,
				portal.Claims{Email: fmt.Sprintf("%s%03d@example.com", prefix, i), GivenName: "New", FamilyName: "Pupil"}, time.Now())
			if err != nil {
				statuses[i] = -1
				return
			}
			resp, err := br.c.Get(br.base + "/sso/jwt?jwt=" + tok)
			if err != nil {
				statuses[i] = -1
				return
			}
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	return statuses
}

// TestPlatformBudgetIsShared: two instances on one PostgreSQL database
// against a platform that allows 20 requests a second (429 with
// Retry-After past it), platform.rate_limit 20: a rush of new users (three
// calls each) is paced by both together, so every user lands and almost
// no call meets a 429; each instance counted the other and took half.
func TestPlatformBudgetIsShared(t *testing.T) {
	if testing.Short() {
		t.Skip("paces 180 platform calls at 20/s")
	}
	sim := sharedPlatform(t, func(c *platformsim.Config) { c.RateLimit, c.RateBurst = 20, 20 })
	o := testOptions{postgres: pgtest.DSN(t), platform: sim, realPacing: true,
		yaml: portalYAML, platformYAML: "  rate_limit: 20\n"}
	apps := []*testApp{startTestApp(t, o), startTestApp(t, o)}
	require.Eventually(t, func() bool {
		return apps[0].budget.Stats().Live == 2 && apps[1].budget.Stats().Live == 2
	}, 5*time.Second, 10*time.Millisecond, "the instances count each other")
	assert.Equal(t, 10.0, apps[0].budget.Stats().Share)

	const users = 60
	sim.Server.ResetCalls()
	start := time.Now()
	statuses := rush(t, apps, users, "rush")
	took := time.Since(start)
	landed, byStatus := 0, map[int]int{}
	for _, s := range statuses {
		byStatus[s]++
		if s == http.StatusSeeOther {
			landed++
		}
	}
	calls := sim.Server.CallCounts()
	total, limited := 0, sim.Server.RateLimited()
	for _, n := range calls {
		total += n
	}
	t.Logf("%d new users at once on 2 instances, platform 20/s: %d landed in %s (answers %v); %d platform calls, %d answered 429 (%.1f%%)",
		users, landed, took.Round(100*time.Millisecond), byStatus, total, limited, 100*float64(limited)/float64(max(1, total)))
	assert.Equal(t, users, landed, "every user lands")
	assert.LessOrEqual(t, float64(limited), 0.05*float64(total), "at most 5%% of the calls meet a 429")
	for i := range users {
		assert.Len(t, sim.Server.Users(fmt.Sprintf("rush%03d@example.com", i)), 1)
	}
}
