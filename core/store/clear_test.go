package store_test

import (
	"testing"

	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/store/storetest"
)

func TestMemoryLimitClearerConformance(t *testing.T) {
	storetest.RunLimitClearer(t, func(t *testing.T, clock *storetest.Clock) ratelimit.Store {
		// Small, so that Clear empties shards and their tables shrink.
		s := ratelimit.NewMemoryStore(ratelimit.MemoryConfig{Now: clock.Now, Capacity: 64})
		t.Cleanup(func() { _ = s.Close() })
		return s
	}, storetest.LimitOptions{})
}
