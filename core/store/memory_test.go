package store_test

import (
	"testing"

	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/core/user"
)

func TestMemoryConformance(t *testing.T) {
	storetest.RunUserStore(t, func(t *testing.T) user.Store {
		return store.NewMemory(store.MemoryConfig{})
	})
}

// newMemoryLimitStore is the limit suites' factory of the in-memory store.
func newMemoryLimitStore(t *testing.T, clock *storetest.Clock) ratelimit.Store {
	s := ratelimit.NewMemoryStore(ratelimit.MemoryConfig{Now: clock.Now})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestMemoryLimitStoreConformance(t *testing.T) {
	storetest.RunLimitStore(t, newMemoryLimitStore, storetest.LimitOptions{})
}

func TestMemoryLimitRefunderConformance(t *testing.T) {
	storetest.RunLimitRefunder(t, newMemoryLimitStore, storetest.LimitOptions{})
}

func TestMemorySessionsConformance(t *testing.T) {
	storetest.RunSessionStore(t, func(t *testing.T) *store.MemorySessions {
		return store.NewMemorySessions(store.MemoryConfig{})
	})
}
