package store

import (
	"context"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

var _ user.Identities = (*Memory)(nil)

// identities is the [user.Identities] part of a Memory store, guarded by
// its mutex.
type identities struct {
	links     map[string]*user.Identity // link id -> identity
	bySubject map[[2]string]string      // {provider, subject} -> link id
}

func newIdentities() identities {
	return identities{links: map[string]*user.Identity{}, bySubject: map[[2]string]string{}}
}

// dropIdentities forgets a deleted user's identities. The caller holds the
// lock.
func (ids *identities) dropIdentities(userID string) {
	for k, l := range ids.links {
		if l.UserID == userID {
			delete(ids.bySubject, [2]string{l.Provider, l.Subject})
			delete(ids.links, k)
		}
	}
}

// AddIdentity implements [user.Identities].
func (m *Memory) AddIdentity(ctx context.Context, id *user.Identity) (*user.Identity, error) {
	return locked(ctx, &m.mu, func() (*user.Identity, error) {
		c := id.Clone()
		if c.ID == "" {
			c.ID = user.NewID()
		}
		if c.LinkedAt.IsZero() {
			c.LinkedAt = m.now()
		}
		c.LinkedAt = c.LinkedAt.Truncate(time.Millisecond)
		if _, ok := m.byID[c.UserID]; !ok {
			return nil, notFound("add identity")
		}
		key := [2]string{c.Provider, c.Subject}
		if _, ok := m.bySubject[key]; ok {
			return nil, fmt.Errorf("store: add identity: linked already: %w", user.ErrConflict)
		}
		if _, ok := m.links[c.ID]; ok {
			return nil, fmt.Errorf("store: add identity: id in use: %w", user.ErrConflict)
		}
		m.links[c.ID] = c
		m.bySubject[key] = c.ID
		return c.Clone(), nil
	})
}

// IdentityBySubject implements [user.Identities].
func (m *Memory) IdentityBySubject(ctx context.Context, provider, subject string) (*user.Identity, error) {
	return locked(ctx, &m.mu, func() (*user.Identity, error) {
		k, ok := m.bySubject[[2]string{provider, subject}]
		if !ok {
			return nil, notFound("identity by subject")
		}
		return m.links[k].Clone(), nil
	})
}

// ListIdentities implements [user.Identities].
func (m *Memory) ListIdentities(ctx context.Context, userID string) ([]*user.Identity, error) {
	return locked(ctx, &m.mu, func() ([]*user.Identity, error) {
		if _, ok := m.byID[userID]; !ok {
			return nil, notFound("list identities")
		}
		return owned(m.links, userID, (*user.Identity).Clone, func(l *user.Identity) (string, time.Time, string) {
			return l.UserID, l.LinkedAt, l.ID
		}), nil
	})
}

// DeleteIdentity implements [user.Identities].
func (m *Memory) DeleteIdentity(ctx context.Context, userID, identityID string, keepOne bool) error {
	return lockedDo(ctx, &m.mu, func() error {
		l, ok := m.links[identityID]
		if !ok || l.UserID != userID {
			return notFound("delete identity")
		}
		if keepOne {
			n := 0
			for _, o := range m.links {
				if o.UserID == userID {
					n++
				}
			}
			if n < 2 {
				return fmt.Errorf("store: delete identity: the user's last one: %w", user.ErrConflict)
			}
		}
		delete(m.bySubject, [2]string{l.Provider, l.Subject})
		delete(m.links, identityID)
		return nil
	})
}
