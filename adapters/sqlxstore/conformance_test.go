package sqlxstore_test

import (
	"testing"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/store/storetest"
)

// TestConformance runs the store module's conformance suites on every
// backend (the limit store's with its Refunder and Clearer parts): each
// subtest gets empty tables of its own (suiteDB), the backends side by
// side.
func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			pool := openPool(t, b)
			t.Run("UserStore", func(t *testing.T) {
				storetest.RunUserStore(t, func(t *testing.T) *sqlxstore.UserStore {
					return suiteDB(t, pool, sqlxstore.Config{}).Users()
				})
			})
			t.Run("LimitStore", func(t *testing.T) { storetest.RunLimitStore(t, limitsOn(pool), storetest.LimitOptions{}) })
			t.Run("LimitRefunder", func(t *testing.T) { storetest.RunLimitRefunder(t, limitsOn(pool), storetest.LimitOptions{}) })
			t.Run("LimitClearer", func(t *testing.T) { storetest.RunLimitClearer(t, limitsOn(pool), storetest.LimitOptions{}) })
			t.Run("SessionStore", func(t *testing.T) {
				storetest.RunSessionStore(t, func(t *testing.T) *sqlxstore.SessionStore {
					return suiteDB(t, pool, sqlxstore.Config{CleanupInterval: -1}).Sessions()
				})
			})
			t.Run("TrustedDeviceStore", func(t *testing.T) {
				storetest.RunSessionStore(t, func(t *testing.T) *sqlxstore.SessionStore {
					return suiteDB(t, pool, sqlxstore.Config{CleanupInterval: -1}).TrustedDevices()
				})
			})
		})
	}
}

// TestSQLiteMemory runs the suites on sqlite::memory:, where the whole
// pool is one connection: transactions and racing goroutines queue for it.
func TestSQLiteMemory(t *testing.T) {
	pool, err := sqlxopen.Open(t.Context(), "sqlite::memory:", sqlxstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Close() })
	recycleOn(t, pool)
	if got := pool.SQLX().Stats().MaxOpenConnections; got != 1 {
		t.Fatalf("sqlite::memory: pool allows %d connections, want 1", got)
	}
	storetest.RunUserStore(t, func(t *testing.T) *sqlxstore.UserStore {
		return suiteDB(t, pool, sqlxstore.Config{}).Users()
	})
	storetest.RunLimitStore(t, limitsOn(pool), storetest.LimitOptions{})
	storetest.RunLimitRefunder(t, limitsOn(pool), storetest.LimitOptions{})
}

// limitsOn returns the constructor the limit suites take: the limit store
// of empty tables on pool (suiteDB), on the suite's clock, with no cleanup loop.
func limitsOn(pool *sqlxstore.DB) func(*testing.T, *storetest.Clock) ratelimit.Store {
	return func(t *testing.T, clock *storetest.Clock) ratelimit.Store {
		return suiteDB(t, pool, sqlxstore.Config{Now: clock.Now, CleanupInterval: -1}).Limits()
	}
}
