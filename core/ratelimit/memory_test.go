package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// newTestStore returns a store on clock without background cleanup.
func newTestStore(t *testing.T, capacity int, clock *fakeClock) *MemoryStore {
	t.Helper()
	s := NewMemoryStore(MemoryConfig{Capacity: capacity, CleanupInterval: -1, Now: clock.Now})
	t.Cleanup(func() { s.Close() })
	return s
}

// increment calls s.Increment and fails the test on an unexpected answer.
func increment(t *testing.T, s *MemoryStore, key string, window time.Duration, wantCount int64, wantReset time.Time) {
	t.Helper()
	count, resetAt, err := s.Increment(context.Background(), key, window)
	if err != nil || count != wantCount || !resetAt.Equal(wantReset) {
		t.Fatalf("Increment(%.20q) = %d, %v, %v; want %d, %v, nil", key, count, resetAt, err, wantCount, wantReset)
	}
}

func TestShardSize(t *testing.T) {
	if got := unsafe.Sizeof(shard{}); got != shardSize {
		t.Errorf("shard is %d bytes, want %d", got, shardSize)
	}
}

func TestMemoryStoreIncrement(t *testing.T) {
	clock := newFakeClock()
	s := newTestStore(t, 0, clock)
	t0 := clock.Now()

	increment(t, s, "a", time.Minute, 1, t0.Add(time.Minute))
	clock.Advance(10 * time.Second)
	// A later increment, even with another window, keeps the window's end.
	increment(t, s, "a", time.Hour, 2, t0.Add(time.Minute))
	increment(t, s, "b", time.Hour, 1, clock.Now().Add(time.Hour))
	if n := s.Len(); n != 2 {
		t.Fatalf("Len = %d, want 2", n)
	}

	// At resetAt the entry has expired: the next increment restarts it.
	clock.Advance(50 * time.Second)
	increment(t, s, "a", time.Minute, 1, clock.Now().Add(time.Minute))
	if n := s.Len(); n != 2 {
		t.Fatalf("Len after restart = %d, want 2 (the slot is reused)", n)
	}

	for _, w := range []time.Duration{0, -time.Second} {
		if _, _, err := s.Increment(context.Background(), "a", w); !errors.Is(err, errInvalidWindow) {
			t.Errorf("Increment with window %v: error %v, want errInvalidWindow", w, err)
		}
	}
}

func TestMemoryStoreOddKeys(t *testing.T) {
	clock := newFakeClock()
	s := newTestStore(t, 0, clock)
	ctx := context.Background()
	reset := clock.Now().Add(time.Minute)

	big := strings.Repeat("k", 1<<20)
	increment(t, s, big, time.Minute, 1, reset)
	increment(t, s, big, time.Minute, 2, reset)
	// A key one byte shorter is another key.
	increment(t, s, big[1:], time.Minute, 1, reset)
	increment(t, s, "", time.Minute, 1, reset)
	increment(t, s, "\x00\xff not utf-8", time.Minute, 1, reset)
	if err := s.Reset(ctx, big); err != nil {
		t.Fatal(err)
	}
	increment(t, s, big, time.Minute, 1, reset)
	if n := s.Len(); n != 4 {
		t.Errorf("Len = %d, want 4", n)
	}
}

func TestMemoryStoreSaturates(t *testing.T) {
	clock := newFakeClock()
	s := newTestStore(t, 0, clock)
	end := time.Unix(0, math.MaxInt64).UTC()

	// A window past the year 2262 ends at the last representable instant.
	increment(t, s, "forever", math.MaxInt64, 1, end)
	h := maphash.String(s.seed, "forever")
	sh := &s.shards[h&(numShards-1)]
	sh.mu.Lock()
	tab := sh.tab.Load()
	tab.counts[tab.find(h, "forever")].Store(maxCount - 1)
	sh.mu.Unlock()
	increment(t, s, "forever", time.Minute, maxCount, end)
	increment(t, s, "forever", time.Minute, maxCount, end) // the slow path repairs the count
	increment(t, s, "forever", time.Minute, maxCount, end)
}

