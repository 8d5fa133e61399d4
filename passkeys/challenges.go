package passkeys

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrChallengeNotFound is what ChallengeStore.Take returns for a key it
// does not hold, or holds no longer (taken, or expired).
var ErrChallengeNotFound = errors.New("passkeys: challenge not found")

// ChallengeStore keeps the state of the ceremonies between begin and
// finish: the challenge, what it is bound to, and what it is for.
type ChallengeStore interface {
	// Put stores data under key until expires. Keys are random (256 bits,
	// hashed); a store may refuse new keys when full (an error).
	Put(ctx context.Context, key string, data []byte, expires time.Time) error

	// Take returns the data of key and deletes it in one atomic step, so
	// that of two racing calls at most one gets the data. A key that is
	// missing or expired at now gives ErrChallengeNotFound.
	Take(ctx context.Context, key string, now time.Time) ([]byte, error)
}

// MemoryChallenges is an in-process ChallengeStore: for one process (a
// ceremony begun on one instance must finish on it); apps with several
// instances give Config.Challenges a shared store.
type MemoryChallenges struct {
	mu      sync.Mutex
	max     int
	now     func() time.Time
	entries map[string]challengeEntry
}

type challengeEntry struct {
	data    []byte
	expires time.Time
}

var _ ChallengeStore = (*MemoryChallenges)(nil)

// errChallengesFull is Put's error when the store is full of live
// challenges.
var errChallengesFull = errors.New("passkeys: challenge store full")

// MemoryConfig configures a MemoryChallenges store.
type MemoryConfig struct {
	// Max is how many live challenges it holds; expired ones are dropped
	// when it fills, and when it is full of live ones Put fails (the begin
	// routes answer 503). Default: 100000.
	Max int
	// Now tells the time of the sweep. Default: time.Now.
	Now func() time.Time
}

// NewMemoryChallenges returns an empty store.
func NewMemoryChallenges(cfg MemoryConfig) *MemoryChallenges {
	if cfg.Max <= 0 {
		cfg.Max = 100000
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &MemoryChallenges{max: cfg.Max, now: cfg.Now, entries: map[string]challengeEntry{}}
}

// Put implements ChallengeStore.
func (m *MemoryChallenges) Put(ctx context.Context, key string, data []byte, expires time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) >= m.max {
		now := m.now()
		for k, e := range m.entries {
			if !e.expires.After(now) {
				delete(m.entries, k)
			}
		}
		if len(m.entries) >= m.max {
			return errChallengesFull
		}
	}
	m.entries[key] = challengeEntry{data: append([]byte(nil), data...), expires: expires}
	return nil
}

// Take implements ChallengeStore.
func (m *MemoryChallenges) Take(ctx context.Context, key string, now time.Time) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	if !ok {
		return nil, ErrChallengeNotFound
	}
	delete(m.entries, key)
	if !e.expires.After(now) {
		return nil, ErrChallengeNotFound
	}
	return e.data, nil
}
