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

// threeParts is a user store of exactly three parts of the contract, as an
// app that creates its accounts itself and adds TOTP and logout everywhere
// has: no Registration, no verification, no password flows.
type threeParts struct {
	user.Accounts
	user.TwoFactor
	user.SessionVersions
}

// TestThreePartStoreConformance: the suite runs on exactly the parts a
// store has, making its users through the app's own way in (WithSeed).
func TestThreePartStoreConformance(t *testing.T) {
	var seeded int
	storetest.RunUserStore(t, func(t *testing.T) threeParts {
		m := store.NewMemory(store.MemoryConfig{})
		return threeParts{m, m, m}
	}, storetest.WithSeed(func(t *testing.T, s user.Accounts, u *user.User) *user.User {
		seeded++
		// The app's own insert: here the memory store under the parts.
		created, err := s.(threeParts).Accounts.(*store.Memory).Create(t.Context(), u)
		if err != nil {
			t.Fatalf("seed %s: %v", u.Email, err)
		}
		return created
	}))
	if seeded == 0 {
		t.Error("the suite never used the seed")
	}
}
