package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// MemorySessions is an in-memory [session.Store]: the session records of
// one process, lost on restart. One mutex guards every record, so each
// method is atomic. Records past their ExpiresAt are dropped whenever a
// record of the same user is created. It is safe for concurrent use.
type MemorySessions struct {
	now    func() time.Time
	mu     sync.Mutex
	byID   map[string]session.Record
	byUser map[string]map[string]struct{} // user id -> record ids
}

var _ session.Store = (*MemorySessions)(nil)

// NewMemorySessions returns an empty session-record store. cfg.Now is the
// clock expired records are dropped by (default time.Now).
func NewMemorySessions(cfg MemoryConfig) *MemorySessions {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &MemorySessions{now: now, byID: map[string]session.Record{}, byUser: map[string]map[string]struct{}{}}
}

// Create implements [session.Store].
func (m *MemorySessions) Create(ctx context.Context, r session.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byID[r.ID]; ok {
		return fmt.Errorf("store: create session: id %q exists", r.ID)
	}
	ids := m.byUser[r.UserID]
	if ids == nil {
		ids = map[string]struct{}{}
		m.byUser[r.UserID] = ids
	}
	now := m.now()
	for id := range ids {
		if !now.Before(m.byID[id].ExpiresAt) {
			delete(ids, id)
			delete(m.byID, id)
		}
	}
	m.byID[r.ID] = truncateRecord(r)
	ids[r.ID] = struct{}{}
	return nil
}

// Get implements [session.Store].
func (m *MemorySessions) Get(ctx context.Context, id string) (session.Record, error) {
	if err := ctx.Err(); err != nil {
		return session.Record{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.byID[id]
	if !ok {
		return session.Record{}, fmt.Errorf("store: session: %w", user.ErrNotFound)
	}
	return r, nil
}

// Touch implements [session.Store].
func (m *MemorySessions) Touch(ctx context.Context, id string, seen, expires time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.byID[id]
	if !ok {
		return fmt.Errorf("store: touch session: %w", user.ErrNotFound)
	}
	r.LastSeenAt, r.ExpiresAt = seen, expires
	m.byID[id] = truncateRecord(r)
	return nil
}

// Delete implements [session.Store].
func (m *MemorySessions) Delete(ctx context.Context, userID, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.byID[id]
	if !ok || r.UserID != userID {
		return fmt.Errorf("store: delete session: %w", user.ErrNotFound)
	}
	delete(m.byID, id)
	delete(m.byUser[userID], id)
	return nil
}

// List implements [session.Store].
func (m *MemorySessions) List(ctx context.Context, userID string) ([]session.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]session.Record, 0, len(m.byUser[userID]))
	for id := range m.byUser[userID] {
		out = append(out, m.byID[id])
	}
	session.SortRecords(out)
	return out, nil
}

// DeleteAll implements [session.Store].
func (m *MemorySessions) DeleteAll(ctx context.Context, userID, except string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for id := range m.byUser[userID] {
		if id != except {
			delete(m.byID, id)
			delete(m.byUser[userID], id)
		}
	}
	return nil
}

func truncateRecord(r session.Record) session.Record {
	for _, t := range []*time.Time{&r.CreatedAt, &r.LastSeenAt, &r.ExpiresAt} {
		*t = t.Truncate(time.Millisecond)
	}
	return r
}
