package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestMemoryStoreRefund(t *testing.T) {
	clock := newFakeClock()
	s := newTestStore(t, 10, clock)
	ctx := context.Background()
	t0 := clock.Now()
	end := t0.Add(time.Minute)
	for want := int64(1); want <= 3; want++ {
		increment(t, s, "k", time.Minute, want, end)
	}

	if err := s.Refund(ctx, "k", end); err != nil {
		t.Fatalf("Refund: %v", err)
	}
	increment(t, s, "k", time.Minute, 3, end) // 3 - 1 + 1

	// Another window's end, a missing key: left alone.
	for _, tc := range []struct {
		key   string
		reset time.Time
	}{{"k", end.Add(time.Millisecond)}, {"k", end.Add(-time.Nanosecond)}, {"k", time.Time{}}, {"missing", end}} {
		if err := s.Refund(ctx, tc.key, tc.reset); err != nil {
			t.Fatalf("Refund(%q, %v): %v", tc.key, tc.reset, err)
		}
	}
	increment(t, s, "k", time.Minute, 4, end)
	if n := s.Len(); n != 1 {
		t.Fatalf("Len = %d, want 1 (a refund of a missing key must not create it)", n)
	}

	// The window ended: the refund is for a window that is over.
	clock.Advance(time.Minute)
	if err := s.Refund(ctx, "k", end); err != nil {
		t.Fatal(err)
	}
	end2 := clock.Now().Add(time.Minute)
	increment(t, s, "k", time.Minute, 1, end2)
	// A refund for the old window does not touch the new one.
	if err := s.Refund(ctx, "k", end); err != nil {
		t.Fatal(err)
	}
	increment(t, s, "k", time.Minute, 2, end2)

	// Down to zero: the entry goes and frees its room; the next increment
	// starts a new window.
	for range 2 {
		if err := s.Refund(ctx, "k", end2); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Len(); n != 0 {
		t.Fatalf("Len after refunding to zero = %d, want 0", n)
	}
	if err := s.Refund(ctx, "k", end2); err != nil { // below zero: nothing
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	increment(t, s, "k", time.Minute, 1, clock.Now().Add(time.Minute))
}

// TestLimiterRefund is the login rule: every attempt counts before the
// password check, a correct one gives its own attempt back, so an address
// that only ever succeeds is never limited, while failures interleaved with
// successes stay counted.
func TestLimiterRefund(t *testing.T) {
	clock := newFakeClock()
	l, _ := newTestLimiter(t, 10, 15*time.Minute, clock)
	ctx := context.Background()
	for i := range 50 {
		res, err := l.Attempt(ctx, "ip")
		if err != nil || !res.Allowed || res.Remaining != 9 {
			t.Fatalf("success %d: %+v, %v; want allowed with 9 remaining", i+1, res, err)
		}
		if err := l.Refund(ctx, "ip", res); err != nil {
			t.Fatalf("Refund: %v", err)
		}
		clock.Advance(time.Second)
	}

	// An attacker interleaving logins to their own account: 10 failures
	// and 10 successes, then the 11th failure is limited.
	l2, _ := newTestLimiter(t, 10, 15*time.Minute, clock)
	for i := range 10 {
		fail, _ := l2.Attempt(ctx, "ip")
		if !fail.Allowed || fail.Remaining != 9-i {
			t.Fatalf("failure %d: %+v, want allowed with %d remaining", i+1, fail, 9-i)
		}
		ok, _ := l2.Attempt(ctx, "ip")
		if i < 9 && !ok.Allowed {
			t.Fatalf("success after failure %d: %+v, want allowed", i+1, ok)
		}
		if err := l2.Refund(ctx, "ip", ok); err != nil {
			t.Fatal(err)
		}
	}
	if res, _ := l2.Attempt(ctx, "ip"); res.Allowed {
		t.Fatalf("after 10 failures and 10 refunded successes: %+v, want limited", res)
	}

	// Nothing to give back: an uncounted attempt, a zero Result.
	l3, s3 := newTestLimiter(t, 3, time.Minute, clock)
	res, _ := l3.Attempt(ctx, "k")
	full := Result{ResetAt: res.ResetAt, Limit: 3, StoreFull: true}
	if err := l3.Refund(ctx, "k", full); err != nil {
		t.Fatal(err)
	}
	if err := l3.Refund(ctx, "k", Result{}); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := s3.Increment(ctx, "k", time.Minute); n != 2 {
		t.Fatalf("count after refunds of uncounted attempts = %d, want 2", n)
	}
}

// refundStub is a Store with a Refunder that records its calls or fails.
type refundStub struct {
	stubStore
	refunds []time.Time
}

func (s *refundStub) Refund(_ context.Context, _ string, resetAt time.Time) error {
	s.refunds = append(s.refunds, resetAt)
	return s.err
}

func TestLimiterRefundStores(t *testing.T) {
	clock := newFakeClock()
	hint := clock.Now().Add(time.Minute)
	ctx := context.Background()

	// A store without Refunder: Refund does nothing and never fails.
	plain, err := New(Config{MaxAttempts: 3, Window: time.Minute, Store: &stubStore{count: 1, resetAt: hint}})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Refund(ctx, "k", Result{Allowed: true, ResetAt: hint}); err != nil {
		t.Fatalf("Refund over a store without Refunder: %v", err)
	}

	rs := &refundStub{stubStore: stubStore{count: 1, resetAt: hint}}
	l, err := New(Config{MaxAttempts: 3, Window: time.Minute, Store: rs})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := l.Attempt(ctx, "k")
	if err := l.Refund(ctx, "k", res); err != nil {
		t.Fatal(err)
	}
	if len(rs.refunds) != 1 || !rs.refunds[0].Equal(hint) {
		t.Fatalf("store refunds = %v, want one for %v", rs.refunds, hint)
	}
	errDown := errors.New("connection refused")
	rs.err = errDown
	err = l.Refund(ctx, "k", res)
	if !errors.Is(err, errDown) || err.Error() != "ratelimit: refund: connection refused" {
		t.Fatalf("Refund error = %v, want wrapped %v", err, errDown)
	}
}

// TestMemoryStoreRefundConcurrent: racing increments and refunds on one
// key leave exactly the count they add up to.
func TestMemoryStoreRefundConcurrent(t *testing.T) {
	clock := newFakeClock()
	s := newTestStore(t, 10, clock)
	ctx := context.Background()
	const start, n = 101, 100 // start > n: the count never reaches zero
	end := clock.Now().Add(time.Minute)
	for range start {
		if _, _, err := s.Increment(ctx, "hot", time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	race(2*n, func(i int) { // n increments, n refunds
		if i%2 == 0 {
			if _, _, err := s.Increment(ctx, "hot", time.Minute); err != nil {
				t.Error(err)
			}
		} else if err := s.Refund(ctx, "hot", end); err != nil {
			t.Error(err)
		}
	})
	increment(t, s, "hot", time.Minute, start+1, end)
}

func TestAttemptAllowWhenFull(t *testing.T) {
	clock := newFakeClock()
	s := newTestStore(t, 2, clock)
	ctx := context.Background()
	t0 := clock.Now()
	strict, err := New(Config{MaxAttempts: 2, Window: time.Minute, Store: s, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	open, err := New(Config{MaxAttempts: 2, Window: time.Minute, Store: s, Now: clock.Now, AllowWhenFull: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		if res, _ := open.Attempt(ctx, k); !res.Allowed || res.StoreFull {
			t.Fatalf("filling %s: %+v", k, res)
		}
	}
	want := Result{ResetAt: t0.Add(time.Minute), Limit: 2, StoreFull: true}
	if res, err := strict.Attempt(ctx, "new"); err != nil || !resultEqual(res, want) {
		t.Fatalf("default policy at capacity = %+v, %v; want %+v", res, err, want)
	}
	want.Allowed = true
	for range 5 { // never counted, so never limited
		if res, err := open.Attempt(ctx, "new"); err != nil || !resultEqual(res, want) {
			t.Fatalf("AllowWhenFull at capacity = %+v, %v; want %+v", res, err, want)
		}
	}
	if n := s.Len(); n != 2 {
		t.Fatalf("Len = %d, want 2: an attempt allowed when full is not stored", n)
	}
	// Keys the store holds keep their limit under either policy.
	open.Attempt(ctx, "a")
	if res, _ := open.Attempt(ctx, "a"); res.Allowed || res.StoreFull {
		t.Fatalf("third attempt on a held key = %+v, want limited, not full", res)
	}
}

// TestMemoryStoreRefundToZeroConcurrent races refunds that take a hot key's
// count to zero, and so remove its entry, with lock-free increments of the
// same key: goroutines that each count an attempt and give it back, and
// others that only count. Every refund follows its own increment, so each
// one finds the count above zero and must succeed; the key ends at exactly
// the attempts that were not given back. A capacity of one key makes a leak
// in the store's accounting show: a re-insert after a removal that did not
// give back its room gets ErrStoreFull.
func TestMemoryStoreRefundToZeroConcurrent(t *testing.T) {
	clock := newFakeClock()
	s := newTestStore(t, 1, clock)
	ctx := context.Background()
	end := clock.Now().Add(time.Minute)
	const pairs, counters, rounds = 4, 2, 2000
	// pair counts an attempt on s and gives it back, rounds times.
	pair := func(s *MemoryStore) {
		for range rounds {
			_, resetAt, err := s.Increment(ctx, "hot", time.Minute)
			if err != nil {
				t.Error(err)
				return
			}
			if !resetAt.Equal(end) {
				t.Errorf("resetAt = %v, want %v", resetAt, end)
				return
			}
			if err := s.Refund(ctx, "hot", resetAt); err != nil {
				t.Error(err)
				return
			}
		}
	}
	race(pairs+counters, func(i int) {
		if i < pairs {
			pair(s)
			return
		}
		for range rounds {
			if _, _, err := s.Increment(ctx, "hot", time.Minute); err != nil {
				t.Error(err)
				return
			}
		}
	})
	if n := s.Len(); n != 1 {
		t.Fatalf("Len = %d, want 1", n)
	}
	increment(t, s, "hot", time.Minute, counters*rounds+1, end)

	// Only pairs: the key ends at zero, removed, its room given back.
	s2 := newTestStore(t, 1, clock)
	race(pairs, func(int) { pair(s2) })
	if n := s2.Len(); n != 0 {
		t.Fatalf("Len after every attempt was given back = %d, want 0", n)
	}
	increment(t, s2, "other", time.Minute, 1, end)
}

// TestTableRefund: refund takes one off, freezes a count of one for the
// caller to remove, leaves zero alone, and counts a count that readers'
// adds took past maxCount as maxCount, as bump does.
func TestTableRefund(t *testing.T) {
	tab := newTable(minTableSize)
	for _, tc := range []struct {
		count, want int64
		last        bool
	}{
		{5, 4, false},
		{2, 1, false},
		{1, 1 | countFrozen, true},
		{0, 0, false},
		{maxCount, maxCount - 1, false},
		{maxCount + 3, maxCount - 1, false},
	} {
		tab.counts[0].Store(tc.count)
		if last := tab.refund(0); last != tc.last || tab.counts[0].Load() != tc.want {
			t.Errorf("refund of %d = %v, count %d; want %v, %d", tc.count, last, tab.counts[0].Load(), tc.last, tc.want)
		}
	}
}

// TestMemoryStoreRefundLastRacesIncrement aims one lock-free increment at a
// key whose count a refund is taking from one to zero, over and over: one
// goroutine counts an attempt on the key and gives it back in a loop while
// another counts one attempt of its own. The key must end at exactly that
// one attempt, wherever the increment lands: before the refund's
// compare-and-swap (the refund then takes the count from two to one), after
// the freeze (the increment then counts again under the mutex, after the
// removal), or between two refunds.
func TestMemoryStoreRefundLastRacesIncrement(t *testing.T) {
	clock := newFakeClock()
	const trials = 2000
	s := newTestStore(t, trials, clock)
	ctx := context.Background()
	end := clock.Now().Add(time.Minute)
	for i := range trials {
		key := fmt.Sprint("k", i)
		var stop atomic.Bool
		var loops atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			for !stop.Load() {
				_, resetAt, err := s.Increment(ctx, key, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if err := s.Refund(ctx, key, resetAt); err != nil {
					t.Error(err)
					return
				}
				loops.Add(1)
			}
		}()
		for loops.Load() < int64(i%8) {
			runtime.Gosched()
		}
		_, _, err := s.Increment(ctx, key, time.Minute)
		stop.Store(true)
		<-done
		if err != nil {
			t.Fatal(err)
		}
		increment(t, s, key, time.Minute, 2, end)
	}
}
