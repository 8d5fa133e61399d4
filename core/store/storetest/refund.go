package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/ratelimit"
)

// RunLimitRefunder runs the conformance suite of ratelimit.Refunder, the
// optional interface of a rate-limit store that gives back one counted
// attempt. newStore must return stores that implement it; the suite fails
// at once otherwise. It is separate from [RunLimitStore], so a store without
// Refunder passes that suite as before.
//
// It proves that a refund takes exactly one off the count of the window it
// names and never moves that window's end; that a missing key, an ended
// window, a newer window and another window's end are left alone; that a
// refund to zero leaves the next increment at 1; that long and unusual keys
// are refunded under the same mapping as Increment uses; and that racing
// increments and refunds leave exactly the count they add up to.
func RunLimitRefunder(t *testing.T, newStore LimitStoreFactory, opts LimitOptions) {
	t.Helper()
	runLimitCases(t, newStore, opts, "ratelimit.Refunder", []limitCase[refundStore]{
		{"RefundGivesBackOne", testRefundOne},
		{"RefundLeavesOtherWindowsAlone", testRefundOtherWindows},
		{"RefundMissingKey", testRefundMissing},
		{"RefundAfterWindowEnded", testRefundEnded},
		{"RefundToZero", testRefundToZero},
		{"RefundUnusualKeys", testRefundUnusualKeys},
		{"ConcurrentRefundsAndIncrements", testRefundConcurrent},
		{"LimiterRefund", testLimiterRefund},
	})
}

// refundStore is a rate-limit store under test with its Refunder side.
type refundStore interface {
	ratelimit.Store
	ratelimit.Refunder
}

func refund(t *testing.T, s ratelimit.Refunder, key string, resetAt time.Time) {
	t.Helper()
	if err := s.Refund(t.Context(), key, resetAt); err != nil {
		t.Fatalf("Refund(%q, %v): %v", key, resetAt, err)
	}
}

func testRefundOne(t *testing.T, s refundStore, e *limitEnv) {
	var first time.Time
	for i := range 3 {
		_, reset := incr(t, s, "one", e.window)
		if i == 0 {
			first = reset
		}
	}
	refund(t, s, "one", first)
	n, reset := incr(t, s, "one", e.window)
	if n != 3 {
		t.Fatalf("count after 3 increments, 1 refund and 1 increment = %d, want 3", n)
	}
	e.checkReset(t, "after a refund", reset, first)
	refund(t, s, "one", reset)
	refund(t, s, "one", reset)
	if n, _ := incr(t, s, "one", e.window); n != 2 {
		t.Fatalf("count after two more refunds and 1 increment = %d, want 2", n)
	}
}

func testRefundOtherWindows(t *testing.T, s refundStore, e *limitEnv) {
	var reset time.Time
	for range 3 {
		_, reset = incr(t, s, "other", e.window)
	}
	// Ends that no window of this key has: one long ago, one far ahead
	// (a newer window's), one a window later, and none.
	for _, at := range []time.Time{reset.Add(-time.Hour), reset.Add(time.Hour), reset.Add(e.window), {}} {
		refund(t, s, "other", at)
	}
	if n, _ := incr(t, s, "other", e.window); n != 4 {
		t.Fatalf("count after refunds for other windows = %d, want 4 (none may apply)", n)
	}
}

func testRefundMissing(t *testing.T, s refundStore, e *limitEnv) {
	refund(t, s, "missing", e.now().Add(e.window))
	e.mustStartWindow(t, s, "missing", "first Increment after a refund of a missing key")
}

func testRefundEnded(t *testing.T, s refundStore, e *limitEnv) {
	incr(t, s, "ended", e.window)
	_, old := incr(t, s, "ended", e.window)
	e.advance(e.window + e.window/5)
	refund(t, s, "ended", old) // the window is over
	e.mustStartWindow(t, s, "ended", "first Increment of a new window")
	incr(t, s, "ended", e.window)
	refund(t, s, "ended", old) // the old window's refund must not touch the new one
	if n, _ := incr(t, s, "ended", e.window); n != 3 {
		t.Fatalf("count in the new window after a refund for the old one = %d, want 3", n)
	}
}

