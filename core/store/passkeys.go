package store

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

var _ user.Passkeys = (*Memory)(nil)

// passkeys is the [user.Passkeys] part of a Memory store, guarded by its
// mutex.
type passkeys struct {
	handles  map[string][]byte        // user id -> user handle
	byHandle map[string]string        // string(handle) -> user id
	creds    map[string]*user.Passkey // string(credential id) -> credential
}

func newPasskeys() passkeys {
	return passkeys{handles: map[string][]byte{}, byHandle: map[string]string{}, creds: map[string]*user.Passkey{}}
}

// dropPasskeys forgets a deleted user's handle and credentials. The caller
// holds the lock.
func (p *passkeys) dropPasskeys(id string) {
	if h, ok := p.handles[id]; ok {
		delete(p.byHandle, string(h))
		delete(p.handles, id)
	}
	for k, c := range p.creds {
		if c.UserID == id {
			delete(p.creds, k)
		}
	}
}

// PasskeyUserHandle implements [user.Passkeys].
func (m *Memory) PasskeyUserHandle(ctx context.Context, id string, candidate []byte) ([]byte, error) {
	return locked(ctx, &m.mu, func() ([]byte, error) {
		if len(candidate) == 0 {
			return nil, fmt.Errorf("store: passkey user handle: empty candidate")
		}
		if _, ok := m.byID[id]; !ok {
			return nil, notFound("passkey user handle")
		}
		if h, ok := m.handles[id]; ok {
			return bytes.Clone(h), nil
		}
		if _, taken := m.byHandle[string(candidate)]; taken {
			return nil, fmt.Errorf("store: passkey user handle: handle in use: %w", user.ErrConflict)
		}
		h := bytes.Clone(candidate)
		m.handles[id] = h
		m.byHandle[string(h)] = id
		return bytes.Clone(h), nil
	})
}

// ByPasskeyUserHandle implements [user.Passkeys].
func (m *Memory) ByPasskeyUserHandle(ctx context.Context, handle []byte) (*user.User, error) {
	return locked(ctx, &m.mu, func() (*user.User, error) {
		id, ok := m.byHandle[string(handle)]
		if !ok {
			return nil, notFound("user by passkey handle")
		}
		return m.byID[id].Clone(), nil
	})
}

// AddPasskey implements [user.Passkeys].
func (m *Memory) AddPasskey(ctx context.Context, p *user.Passkey) error {
	return lockedDo(ctx, &m.mu, func() error {
		c := p.Clone()
		c.CreatedAt = c.CreatedAt.Truncate(time.Millisecond)
		c.LastUsedAt = c.LastUsedAt.Truncate(time.Millisecond)
		if _, ok := m.byID[c.UserID]; !ok {
			return notFound("add passkey")
		}
		if _, ok := m.creds[string(c.ID)]; ok {
			return fmt.Errorf("store: add passkey: credential id in use: %w", user.ErrConflict)
		}
		m.creds[string(c.ID)] = c
		return nil
	})
}

// ListPasskeys implements [user.Passkeys].
func (m *Memory) ListPasskeys(ctx context.Context, userID string) ([]*user.Passkey, error) {
	return locked(ctx, &m.mu, func() ([]*user.Passkey, error) {
		if _, ok := m.byID[userID]; !ok {
			return nil, notFound("list passkeys")
		}
		return owned(m.creds, userID, (*user.Passkey).Clone, func(p *user.Passkey) (string, time.Time, string) {
			return p.UserID, p.CreatedAt, string(p.ID)
		}), nil
	})
}

// PasskeyByID implements [user.Passkeys].
func (m *Memory) PasskeyByID(ctx context.Context, credentialID []byte) (*user.Passkey, error) {
	return locked(ctx, &m.mu, func() (*user.Passkey, error) {
		return lookup(m.creds, string(credentialID), "passkey by id", (*user.Passkey).Clone)
	})
}

// RenamePasskey implements [user.Passkeys].
func (m *Memory) RenamePasskey(ctx context.Context, userID string, credentialID []byte, name string) error {
	return m.updatePasskey(ctx, "rename passkey", userID, credentialID, func(c *user.Passkey) error {
		c.Name = name
		return nil
	})
}

// DeletePasskey implements [user.Passkeys].
func (m *Memory) DeletePasskey(ctx context.Context, userID string, credentialID []byte) error {
	return m.updatePasskey(ctx, "delete passkey", userID, credentialID, func(*user.Passkey) error {
		delete(m.creds, string(credentialID))
		return nil
	})
}

// UsePasskey implements [user.Passkeys].
func (m *Memory) UsePasskey(ctx context.Context, userID string, credentialID []byte, u user.PasskeyUse) error {
	return m.updatePasskey(ctx, "use passkey", userID, credentialID, func(c *user.Passkey) error {
		if c.SignCount != u.OldSignCount {
			return user.ErrConflict
		}
		c.SignCount, c.BackupState, c.LastUsedAt = u.SignCount, u.BackupState, u.At.Truncate(time.Millisecond)
		return nil
	})
}

// updatePasskey runs fn on a copy of the user's credential under the lock
// and stores the copy when fn succeeds and did not delete it.
func (m *Memory) updatePasskey(ctx context.Context, op, userID string, credentialID []byte, fn func(c *user.Passkey) error) error {
	return lockedDo(ctx, &m.mu, func() error {
		c, ok := m.creds[string(credentialID)]
		if !ok || c.UserID != userID {
			return notFound(op)
		}
		cp := c.Clone()
		if err := fn(cp); err != nil {
			return fmt.Errorf("store: %s: %w", op, err)
		}
		if _, still := m.creds[string(credentialID)]; still {
			m.creds[string(credentialID)] = cp
		}
		return nil
	})
}