func TestMemoryStoreReset(t *testing.T) {
	clock := newFakeClock()
	s := newTestStore(t, 0, clock)
	ctx := context.Background()

	increment(t, s, "a", time.Minute, 1, clock.Now().Add(time.Minute))
	increment(t, s, "a", time.Minute, 2, clock.Now().Add(time.Minute))
	clock.Advance(time.Second)
	if err := s.Reset(ctx, "a"); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	if err := s.Reset(ctx, "a"); err != nil {
		t.Fatalf("second Reset: %v", err)
	}
	if err := s.Reset(ctx, "never-seen"); err != nil {
		t.Fatalf("Reset of a missing key: %v", err)
	}
	if n := s.Len(); n != 0 {
		t.Fatalf("Len = %d, want 0", n)
	}
	increment(t, s, "a", time.Minute, 1, clock.Now().Add(time.Minute))
}

func TestMemoryStoreDefaults(t *testing.T) {
	for _, c := range []int{0, -5} {
		s := NewMemoryStore(MemoryConfig{Capacity: c, CleanupInterval: -1})
		if s.capacity != DefaultMemoryCapacity {
			t.Errorf("Capacity %d: capacity = %d, want %d", c, s.capacity, DefaultMemoryCapacity)
		}
		s.Close()
	}
}

// TestMemoryStoreCapacity fills a store and checks that new keys are limited,
// existing keys keep counting, and expired entries are reclaimed by the next
// new key without Sweep or the cleanup goroutine.
func TestMemoryStoreCapacity(t *testing.T) {
	const capacity = 4
	clock := newFakeClock()
	s := newTestStore(t, capacity, clock)
	l, err := New(Config{MaxAttempts: 3, Window: time.Minute, Store: s, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t0 := clock.Now()

	// Keys 0 and 1 at t0, keys 2 and 3 at t0+30s.
	for i := range capacity {
		if i == 2 {
			clock.Advance(30 * time.Second)
		}
		if res, err := l.Attempt(ctx, fmt.Sprint("key", i)); err != nil || !res.Allowed {
			t.Fatalf("filling key%d: %+v, %v", i, res, err)
		}
	}
	if n := s.Len(); n != capacity {
		t.Fatalf("Len = %d, want %d", n, capacity)
	}

	// A new key is limited, not an error; ResetAt is when room is expected.
	res, err := l.Attempt(ctx, "new")
	if err != nil {
		t.Fatalf("Attempt at capacity: %v", err)
	}
	if want := (Result{ResetAt: t0.Add(time.Minute), Limit: 3, StoreFull: true}); !resultEqual(res, want) {
		t.Fatalf("Attempt at capacity = %+v, want %+v", res, want)
	}
	count, resetAt, err := s.Increment(ctx, "new", time.Minute)
	if !errors.Is(err, ErrStoreFull) || count != 0 || !resetAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("Increment at capacity = %d, %v, %v; want 0, %v, ErrStoreFull", count, resetAt, err, t0.Add(time.Minute))
	}

	// Existing keys keep counting.
	res, err = l.Attempt(ctx, "key0")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Allowed: true, Remaining: 1, ResetAt: t0.Add(time.Minute), Limit: 3}); !resultEqual(res, want) {
		t.Fatalf("existing key at capacity = %+v, want %+v", res, want)
	}

	// Keys 0 and 1 expire: the next new key removes them on the way in.
	clock.Advance(30 * time.Second)
	res, err = l.Attempt(ctx, "new")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Allowed: true, Remaining: 2, ResetAt: clock.Now().Add(time.Minute), Limit: 3}); !resultEqual(res, want) {
		t.Fatalf("new key after expiry = %+v, want %+v", res, want)
	}
	if n := s.Len(); n != 3 {
		t.Fatalf("Len after reclaim = %d, want 3 (2 removed, 1 added)", n)
	}
	if res, _ := l.Attempt(ctx, "new2"); !res.Allowed {
		t.Fatalf("second new key = %+v, want allowed (one slot left)", res)
	}
	// Full again; the earliest expiry is now key2's and key3's.
	res, _ = l.Attempt(ctx, "new3")
	if want := (Result{ResetAt: t0.Add(90 * time.Second), Limit: 3, StoreFull: true}); !resultEqual(res, want) {
		t.Fatalf("Attempt when full again = %+v, want %+v", res, want)
	}

	// Reset frees a slot at once.
	if err := l.Reset(ctx, "key2"); err != nil {
		t.Fatal(err)
	}
	if res, _ := l.Attempt(ctx, "new3"); !res.Allowed {
		t.Fatalf("new key after Reset = %+v, want allowed", res)
	}
}

