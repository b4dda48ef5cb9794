// Package storetest is the conformance suite of store.Store: every stack
// production runs (SQLite and PostgreSQL, each behind the guard, bare and
// with the cache in front) runs the same sub-tests, in a fixed order, so a
// stack cannot break a promise the others keep (the model is Dex's
// storage/conformance).
package storetest

import (
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/store"
)

// Open returns a new, empty store for one sub-test, closed by the test's
// cleanup; now is the store's clock.
type Open func(t *testing.T, now func() time.Time) store.Store

// Now is the clock every sub-test gives its store.
func Now() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }

// Run runs every conformance sub-test against stores made by open, by
// the store's role they test (store.Accounts, store.Sessions, ...; each
// role's sub-tests are in the file of its name), each on a new store.
func Run(t *testing.T, open Open) {
	for _, r := range roles() {
		t.Run(r.role, func(t *testing.T) {
			for _, tc := range r.tests {
				t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t, Now)) })
			}
		})
	}
}

// subtest is one conformance sub-test on one store.
type subtest struct {
	name string
	fn   func(t *testing.T, s store.Store)
}

// roles are the sub-tests by role, in a fixed order.
func roles() []struct {
	role  string
	tests []subtest
} {
	return []struct {
		role  string
		tests []subtest
	}{
		{"Accounts", []subtest{
			{"accounts", testAccounts},
			{"one address, one account", testOneAddressOneAccount},
			{"bulk all-or-none", testBulkCreate},
			{"delete", testDeleteAccount},
			{"admin rules", testAdminRules},
			{"list accounts", testListAccounts},
			{"concurrent writes", testConcurrentWrites},
			{"update account", testUpdateAccount},
			{"accounts by address and external id", testAccountFilters},
		}},
		{"Groups", []subtest{
			{"groups", testGroups},
			{"the admin role follows the admin group", testFollowAdminGroup},
		}},
		{"Sessions", []subtest{
			{"sessions epoch", testSessionEpoch},
			{"sessions", testSessions},
		}},
		{"SingleUse", []subtest{
			{"single-use ids", func(t *testing.T, s store.Store) { singleUse(t, s, s, Now()) }},
		}},
		{"Identities", []subtest{
			{"outside identities", testIdentities},
			{"outside identities move with their source", testMoveIdentities},
		}},
		{"KeptValues", []subtest{
			{"kept values", testKeptValues},
		}},
		{"ModuleRecords", []subtest{
			{"module records", testModuleRecords},
			{"module records are bounded", testModuleRecordsBounded},
		}},
		{"PasswordLinks", []subtest{
			{"set-password links", testPasswordLinks},
		}},
		{"Links", []subtest{
			{"links", testLinks},
			{"one platform user, one account", testOnePlatformUserOneAccount},
			{"provisioning lock", func(t *testing.T, s store.Store) { provisioningLock(t, s, s) }},
		}},
		{"AuditLog", []subtest{
			{"audit", testAudit},
			{"retention in bounded batches", testPruneInBatches},
		}},
		{"SignIns", []subtest{
			{"regulation bans an email", testRegulationPerEmail},
			{"regulation bans an IP", testRegulationPerIP},
			{"regulation admits no more than the limit in parallel", testRegulationParallel},
			{"regulation lists, lifts and prunes bans", testRegulationListLiftPrune},
		}},
		{"PlatformState", []subtest{
			{"platform budget", func(t *testing.T, s store.Store) { platformBudget(t, s, s) }},
		}},
		{"Tickets", []subtest{
			{"launch tickets", func(t *testing.T, s store.Store) { tickets(t, s, s) }},
			{"launch tickets go with their sessions", testTicketsOfEndedSessions},
		}},
		{"Provisioning", []subtest{
			{"provisioning job", func(t *testing.T, s store.Store) { provisionJob(t, s, s) }},
			{"unlinked accounts", testUnlinked},
		}},
		{"every key and text", []subtest{
			{"text from outside is kept bounded", testOutsideTextBounded},
			{"keys of any text", testKeysOfAnyText},
		}},
	}
}

// OpenPair returns two stores on one new, empty database (as two instances
// would open it), closed by the test's cleanup.
type OpenPair func(t *testing.T, now func() time.Time) (store.Store, store.Store)

// RunShared runs the sub-tests of what instances sharing a database must
// agree on: what one writes, the other reads at once; regulation and the
// provisioning lock hold across them.
func RunShared(t *testing.T, pair OpenPair) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, a, b store.Store)
	}{
		{"regulation admits no more than the limit across instances", func(t *testing.T, a, b store.Store) { regulationParallel(t, a, b) }},
		{"provisioning lock across instances", provisioningLock},
		{"a session made on one is valid on the other at once", testSessionAcross},
		{"a ban on one holds on the other", testBanAcross},
		{"a single-use id used on one is used on the other", func(t *testing.T, a, b store.Store) { singleUse(t, a, b, time.Now()) }},
		{"the platform budget is shared", platformBudget},
		{"a ticket made on one is answered on the other", tickets},
		{"one provisioning job across instances", provisionJob},
		{"the admin role followed on one is seen on the other", followAdminGroup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := pair(t, time.Now)
			tc.fn(t, a, b)
		})
	}
}
