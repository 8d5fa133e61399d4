package onetime

import (
	"context"
	"sync"
	"time"
)

// DefaultCapacity is the number of live values a [MemoryStore] holds when
// MemoryConfig.Capacity is not set.
const DefaultCapacity = 100000

// MemoryConfig configures a [MemoryStore]. The zero value means all
// defaults.
type MemoryConfig struct {
	// Capacity is how many values the store holds. When a new key would
	// exceed it, the expired values are dropped first; when it is full of
	// live ones, Put returns ErrFull. Default: DefaultCapacity (100000).
	Capacity int

	// Now is the clock of that sweep (Take uses the time it is given).
	// Default: time.Now.
	Now func() time.Time
}

// MemoryStore is the in-process [Store]: a map under a mutex, bounded by
// Capacity. It is for one process: an app that runs several instances
// behind a load balancer gives them a shared store (Redis or SQL), or a
// value put by one instance is not found by another. It is safe for
// concurrent use.
type MemoryStore struct {
	mu       sync.Mutex
	capacity int
	now      func() time.Time
	entries  map[string]entry
}

type entry struct {
	data    []byte
	expires time.Time
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty store. cfg is not modified.
func NewMemoryStore(cfg MemoryConfig) *MemoryStore {
	s := &MemoryStore{capacity: cfg.Capacity, now: cfg.Now, entries: map[string]entry{}}
	if s.capacity <= 0 {
		s.capacity = DefaultCapacity
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Put implements [Store]. It keeps expires as it is (no rounding). A new
// key in a store holding Capacity values first drops the expired ones;
// if it is still full, Put returns ErrFull. Replacing a key never fails.
func (s *MemoryStore) Put(ctx context.Context, key string, data []byte, expires time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e := entry{data: append(make([]byte, 0, len(data)), data...), expires: expires}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.entries[key]; !ok && len(s.entries) >= s.capacity {
		now := s.now()
		for k, old := range s.entries {
			if !old.expires.After(now) {
				delete(s.entries, k)
			}
		}
		if len(s.entries) >= s.capacity {
			return ErrFull
		}
	}
	s.entries[key] = e
	return nil
}

// Take implements [Store]. An expired value it meets is deleted too.
func (s *MemoryStore) Take(ctx context.Context, key string, now time.Time) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	e, ok := s.entries[key]
	delete(s.entries, key)
	s.mu.Unlock()
	if !ok || !e.expires.After(now) {
		return nil, ErrNotFound
	}
	return e.data, nil // a copy made by Put, no longer in the map
}

// Len reports how many values the store holds, expired ones not yet
// dropped included.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}