// TestMemoryStoreFullNoRepeatedScans checks the amortisation rule: after a
// scan that found nothing to remove (because the entries were renewed), the
// shards' lower bounds are exact again, so further new keys are refused
// without scanning, with the true earliest expiry as hint.
func TestMemoryStoreFullNoRepeatedScans(t *testing.T) {
	const capacity = 200
	clock := newFakeClock()
	s := newTestStore(t, capacity, clock)
	t0 := clock.Now()
	for i := range capacity {
		increment(t, s, fmt.Sprint("k", i), time.Minute, 1, t0.Add(time.Minute))
	}

	// Every entry expires and is renewed at t1: the bounds go stale.
	clock.Advance(2 * time.Minute)
	t1 := clock.Now()
	for i := range capacity {
		increment(t, s, fmt.Sprint("k", i), time.Minute, 1, t1.Add(time.Minute))
	}
	if !s.sweepDue(t1.UnixNano()) {
		t.Fatal("bounds not stale after renewals; the test no longer tests anything")
	}

	clock.Advance(time.Second)
	_, hint, err := s.Increment(context.Background(), "new", time.Minute)
	if !errors.Is(err, ErrStoreFull) || !hint.Equal(t1.Add(time.Minute)) {
		t.Fatalf("Increment = %v, %v; want ErrStoreFull with hint %v", hint, err, t1.Add(time.Minute))
	}
	if s.sweepDue(clock.Now().UnixNano()) {
		t.Error("a full store would scan again for the next new key")
	}
	if n := s.Len(); n != capacity {
		t.Errorf("Len = %d, want %d", n, capacity)
	}
}

// TestMemoryStoreCapacityConcurrent races distinct new keys into a small
// store: exactly Capacity of them get in.
func TestMemoryStoreCapacityConcurrent(t *testing.T) {
	const capacity, goroutines = 100, 500
	clock := newFakeClock()
	s := newTestStore(t, capacity, clock)

	errs := make([]error, goroutines)
	race(goroutines, func(i int) {
		_, _, errs[i] = s.Increment(context.Background(), fmt.Sprint("k", i), time.Minute)
	})

	ok, full := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrStoreFull):
			full++
		default:
			t.Fatalf("Increment: %v", err)
		}
	}
	if ok != capacity || full != goroutines-capacity || s.Len() != capacity {
		t.Errorf("accepted %d, refused %d, Len %d; want %d, %d, %d", ok, full, s.Len(), capacity, goroutines-capacity, capacity)
	}
}

