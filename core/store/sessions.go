package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/authkit-go/authkit/core/session"
)

// MemorySessions is an in-memory [session.Store]: the session records of
// one process, lost on restart. One mutex guards every record, so each
// method is atomic. Records are indexed by user: a login touches only its
// user's records, and no more than it must. A user's records past their
// ExpiresAt are dropped when a new one would pass the bound of
// CreateBounded, and otherwise whenever their count has doubled since the
// last sweep, so a login costs the same however many records a user has.
// It is safe for concurrent use.
type MemorySessions struct {
	now    func() time.Time
	mu     sync.Mutex
	byID   map[string]session.Record
	byUser map[string]*userRecords
}

// userRecords are the ids of one user's records.
type userRecords struct {
	ids     map[string]struct{}
	sweepAt int // sweep the expired ones when there are this many
}

// minSweep is the fewest records of one user that trigger a sweep.
const minSweep = 64

var (
	_ session.Store   = (*MemorySessions)(nil)
	_ session.Bounded = (*MemorySessions)(nil)
)

// NewMemorySessions returns an empty session-record store. cfg.Now is the
// clock expired records are dropped by (default time.Now).
func NewMemorySessions(cfg MemoryConfig) *MemorySessions {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &MemorySessions{now: now, byID: map[string]session.Record{}, byUser: map[string]*userRecords{}}
}

// Create implements [session.Store].
func (m *MemorySessions) Create(ctx context.Context, r session.Record) error {
	return m.CreateBounded(ctx, r, 0)
}

// CreateBounded implements [session.Bounded] in one step under the
// store's lock: the user holds at most max records when it returns.
func (m *MemorySessions) CreateBounded(ctx context.Context, r session.Record, max int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byID[r.ID]; ok {
		return fmt.Errorf("store: create session: id %q exists", r.ID)
	}
	u := m.byUser[r.UserID]
	if u == nil {
		u = &userRecords{ids: map[string]struct{}{}, sweepAt: minSweep}
		m.byUser[r.UserID] = u
	}
	m.byID[r.ID] = truncateRecord(r)
	u.ids[r.ID] = struct{}{}
	over := max > 0 && len(u.ids) > max
	if over || len(u.ids) >= u.sweepAt {
		now := m.now()
		before := len(u.ids)
		for id := range u.ids {
			if id != r.ID && !now.Before(m.byID[id].ExpiresAt) {
				m.remove(u, id)
			}
		}
		if len(u.ids) < before/2 {
			// A new map: one that held many ids costs their number to
			// range over, however few remain.
			ids := make(map[string]struct{}, len(u.ids))
			for id := range u.ids {
				ids[id] = struct{}{}
			}
			u.ids = ids
		}
		u.sweepAt = 2 * len(u.ids)
		if u.sweepAt < minSweep {
			u.sweepAt = minSweep
		}
	}
	switch {
	case max <= 0 || len(u.ids) <= max:
	case len(u.ids) == max+1: // a user at the bound: one scan
		m.remove(u, m.oldest(u))
	default: // a bound lowered, or set on a store that had none: one sort
		rs := make([]session.Record, 0, len(u.ids))
		for id := range u.ids {
			rs = append(rs, m.byID[id])
		}
		session.SortRecords(rs) // newest first
		for _, r := range rs[max:] {
			delete(m.byID, r.ID)
		}
		// A new map: one that held many ids costs their number to range
		// over, however few remain.
		u.ids = make(map[string]struct{}, max)
		for _, r := range rs[:max] {
			u.ids[r.ID] = struct{}{}
		}
	}
	return nil
}

// oldest is the id of u's oldest record: CreatedAt, then ID, ascending.
func (m *MemorySessions) oldest(u *userRecords) string {
	var first session.Record
	for id := range u.ids {
		r := m.byID[id]
		if first.ID == "" || r.CreatedAt.Before(first.CreatedAt) || (r.CreatedAt.Equal(first.CreatedAt) && r.ID < first.ID) {
			first = r
		}
	}
	return first.ID
}

func (m *MemorySessions) remove(u *userRecords, id string) {
	delete(m.byID, id)
	delete(u.ids, id)
}

// Get implements [session.Store].
func (m *MemorySessions) Get(ctx context.Context, id string) (session.Record, error) {
	return locked(ctx, &m.mu, func() (session.Record, error) {
		r, ok := m.byID[id]
		if !ok {
			return session.Record{}, notFound("session")
		}
		return r, nil
	})
}

// Touch implements [session.Store].
func (m *MemorySessions) Touch(ctx context.Context, id string, seen, expires time.Time) error {
	return lockedDo(ctx, &m.mu, func() error {
		r, ok := m.byID[id]
		if !ok {
			return notFound("touch session")
		}
		r.LastSeenAt, r.ExpiresAt = seen, expires
		m.byID[id] = truncateRecord(r)
		return nil
	})
}

// Delete implements [session.Store].
func (m *MemorySessions) Delete(ctx context.Context, userID, id string) error {
	return lockedDo(ctx, &m.mu, func() error {
		r, ok := m.byID[id]
		if !ok || r.UserID != userID {
			return notFound("delete session")
		}
		m.remove(m.byUser[userID], id)
		return nil
	})
}

// List implements [session.Store].
func (m *MemorySessions) List(ctx context.Context, userID string) ([]session.Record, error) {
	return locked(ctx, &m.mu, func() ([]session.Record, error) {
		var out []session.Record
		if u := m.byUser[userID]; u != nil {
			out = make([]session.Record, 0, len(u.ids))
			for id := range u.ids {
				out = append(out, m.byID[id])
			}
		} else {
			out = []session.Record{}
		}
		session.SortRecords(out)
		return out, nil
	})
}

// DeleteAll implements [session.Store].
func (m *MemorySessions) DeleteAll(ctx context.Context, userID, except string) error {
	return lockedDo(ctx, &m.mu, func() error {
		u := m.byUser[userID]
		if u == nil {
			return nil
		}
		for id := range u.ids {
			if id != except {
				m.remove(u, id)
			}
		}
		return nil
	})
}

func truncateRecord(r session.Record) session.Record {
	for _, t := range []*time.Time{&r.CreatedAt, &r.LastSeenAt, &r.ExpiresAt} {
		*t = t.Truncate(time.Millisecond)
	}
	return r
}
