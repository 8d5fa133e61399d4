package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/ratelimit"
)

// LimitStoreFactory returns a fresh, empty rate-limit store for one subtest.
// Stores that take their time from a Now function use clock.Now, so the
// suite can move time without sleeping; stores that keep time themselves
// (Redis) ignore clock and set LimitOptions.RealTime.
type LimitStoreFactory func(t *testing.T, clock *Clock) ratelimit.Store

// LimitOptions describes the store under test.
type LimitOptions struct {
	// RealTime marks a store that keeps its own time (a server's clock).
	// The suite then uses short windows and waits them out for real, and
	// compares reset times within Tolerance.
	RealTime bool

	// Tolerance is how far a store's reset time may be from the suite's
	// expectation: the clock skew between the test and the server plus the
	// store's precision. Default: 0 with a clock (reset times must be exact
	// to the millisecond), 250 milliseconds in real time.
	Tolerance time.Duration
}

// RunLimitStore runs the ratelimit.Store conformance suite.
func RunLimitStore(t *testing.T, newStore LimitStoreFactory, opts LimitOptions) {
	t.Helper()
	runLimitCases(t, newStore, opts, "ratelimit.Store", []limitCase[ratelimit.Store]{
		{"FirstIncrementStartsWindow", testFirstIncrement},
		{"WindowDoesNotSlide", testNoSlide},
		{"WindowRestartsAfterExpiry", testRestart},
		{"Reset", testLimitReset},
		{"KeysAreIndependent", testIndependentKeys},
		{"UnusualKeys", testUnusualKeys},
		{"ConcurrentIncrements", testConcurrentIncrements},
		{"LimiterOverStore", testLimiterOverStore},
	})
}

// limitCase is one named subtest of a rate-limit suite whose tests take
// the store as an S (a ratelimit.Store, or the Refunder it also is).
type limitCase[S any] struct {
	name string
	fn   func(t *testing.T, s S, e *limitEnv)
}

// runLimitCases runs each test as a subtest over a fresh store from
// newStore, seen as an S: the test fails when the store is not one, saying
// it lacks side (the interface S adds to ratelimit.Store). Windows are a
// minute on a clock, or short and waited out in real time, where the
// subtests run side by side.
func runLimitCases[S ratelimit.Store](t *testing.T, newStore LimitStoreFactory, opts LimitOptions,
	side string, tests []limitCase[S]) {
	t.Helper()
	if opts.Tolerance == 0 && opts.RealTime {
		opts.Tolerance = 250 * time.Millisecond
	}
	window := time.Minute
	if opts.RealTime {
		window = 700 * time.Millisecond
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if opts.RealTime {
				t.Parallel() // waits dominate; run them side by side
			}
			clock := NewClock(base)
			e := &limitEnv{opts: opts, clock: clock, window: window}
			st := newStore(t, clock)
			s, ok := st.(S)
			if !ok {
				t.Fatalf("%T does not implement %s", st, side)
			}
			tt.fn(t, s, e)
		})
	}
}

type limitEnv struct {
	opts   LimitOptions
	clock  *Clock
	window time.Duration
}

func (e *limitEnv) now() time.Time {
	if e.opts.RealTime {
		return time.Now()
	}
	return e.clock.Now()
}

// advance moves time by d: the clock, or the wall clock by waiting.
func (e *limitEnv) advance(d time.Duration) {
	if e.opts.RealTime {
		time.Sleep(d)
		return
	}
	e.clock.Advance(d)
}

func (e *limitEnv) checkReset(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	diff := got.Sub(want)
	if diff < 0 {
		diff = -diff
	}
	if e.opts.RealTime {
		if diff > e.opts.Tolerance {
			t.Fatalf("%s: resetAt %v, want %v ± %v", what, got, want, e.opts.Tolerance)
		}
		return
	}
	if diff >= time.Millisecond+e.opts.Tolerance {
		t.Fatalf("%s: resetAt %v, want %v (to the millisecond)", what, got, want)
	}
}

// mustStartWindow increments key and checks that this starts a window: a
// count of 1 and a reset one window from now. what names the increment.
func (e *limitEnv) mustStartWindow(t *testing.T, s ratelimit.Store, key, what string) {
	t.Helper()
	start := e.now()
	n, reset := incr(t, s, key, e.window)
	if n != 1 {
		t.Fatalf("%s: count %d, want 1", what, n)
	}
	e.checkStarted(t, what, reset, start, e.window)
}

// checkStarted checks that reset is one window from the increment made
// since start: on a clock, start plus window to the millisecond; in real
// time, between start plus window and the time it returned plus window,
// each ± Tolerance, so the call's own duration on a loaded machine (a
// cluster's redirect, a slow scheduler) is not counted against the
// store.
func (e *limitEnv) checkStarted(t *testing.T, what string, reset, start time.Time, window time.Duration) {
	t.Helper()
	if !e.opts.RealTime {
		e.checkReset(t, what, reset, start.Add(window))
		return
	}
	end := time.Now()
	if reset.Before(start.Add(window-e.opts.Tolerance)) || reset.After(end.Add(window+e.opts.Tolerance)) {
		t.Fatalf("%s: resetAt %v, want between %v and %v ± %v (the increment's start and end plus the window)",
			what, reset, start.Add(window), end.Add(window), e.opts.Tolerance)
	}
}

func incr(t *testing.T, s ratelimit.Store, key string, window time.Duration) (int64, time.Time) {
	t.Helper()
	n, reset, err := s.Increment(t.Context(), key, window)
	if err != nil {
		t.Fatalf("Increment(%q): %v", key, err)
	}
	return n, reset
}