// TestMemoryStoreCountsUnderChanges counts one key from several goroutines,
// on the lock-free path, while others insert, reset and sweep keys of every
// shard, so that the key's table is rebuilt and replaced under the
// counters: no attempt is lost or counted twice (run with -race).
func TestMemoryStoreCountsUnderChanges(t *testing.T) {
	clock := newFakeClock()
	s := newTestStore(t, 1_000_000, clock)
	ctx := context.Background()
	increment(t, s, "hot", time.Hour, 1, clock.Now().Add(time.Hour))

	const counters, attempts = 4, 3000
	var wg sync.WaitGroup
	for range counters {
		wg.Go(func() {
			for range attempts {
				if _, _, err := s.Increment(ctx, "hot", time.Hour); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 20_000 {
			k := fmt.Sprint("k", i)
			if _, _, err := s.Increment(ctx, k, time.Minute); err != nil {
				t.Error(err)
				return
			}
			if i%3 == 0 {
				_ = s.Reset(ctx, k)
			}
			if i%5000 == 0 {
				s.Sweep()
			}
		}
	})
	wg.Wait()
	increment(t, s, "hot", time.Hour, counters*attempts+2, clock.Now().Add(time.Hour))
}

func TestMemoryStoreSweep(t *testing.T) {
	clock := newFakeClock()
	s := newTestStore(t, 0, clock)
	t0 := clock.Now()
	for i := range 300 {
		w := time.Minute
		if i%3 == 0 {
			w = time.Hour
		}
		increment(t, s, fmt.Sprint("k", i), w, 1, t0.Add(w))
	}
	if n := s.Sweep(); n != 0 {
		t.Fatalf("Sweep before expiry removed %d, want 0", n)
	}
	clock.Advance(time.Minute)
	if n := s.Sweep(); n != 200 {
		t.Fatalf("Sweep removed %d, want 200", n)
	}
	if n := s.Len(); n != 100 {
		t.Fatalf("Len = %d, want 100", n)
	}
	if n := s.Sweep(); n != 0 {
		t.Fatalf("second Sweep removed %d, want 0", n)
	}
	// The survivors still count.
	increment(t, s, "k0", time.Minute, 2, t0.Add(time.Hour))
	clock.Advance(time.Hour)
	if n := s.Sweep(); n != 100 || s.Len() != 0 {
		t.Fatalf("Sweep after an hour removed %d, Len %d; want 100, 0", n, s.Len())
	}
}

// fakeTicker records the interval it was made with and hands the cleanup
// goroutine an unbuffered channel: a send completes only when the goroutine
// is waiting to receive, so the test knows exactly where it is.
type fakeTicker struct {
	interval time.Duration
	c        chan time.Time
	stopped  chan struct{}
}

func (f *fakeTicker) new(d time.Duration) (<-chan time.Time, func()) {
	f.interval = d
	f.c = make(chan time.Time)
	f.stopped = make(chan struct{})
	return f.c, func() { close(f.stopped) }
}

func TestMemoryStoreCleanupGoroutine(t *testing.T) {
	clock := newFakeClock()
	var ft fakeTicker
	s := newMemoryStore(MemoryConfig{Now: clock.Now}, ft.new)
	if ft.interval != DefaultMemoryCleanupInterval {
		t.Errorf("cleanup interval = %v, want %v", ft.interval, DefaultMemoryCleanupInterval)
	}
	increment(t, s, "a", time.Minute, 1, clock.Now().Add(time.Minute))
	increment(t, s, "b", time.Hour, 1, clock.Now().Add(time.Hour))
	clock.Advance(time.Minute)

	// The second send is received only after the sweep of the first tick
	// has finished.
	ft.c <- time.Time{}
	ft.c <- time.Time{}
	if n := s.Len(); n != 1 {
		t.Fatalf("Len after a cleanup tick = %d, want 1", n)
	}

	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Close waited for the goroutine: the ticker is stopped and nobody
	// receives ticks any more.
	select {
	case <-ft.stopped:
	default:
		t.Fatal("ticker not stopped after Close")
	}
	select {
	case ft.c <- time.Time{}:
		t.Fatal("cleanup goroutine still running after Close")
	default:
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	// The store keeps working after Close.
	increment(t, s, "c", time.Minute, 1, clock.Now().Add(time.Minute))
	clock.Advance(time.Hour)
	if n := s.Sweep(); n != 2 {
		t.Errorf("Sweep after Close removed %d, want 2", n)
	}
}

func TestMemoryStoreCleanupInterval(t *testing.T) {
	var ft fakeTicker
	s := newMemoryStore(MemoryConfig{CleanupInterval: 5 * time.Second}, ft.new)
	if ft.interval != 5*time.Second {
		t.Errorf("cleanup interval = %v, want 5s", ft.interval)
	}
	s.Close()

	called := false
	s = newMemoryStore(MemoryConfig{CleanupInterval: -1}, func(time.Duration) (<-chan time.Time, func()) {
		called = true
		return nil, func() {}
	})
	if called {
		t.Error("negative CleanupInterval started a ticker")
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// sweepDue reports whether a full store would scan for expired entries at
// now.
func (s *MemoryStore) sweepDue(now int64) bool { return s.earliest() <= now }

// TestDefaultClock: without an injected Now the store counts from a
// wall-clock base plus monotonic time, re-based on every cleanup tick; its
// reset times agree with time.Now.
func TestDefaultClock(t *testing.T) {
	tick := make(chan time.Time)
	s := newMemoryStore(MemoryConfig{}, func(time.Duration) (<-chan time.Time, func()) { return tick, func() {} })
	defer s.Close()
	check := func(key string) {
		t.Helper()
		before := time.Now()
		_, reset, err := s.Increment(context.Background(), key, time.Minute)
		after := time.Now()
		if err != nil {
			t.Fatal(err)
		}
		if reset.Before(before.Add(time.Minute).Add(-time.Millisecond)) || reset.After(after.Add(time.Minute).Add(time.Millisecond)) {
			t.Fatalf("resetAt %v outside [%v, %v] + 1m", reset, before, after)
		}
	}
	check("a")
	first := s.base.Load()
	tick <- time.Now() // the cleanup goroutine re-bases, then sweeps
	tick <- time.Now() // handed over only after the first tick was handled
	if s.base.Load() == first {
		t.Fatal("the cleanup tick did not re-take the clock's base")
	}
	check("b")
}
