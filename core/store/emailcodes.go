package store

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

var (
	_ user.EmailCodes      = (*Memory)(nil)
	_ user.EmailCodeEraser = (*Memory)(nil)
)

// emailCodes is the [user.EmailCodes] part of a Memory store, guarded by
// its mutex: one code per user id.
type emailCodes map[string]user.EmailCode

// copyCode returns c with its own copy of Hash and millisecond times.
func copyCode(c user.EmailCode) user.EmailCode {
	c.Hash = bytes.Clone(c.Hash)
	c.CreatedAt = c.CreatedAt.Truncate(time.Millisecond)
	c.ExpiresAt = c.ExpiresAt.Truncate(time.Millisecond)
	return c
}

// PutEmailCode implements [user.EmailCodes].
func (m *Memory) PutEmailCode(ctx context.Context, c user.EmailCode) error {
	return lockedDo(ctx, &m.mu, func() error {
		m.codes[c.UserID] = copyCode(c)
		return nil
	})
}

// EmailCode implements [user.EmailCodes].
func (m *Memory) EmailCode(ctx context.Context, userID string) (user.EmailCode, error) {
	return locked(ctx, &m.mu, func() (user.EmailCode, error) {
		return lookup(m.codes, userID, "email code", copyCode)
	})
}

// TakeEmailCode implements [user.EmailCodes].
func (m *Memory) TakeEmailCode(ctx context.Context, userID string, hash []byte, now time.Time) error {
	return lockedDo(ctx, &m.mu, func() error {
		c, ok := m.codes[userID]
		if !ok || !bytes.Equal(c.Hash, hash) || !c.ExpiresAt.After(now) {
			return fmt.Errorf("store: take email code: %w", user.ErrConflict)
		}
		delete(m.codes, userID)
		return nil
	})
}

// DeleteEmailCode implements [user.EmailCodeEraser].
func (m *Memory) DeleteEmailCode(ctx context.Context, userID string) error {
	return lockedDo(ctx, &m.mu, func() error {
		delete(m.codes, userID)
		return nil
	})
}