func testFirstIncrement(t *testing.T, s ratelimit.Store, e *limitEnv) {
	e.mustStartWindow(t, s, "first", "first Increment")
}

func testNoSlide(t *testing.T, s ratelimit.Store, e *limitEnv) {
	// In real time a loaded machine can stretch the five increments past
	// the window, which proves nothing: such an attempt starts over on a
	// key of its own, up to three times.
	for attempt := 1; ; attempt++ {
		if noSlide(t, s, e, fmt.Sprintf("slide%d", attempt)) || attempt == 3 {
			return
		}
		t.Logf("attempt %d outlasted the %v window on this loaded machine: again", attempt, e.window)
	}
}

// noSlide is one attempt of testNoSlide on key; false when, in real time,
// the window may have ended before the last increment.
func noSlide(t *testing.T, s ratelimit.Store, e *limitEnv, key string) bool {
	t.Helper()
	started := time.Now()
	_, first := incr(t, s, key, e.window)
	for want := int64(2); want <= 5; want++ {
		e.advance(e.window / 10)
		n, reset := incr(t, s, key, e.window)
		if e.opts.RealTime && time.Since(started) > e.window-e.opts.Tolerance {
			return false
		}
		if n != want {
			t.Fatalf("Increment %d: count %d", want, n)
		}
		if !reset.Equal(first) && (!e.opts.RealTime || absDur(reset.Sub(first)) > e.opts.Tolerance) {
			t.Fatalf("Increment %d moved resetAt from %v to %v: the window must not slide", want, first, reset)
		}
	}
	return true
}

func testRestart(t *testing.T, s ratelimit.Store, e *limitEnv) {
	for range 3 {
		incr(t, s, "restart", e.window)
	}
	e.advance(e.window + e.window/5)
	e.mustStartWindow(t, s, "restart", "first Increment after the window")
}

func testLimitReset(t *testing.T, s ratelimit.Store, e *limitEnv) {
	for range 4 {
		incr(t, s, "reset", e.window)
	}
	if err := s.Reset(t.Context(), "reset"); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	if n, _ := incr(t, s, "reset", e.window); n != 1 {
		t.Fatalf("Increment after Reset: count %d, want 1", n)
	}
	if err := s.Reset(t.Context(), "never-seen"); err != nil {
		t.Fatalf("Reset of a missing key: %v", err)
	}
}

func testIndependentKeys(t *testing.T, s ratelimit.Store, e *limitEnv) {
	incr(t, s, "a", e.window)
	incr(t, s, "a", e.window)
	if n, _ := incr(t, s, "b", e.window); n != 1 {
		t.Fatalf("key b counted with key a: %d", n)
	}
	if err := s.Reset(t.Context(), "b"); err != nil {
		t.Fatal(err)
	}
	if n, _ := incr(t, s, "a", e.window); n != 3 {
		t.Fatalf("Reset(b) touched a: count %d, want 3", n)
	}
	// A key with its own, longer window.
	start := e.now()
	_, reset := incr(t, s, "long", 2*e.window)
	e.checkStarted(t, "longer window", reset, start, 2*e.window)
}

func testUnusualKeys(t *testing.T, s ratelimit.Store, e *limitEnv) {
	keys := []string{
		"login:email:jos\u00e9@example.com",
		"login:ip:2001:db8::/64",
		"with space",
		"quote'\"back\\slash%_",
		strings.Repeat("k", 200),
		"",
	}
	for i, k := range keys {
		for want := int64(1); want <= int64(i+1); want++ {
			if n, _ := incr(t, s, k, e.window); n != want {
				t.Fatalf("key %q: count %d, want %d", k, n, want)
			}
		}
	}
}

// testConcurrentIncrements: every one of the racing increments sees a
// distinct count, so none was lost or double-counted.
func testConcurrentIncrements(t *testing.T, s ratelimit.Store, e *limitEnv) {
	const n = 100
	counts := make([]int64, n)
	raceN(t, n, func(i int) error {
		c, _, err := s.Increment(t.Context(), "hot", e.window)
		counts[i] = c
		if err != nil {
			return fmt.Errorf("concurrent Increment: %w", err)
		}
		return nil
	})
	slices.Sort(counts)
	for i, c := range counts {
		if c != int64(i+1) {
			t.Fatalf("concurrent increments returned counts %v; want each of 1..%d exactly once", counts, n)
		}
	}
}

// testLimiterOverStore drives the store through the limiter as the flows do.
func testLimiterOverStore(t *testing.T, s ratelimit.Store, e *limitEnv) {
	l, err := ratelimit.New(ratelimit.Config{MaxAttempts: 3, Window: e.window, Store: s, Now: e.now})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		r, err := l.Attempt(t.Context(), "user:1")
		if err != nil {
			t.Fatalf("Attempt %d: %v", i, err)
		}
		wantAllowed, wantRemaining := i <= 3, max(3-i, 0)
		if r.Allowed != wantAllowed || r.Remaining != wantRemaining {
			t.Fatalf("Attempt %d = %s, want allowed=%v remaining=%d", i, fmtResult(r), wantAllowed, wantRemaining)
		}
	}
	if err := l.Reset(t.Context(), "user:1"); err != nil {
		t.Fatal(err)
	}
	if r, _ := l.Attempt(t.Context(), "user:1"); !r.Allowed || r.Remaining != 2 {
		t.Fatalf("Attempt after Reset = %s", fmtResult(r))
	}
}

func fmtResult(r ratelimit.Result) string {
	return fmt.Sprintf("{allowed=%v remaining=%d resetAt=%v}", r.Allowed, r.Remaining, r.ResetAt)
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
