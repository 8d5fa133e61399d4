package store

import (
	"context"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

var _ user.APIKeys = (*Memory)(nil)

// apiKeys is the [user.APIKeys] part of a Memory store, guarded by its
// mutex: key id -> key.
type apiKeys map[string]*user.APIKey

// dropAPIKeys forgets the user's keys and returns how many there were.
// The caller holds the lock.
func (ks apiKeys) dropAPIKeys(userID string) int {
	n := 0
	for id, k := range ks {
		if k.UserID == userID {
			delete(ks, id)
			n++
		}
	}
	return n
}

// CreateAPIKey implements [user.APIKeys]: the sweep of the user's expired
// keys, the bound and the insert under the store's lock.
func (m *Memory) CreateAPIKey(ctx context.Context, k *user.APIKey, max int) error {
	return lockedDo(ctx, &m.mu, func() error {
		c := k.Clone()
		c.CreatedAt = c.CreatedAt.Truncate(time.Millisecond)
		c.ExpiresAt = c.ExpiresAt.Truncate(time.Millisecond)
		c.LastUsedAt = c.LastUsedAt.Truncate(time.Millisecond)
		if _, ok := m.apiKeys[c.ID]; ok {
			return fmt.Errorf("store: create api key: id in use: %w", user.ErrConflict)
		}
		n := 0
		for id, o := range m.apiKeys {
			if o.UserID != c.UserID {
				continue
			}
			if !o.ExpiresAt.After(c.CreatedAt) {
				delete(m.apiKeys, id)
				continue
			}
			n++
		}
		if n >= max {
			return fmt.Errorf("store: create api key: %w", user.ErrTooManyAPIKeys)
		}
		m.apiKeys[c.ID] = c
		return nil
	})
}

// APIKeyByID implements [user.APIKeys].
func (m *Memory) APIKeyByID(ctx context.Context, id string) (*user.APIKey, error) {
	return locked(ctx, &m.mu, func() (*user.APIKey, error) {
		return lookup(m.apiKeys, id, "api key by id", (*user.APIKey).Clone)
	})
}

// ListAPIKeys implements [user.APIKeys].
func (m *Memory) ListAPIKeys(ctx context.Context, userID string) ([]*user.APIKey, error) {
	return locked(ctx, &m.mu, func() ([]*user.APIKey, error) {
		return owned(m.apiKeys, userID, (*user.APIKey).Clone, func(k *user.APIKey) (string, time.Time, string) {
			return k.UserID, k.CreatedAt, k.ID
		}), nil
	})
}

// TouchAPIKey implements [user.APIKeys].
func (m *Memory) TouchAPIKey(ctx context.Context, id string, at time.Time) error {
	return lockedDo(ctx, &m.mu, func() error {
		k, ok := m.apiKeys[id]
		if !ok {
			return notFound("touch api key")
		}
		k.LastUsedAt = at.Truncate(time.Millisecond)
		return nil
	})
}

// RevokeAPIKey implements [user.APIKeys].
func (m *Memory) RevokeAPIKey(ctx context.Context, userID, id string) error {
	return lockedDo(ctx, &m.mu, func() error {
		k, ok := m.apiKeys[id]
		if !ok || k.UserID != userID {
			return notFound("revoke api key")
		}
		delete(m.apiKeys, id)
		return nil
	})
}

// RevokeAPIKeys implements [user.APIKeys].
func (m *Memory) RevokeAPIKeys(ctx context.Context, userID string) (int, error) {
	return locked(ctx, &m.mu, func() (int, error) {
		return m.apiKeys.dropAPIKeys(userID), nil
	})
}
