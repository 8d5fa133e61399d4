package storetest_test

import (
	"testing"

	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/store/storetest"
)

// newUserStore returns a fresh, empty user store for one subtest.
// Its result type is the store's own (or any interface of core/user); the
// suite tests every part of the contract the store implements.
func newUserStore(t *testing.T) *store.Memory {
	return store.NewMemory(store.MemoryConfig{})
}

// newLimitStore returns a fresh, empty rate-limit store for one subtest,
// on the suite's clock so that windows pass without sleeping.
func newLimitStore(t *testing.T, clock *storetest.Clock) ratelimit.Store {
	s := ratelimit.NewMemoryStore(ratelimit.MemoryConfig{Now: clock.Now})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// This example is a store's test file. The store here is authkit's own
// memory store; a store of yours opens a fresh, empty database (a schema or
// table prefix of its own) in each call and drops it in t.Cleanup.
func Example() {
	// In the store's test file:
	//
	//	func TestUserStore(t *testing.T) {
	//		storetest.RunUserStore(t, newUserStore)
	//	}
	//
	//	func TestLimitStore(t *testing.T) {
	//		storetest.RunLimitStore(t, newLimitStore, storetest.LimitOptions{})
	//	}
	//
	// A store that keeps its own time, such as Redis, ignores the clock and
	// passes storetest.LimitOptions{RealTime: true}. A user store without
	// user.Registration (the app creates its accounts) passes
	// storetest.WithSeed, how the app puts a user in.
	var (
		_ func(*testing.T, func(*testing.T) *store.Memory, ...storetest.Option) = storetest.RunUserStore[*store.Memory]
		_ func(*testing.T) *store.Memory                                        = newUserStore
		_ storetest.LimitStoreFactory                                           = newLimitStore
	)
}