func testRefundToZero(t *testing.T, s refundStore, e *limitEnv) {
	_, reset := incr(t, s, "zero", e.window)
	refund(t, s, "zero", reset)
	refund(t, s, "zero", reset) // below zero: nothing
	n, again := incr(t, s, "zero", e.window)
	if n != 1 {
		t.Fatalf("Increment after refunding to zero = %d, want 1", n)
	}
	// The store may keep the key at zero in its window or drop it, so the
	// window may be the old one or a new one.
	if again.Before(reset.Add(-e.opts.Tolerance-time.Millisecond)) ||
		again.After(e.now().Add(e.window+e.opts.Tolerance+time.Millisecond)) {
		t.Fatalf("resetAt after refunding to zero = %v, want between %v and now + window", again, reset)
	}
	if n, _ := incr(t, s, "zero", e.window); n != 2 {
		t.Fatalf("second Increment after refunding to zero = %d, want 2", n)
	}
}

func testRefundUnusualKeys(t *testing.T, s refundStore, e *limitEnv) {
	for _, k := range []string{"quote'\"back\\slash%_", strings.Repeat("k", 300), "sha256:abc", ""} {
		incr(t, s, k, e.window)
		_, reset := incr(t, s, k, e.window)
		refund(t, s, k, reset)
		if n, _ := incr(t, s, k, e.window); n != 2 {
			t.Fatalf("key %q: count after 2 increments, 1 refund, 1 increment = %d, want 2", k, n)
		}
	}
}

// testRefundConcurrent: racing increments and refunds lose nothing and
// count nothing twice. The count starts above the number of refunds, so it
// never reaches zero.
func testRefundConcurrent(t *testing.T, s refundStore, e *limitEnv) {
	const start, n = 41, 40
	window := 20 * e.window // no waiting in this test: the window must outlast it
	var reset time.Time
	for range start {
		_, reset = incr(t, s, "hot", window)
	}
	raceN(t, 2*n, func(i int) error { // even: an increment, odd: a refund
		if i%2 == 0 {
			if _, _, err := s.Increment(t.Context(), "hot", window); err != nil {
				return fmt.Errorf("concurrent Increment: %w", err)
			}
			return nil
		}
		if err := s.Refund(t.Context(), "hot", reset); err != nil {
			return fmt.Errorf("concurrent Refund: %w", err)
		}
		return nil
	})
	if got, _ := incr(t, s, "hot", window); got != start+1 {
		t.Fatalf("count after %d increments, %d concurrent increments and %d concurrent refunds, then 1 = %d, want %d",
			start, n, n, got, start+1)
	}
}

// testLimiterRefund drives the store as the login flow does: every attempt
// is counted first and refunded when it was legitimate.
func testLimiterRefund(t *testing.T, s refundStore, e *limitEnv) {
	l, err := ratelimit.New(ratelimit.Config{MaxAttempts: 3, Window: 10 * e.window, Store: s, Now: e.now})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		res, err := l.Attempt(t.Context(), "login:ip:1")
		if err != nil || !res.Allowed || res.Remaining != 2 {
			t.Fatalf("refunded attempt %d = %s, %v; want allowed with 2 remaining", i+1, fmtResult(res), err)
		}
		if err := l.Refund(t.Context(), "login:ip:1", res); err != nil {
			t.Fatalf("Refund: %v", err)
		}
	}
	for i := range 4 {
		res, _ := l.Attempt(t.Context(), "login:ip:1")
		if res.Allowed != (i < 3) {
			t.Fatalf("unrefunded attempt %d = %s", i+1, fmtResult(res))
		}
	}
}
