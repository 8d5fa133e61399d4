package ratelimit

import (
	"context"
	"errors"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Defaults of [MemoryConfig] (the spec's; docs/api.md, Rate limits).
const (
	// DefaultMemoryCapacity is the number of keys a MemoryStore holds when
	// MemoryConfig.Capacity is not set.
	DefaultMemoryCapacity = 10_000

	// DefaultMemoryCleanupInterval is how often a MemoryStore removes expired
	// entries when MemoryConfig.CleanupInterval is zero.
	DefaultMemoryCleanupInterval = 60 * time.Second
)

const (
	// numShards splits the key space so that attempts on different keys
	// rarely wait for the same mutex. A power of two, so a shard is picked
	// with a mask: the low shardBits bits of the key's hash; the shard's
	// table takes the key's home slot from the bits above them.
	numShards = 1 << shardBits
	shardBits = 6

	// shardSize is the size of one shard, a multiple of the cache line.
	// 128 bytes also covers CPUs that fetch lines in pairs (x86 adjacent-line
	// prefetch) and 128-byte lines (Apple silicon). With 128-byte strides the
	// hot fields of two shards never share a 64-byte line, however the array
	// happens to be aligned.
	shardSize = 128
)

// errInvalidWindow is returned by MemoryStore.Increment for window <= 0.
var errInvalidWindow = errors.New("ratelimit: window must be positive")

// MemoryConfig configures a [MemoryStore]. The zero value means all defaults.
type MemoryConfig struct {
	// Capacity is the number of keys the store holds at most; at capacity a
	// new key gets [ErrStoreFull] until expired entries are removed. Expired
	// entries count until they are removed. Zero or negative means the
	// default. Default: 10,000 (the spec's capacity).
	Capacity int

	// CleanupInterval is how often a background goroutine removes expired
	// entries. Negative: no background cleanup (expired entries are then
	// removed only by Sweep, by a store at capacity, and by reuse of their
	// key). Default: 60 seconds (the spec's cleanup interval).
	CleanupInterval time.Duration

	// Now returns the current time; windows start and expire by it.
	// Default: time.Now.
	Now func() time.Time
}

// entry is one key's counter. A shard's table stores its fields inline (see
// table), so counting an existing key allocates nothing.
type entry struct {
	count   int64
	resetAt int64 // Unix nanoseconds; the entry is live while now < resetAt
}

// shard is one lock domain of a MemoryStore, padded to shardSize bytes so
// that shards locked by different CPUs do not share a cache line.
type shard struct {
	shardHead
	_ [shardSize - unsafe.Sizeof(shardHead{})]byte
}

// shardHead is the fields of a shard; unsafe.Sizeof of it sizes the padding.
type shardHead struct {
	mu  sync.Mutex            // held by writers of tab (see table)
	tab atomic.Pointer[table] // nil until the shard's first key
	// minReset is at most the smallest resetAt in tab, math.MaxInt64 when
	// tab is empty. Written only under mu; read without it by a full store
	// deciding whether sweeping could free anything. Renewing or deleting
	// an entry leaves it as it was (lower than needed), which is safe: the
	// next sweep of the shard makes it exact again.
	minReset atomic.Int64
}

// MemoryStore is the built-in [Store]: counters in process memory, lost on
// restart, never shared between processes (the spec's scope). It is safe for
// concurrent use. Keys are spread over 64 independently locked shards by a
// seeded hash, and a key counted inside its window takes no lock at all (one
// atomic add), so attempts on one key from several goroutines do not wait for
// each other.
//
// Keys are stored as given, of any length and content; memory use is about
// Capacity times the key size, so keep keys short (the authkit flows hash or
// cap them before they reach a store). An entry is live while now < resetAt;
// at and after resetAt the key's next Increment starts a new window.
//
// The background cleanup goroutine runs until [MemoryStore.Close].
type MemoryStore struct {
	// Read-only after construction.
	seed      maphash.Seed
	clock     func() time.Time // MemoryConfig.Now; nil: the monotonic clock
	capacity  int64
	stop      chan struct{} // nil without background cleanup
	done      chan struct{} // closed when the cleanup goroutine returns
	closeOnce sync.Once

	_ [shardSize]byte
	// live counts the entries in all shards (expired ones included until
	// removed). It is written on every insert and delete, so it sits on a
	// cache line of its own, away from the read-only fields above.
	live atomic.Int64
	// base is the wall-clock reading the default clock counts from (see
	// nowNanos); the cleanup tick takes a fresh one.
	base atomic.Pointer[clockBase]
	_    [shardSize]byte

	shards [numShards]shard
}

var (
	_ Store    = (*MemoryStore)(nil)
	_ Refunder = (*MemoryStore)(nil)
	_ Clearer  = (*MemoryStore)(nil)
)

// NewMemoryStore returns an empty store for cfg and, unless
// cfg.CleanupInterval is negative, starts its cleanup goroutine; call
// [MemoryStore.Close] to stop it. cfg is not modified.
func NewMemoryStore(cfg MemoryConfig) *MemoryStore {
	return newMemoryStore(cfg, func(d time.Duration) (<-chan time.Time, func()) {
		t := time.NewTicker(d)
		return t.C, t.Stop
	})
}

// newMemoryStore is NewMemoryStore with the cleanup ticker supplied, so tests
// can drive the cleanup goroutine without waiting for real time.
func newMemoryStore(cfg MemoryConfig, newTicker func(time.Duration) (<-chan time.Time, func())) *MemoryStore {
	s := &MemoryStore{
		seed:     maphash.MakeSeed(),
		clock:    cfg.Now,
		capacity: int64(cfg.Capacity),
	}
	if s.clock == nil {
		s.rebase()
	}
	if s.capacity <= 0 {
		s.capacity = DefaultMemoryCapacity
	}
	for i := range s.shards {
		s.shards[i].minReset.Store(math.MaxInt64)
	}
	interval := cfg.CleanupInterval
	if interval == 0 {
		interval = DefaultMemoryCleanupInterval
	}
	if interval > 0 {
		s.stop = make(chan struct{})
		s.done = make(chan struct{})
		tick, stopTicker := newTicker(interval)
		go s.cleanup(tick, stopTicker)
	}
	return s
}

// clockBase is a wall-clock reading, with its Unix nanoseconds computed
// once.
type clockBase struct {
	t    time.Time
	unix int64
}

// nowNanos returns the current time in Unix nanoseconds: MemoryConfig.Now
// when set, else the default clock, a wall-clock base plus the monotonic
// time elapsed since it. time.Since reads only the monotonic clock, half the
// cost of time.Now on common VMs, and the clock is one of the largest costs
// of counting a key already held. The cleanup tick re-takes the base, so
// reset times follow a stepped wall clock within one CleanupInterval.
func (s *MemoryStore) nowNanos() int64 {
	if s.clock != nil {
		return s.clock().UnixNano()
	}
	b := s.base.Load()
	return b.unix + int64(time.Since(b.t))
}

func (s *MemoryStore) rebase() {
	t := time.Now()
	s.base.Store(&clockBase{t: t, unix: t.UnixNano()})
}

func (s *MemoryStore) cleanup(tick <-chan time.Time, stopTicker func()) {
	defer close(s.done)
	defer stopTicker()
	for {
		select {
		case <-s.stop:
			return
		case <-tick:
			if s.clock == nil {
				s.rebase()
			}
			s.Sweep()
		}
	}
}

// Increment implements [Store]. It returns an error for a window that is not
// positive. At capacity it returns [ErrStoreFull] for a key it does not hold,
// with the earliest expiry among its entries as the resetAt hint when that
// lies in the future; keys it holds keep counting. ctx is not used: the store
// never blocks on I/O. The returned time is in UTC.
func (s *MemoryStore) Increment(_ context.Context, key string, window time.Duration) (int64, time.Time, error) {
	if window <= 0 {
		return 0, time.Time{}, errInvalidWindow
	}
	now := s.nowNanos()
	// One hash picks the shard (its low bits) and the slot in the shard's
	// table (the bits above), computed before the shard is locked.
	h := maphash.String(s.seed, key)
	sh := &s.shards[h&(numShards-1)]

	// A key held in its window is counted without a lock: one atomic add
	// (see table). Attempts on one key (the brute-force case) from several
	// CPUs never wait for each other. Everything else takes the mutex.
	if t := sh.tab.Load(); t != nil {
		if i := t.find(h, key); i >= 0 {
			if resetAt := t.slots[i].resetAt.Load(); now < resetAt {
				if count, ok := t.add(i); ok {
					return count, time.Unix(0, resetAt).UTC(), nil
				}
			}
		}
	}
	// Not held, out of its window, or its count is being retired (see
	// table): under the mutex, on the shard's current table.

	for swept := false; ; swept = true {
		sh.mu.Lock()
		t := sh.tab.Load()
		if i := t.find(h, key); i >= 0 {
			var count int64
			resetAt := t.slots[i].resetAt.Load()
			if now < resetAt {
				count = t.bump(i)
			} else {
				// The window elapsed: start a new one in the same slot.
				count, resetAt = 1, addNanos(now, window)
				t.renew(i, entry{count: count, resetAt: resetAt})
			}
			sh.mu.Unlock()
			return count, time.Unix(0, resetAt).UTC(), nil
		}
		if s.reserve() {
			resetAt := addNanos(now, window)
			if t == nil || t.full() {
				t = t.rehash(s.seed)
				sh.tab.Store(t)
			}
			t.insert(h, key, entry{count: 1, resetAt: resetAt})
			if resetAt < sh.minReset.Load() {
				sh.minReset.Store(resetAt)
			}
			sh.mu.Unlock()
			return 1, time.Unix(0, resetAt).UTC(), nil
		}
		sh.mu.Unlock()

		// Full. Reclaiming room must not let a stream of new keys turn every
		// attempt into a scan of the whole store. Each shard keeps a lower
		// bound of its entries' expiries (minReset), so a full store first
		// looks at those 64 numbers and scans only the shards that may hold
		// an expired entry; while none may, a new key costs O(64) and gets
		// ErrStoreFull at once. A scan either removes at least one expired
		// entry or makes a shard's minReset exact again after it went stale
		// because the entry holding the minimum was renewed or reset. An
		// entry expires at most once per window and a reset comes only from
		// the application (a successful login), so scans are paid for by
		// expiries and resets, never by the new keys an attacker sends.
		// One retry, if the scan (or a concurrent one) made room: if other
		// goroutines take that room first, this key is refused.
		if swept || s.sweep(now) == 0 && s.live.Load() >= s.capacity {
			if hint := s.earliest(); hint > now && hint < math.MaxInt64 {
				return 0, time.Unix(0, hint).UTC(), ErrStoreFull
			}
			return 0, time.Time{}, ErrStoreFull
		}
	}
}

// Reset implements [Store]: it removes key's entry. Resetting a missing key
// is not an error. ctx is not used.
func (s *MemoryStore) Reset(_ context.Context, key string) error {
	h := maphash.String(s.seed, key)
	sh := &s.shards[h&(numShards-1)]
	sh.mu.Lock()
	if t := sh.tab.Load(); t != nil {
		if i := t.find(h, key); i >= 0 {
			t.remove(i)
			s.live.Add(-1)
		}
	}
	sh.mu.Unlock()
	return nil
}

// Refund implements [Refunder]: it subtracts one from key's count when the
// key's window ends exactly at resetAt, has not ended yet, and the count is
// above zero. An entry whose count reaches zero is removed, which frees its
// room. ctx is not used.
//
// It is a writer (see table): under the shard's mutex the slot's resetAt
// cannot change, so the window checked is the window decremented. Readers
// may still be adding to the count, so it is taken down with a
// compare-and-swap loop, and an entry at one is frozen by a compare-and-swap
// from 1 to 1|countFrozen before it is removed: a reader's add that lands
// first makes the swap fail (the count is then decremented instead), one
// that lands after sees the frozen count and counts again under the mutex.
func (s *MemoryStore) Refund(_ context.Context, key string, resetAt time.Time) error {
	now := s.nowNanos()
	want := resetAt.UnixNano()
	h := maphash.String(s.seed, key)
	sh := &s.shards[h&(numShards-1)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	t := sh.tab.Load()
	i := t.find(h, key)
	if i < 0 {
		return nil
	}
	if r := t.slots[i].resetAt.Load(); r != want || now >= r {
		return nil // another window, or this one has ended
	}
	if t.refund(i) {
		t.remove(i)
		s.live.Add(-1)
	}
	return nil
}

// Clear implements [Clearer]: it removes the entry of every key that starts
// with prefix (every entry, for ""), one shard at a time, and returns how
// many it removed. ctx is not used.
func (s *MemoryStore) Clear(_ context.Context, prefix string) (int64, error) {
	var removed int64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n := 0
		if t := sh.tab.Load(); t != nil {
			for i := range t.slots {
				if t.ctrlAt(uint64(i)) >= ctrlFull && strings.HasPrefix(t.slots[i].key, prefix) {
					t.remove(i)
					n++
				}
			}
			if n > 0 && t.sparse() {
				sh.tab.Store(t.rehash(s.seed))
			}
		}
		// minReset stays a lower bound of what is left.
		s.live.Add(int64(-n))
		sh.mu.Unlock()
		removed += int64(n)
	}
	return removed, nil
}

// Sweep removes the entries whose window has ended and returns how many it
// removed. The cleanup goroutine calls it every CleanupInterval; it is
// exported so that callers (and tests with an injected clock) can trigger it.
// It locks one shard at a time and skips shards that hold no expired entry.
func (s *MemoryStore) Sweep() int {
	return s.sweep(s.nowNanos())
}

// Len returns the number of entries held, expired ones included until they
// are removed.
func (s *MemoryStore) Len() int {
	return int(s.live.Load())
}

// Close stops the cleanup goroutine and waits for it to return. It is
// idempotent and always returns nil. The store keeps working after Close,
// without background cleanup: expired entries are then removed only by
// Sweep, by a store at capacity, and by reuse of their key.
func (s *MemoryStore) Close() error {
	s.closeOnce.Do(func() {
		if s.stop != nil {
			close(s.stop)
			<-s.done
		}
	})
	return nil
}

// reserve takes one unit of capacity for a new entry, or reports false at
// capacity. A compare-and-swap loop, so concurrent inserts never overshoot
// and a refused insert never briefly occupies room another one could use.
func (s *MemoryStore) reserve() bool {
	for {
		n := s.live.Load()
		if n >= s.capacity {
			return false
		}
		if s.live.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// earliest returns the lowest of the shards' expiry lower bounds:
// math.MaxInt64 when the store is empty.
func (s *MemoryStore) earliest() int64 {
	low := int64(math.MaxInt64)
	for i := range s.shards {
		low = min(low, s.shards[i].minReset.Load())
	}
	return low
}

// sweep removes the entries expired at now from every shard that may hold
// one, makes those shards' minReset exact, and returns how many it removed.
func (s *MemoryStore) sweep(now int64) int {
	removed := 0
	for i := range s.shards {
		sh := &s.shards[i]
		if sh.minReset.Load() > now {
			continue // no entry of this shard has expired
		}
		sh.mu.Lock()
		if sh.minReset.Load() > now {
			sh.mu.Unlock()
			continue // swept by another goroutine meanwhile
		}
		n := 0
		low := int64(math.MaxInt64)
		if t := sh.tab.Load(); t != nil {
			for i := range t.slots {
				if t.ctrlAt(uint64(i)) < ctrlFull {
					continue
				}
				if r := t.slots[i].resetAt.Load(); now >= r {
					t.remove(i)
					n++
				} else {
					low = min(low, r)
				}
			}
			if t.sparse() {
				// Give back the memory of a burst of keys now gone, and the
				// keys of removed entries.
				sh.tab.Store(t.rehash(s.seed))
			}
		}
		sh.minReset.Store(low)
		s.live.Add(int64(-n))
		sh.mu.Unlock()
		removed += n
	}
	return removed
}

// addNanos returns now + d in Unix nanoseconds, saturating at math.MaxInt64
// (the year 2262) instead of wrapping around.
func addNanos(now int64, d time.Duration) int64 {
	if now > 0 && int64(d) > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + int64(d)
}
