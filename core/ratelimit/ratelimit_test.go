package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/clock"
)

// fakeClock is the settable clock of the test suites (core/clock), for
// Config.Now and MemoryConfig.Now.
type fakeClock = clock.Clock

func newFakeClock() *fakeClock { return clock.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)) }

// newTestLimiter returns a limiter over its own memory store without
// background cleanup, both on clock.
func newTestLimiter(t *testing.T, limit int, window time.Duration, clock *fakeClock) (*Limiter, *MemoryStore) {
	t.Helper()
	store := NewMemoryStore(MemoryConfig{CleanupInterval: -1, Now: clock.Now})
	l, err := New(Config{MaxAttempts: limit, Window: window, Store: store, Now: clock.Now})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return l, store
}

// race runs f(0) … f(n-1), each in a goroutine of its own, releases them
// all at once and returns when every one has.
func race(n int, f func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}

func TestNewValidatesConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		msg  string
	}{
		{"zero config", Config{}, "ratelimit: invalid config: MaxAttempts must be > 0, got 0"},
		{"negative max", Config{MaxAttempts: -1, Window: time.Minute}, "ratelimit: invalid config: MaxAttempts must be > 0, got -1"},
		{"zero window", Config{MaxAttempts: 5}, "ratelimit: invalid config: Window must be > 0, got 0s"},
		{"negative window", Config{MaxAttempts: 5, Window: -time.Second}, "ratelimit: invalid config: Window must be > 0, got -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := New(tt.cfg)
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("New error = %v, want ErrInvalidConfig", err)
			}
			if err.Error() != tt.msg {
				t.Errorf("New error = %q, want %q", err, tt.msg)
			}
			if l != nil {
				t.Errorf("New returned a limiter with an error")
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	clock := newFakeClock()
	cfg := Config{MaxAttempts: 2, Window: time.Minute, Now: clock.Now}
	l, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if cfg.Store != nil {
		t.Errorf("New modified the caller's config: Store = %v", cfg.Store)
	}
	ms, ok := l.store.(*MemoryStore)
	if !ok {
		t.Fatalf("default store is %T, want *MemoryStore", l.store)
	}
	t.Cleanup(func() { ms.Close() })
	if ms.capacity != DefaultMemoryCapacity {
		t.Errorf("default store capacity = %d, want %d", ms.capacity, DefaultMemoryCapacity)
	}
	// The default store runs on the limiter's clock.
	res, err := l.Attempt(context.Background(), "k")
	if err != nil {
		t.Fatalf("Attempt: %v", err)
	}
	if want := clock.Now().Add(time.Minute); !res.ResetAt.Equal(want) {
		t.Errorf("ResetAt = %v, want %v", res.ResetAt, want)
	}

	l2, err := New(Config{MaxAttempts: 1, Window: time.Second})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { l2.store.(*MemoryStore).Close() })
	if l2.now == nil {
		t.Error("Now not defaulted")
	}
}

func TestAttemptWindow(t *testing.T) {
	const limit, window = 3, 15 * time.Minute
	clock := newFakeClock()
	l, _ := newTestLimiter(t, limit, window, clock)
	ctx := context.Background()
	start := clock.Now()
	wantReset := start.Add(window)

	for i := 1; i <= limit+2; i++ {
		res, err := l.Attempt(ctx, "login:ip:192.0.2.1")
		if err != nil {
			t.Fatalf("attempt %d: %v", i, err)
		}
		want := Result{Allowed: i <= limit, Remaining: max(limit-i, 0), ResetAt: wantReset, Limit: limit}
		if !resultEqual(res, want) {
			t.Errorf("attempt %d = %+v, want %+v", i, res, want)
		}
		clock.Advance(time.Minute) // later attempts do not slide the window
	}

	// Other keys count separately.
	res, err := l.Attempt(ctx, "login:ip:192.0.2.2")
	if err != nil || !res.Allowed || res.Remaining != limit-1 {
		t.Fatalf("other key = %+v, %v; want allowed with %d remaining", res, err, limit-1)
	}

	// Just before the window ends the key is still blocked; at its end it
	// starts afresh with a new window.
	clock.Advance(wantReset.Sub(clock.Now()) - time.Nanosecond)
	if res, _ := l.Attempt(ctx, "login:ip:192.0.2.1"); res.Allowed {
		t.Fatalf("attempt 1ns before ResetAt = %+v, want blocked", res)
	}
	clock.Advance(time.Nanosecond)
	res, err = l.Attempt(ctx, "login:ip:192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	want := Result{Allowed: true, Remaining: limit - 1, ResetAt: wantReset.Add(window), Limit: limit}
	if !resultEqual(res, want) {
		t.Errorf("attempt after window = %+v, want %+v", res, want)
	}
}

func TestReset(t *testing.T) {
	clock := newFakeClock()
	l, store := newTestLimiter(t, 1, time.Hour, clock)
	ctx := context.Background()

	for range 2 {
		if _, err := l.Attempt(ctx, "k"); err != nil {
			t.Fatal(err)
		}
	}
	if res, _ := l.Attempt(ctx, "k"); res.Allowed {
		t.Fatalf("before Reset: %+v, want blocked", res)
	}
	clock.Advance(time.Minute)
	if err := l.Reset(ctx, "k"); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	if n := store.Len(); n != 0 {
		t.Errorf("Len after Reset = %d, want 0", n)
	}
	res, err := l.Attempt(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	want := Result{Allowed: true, Remaining: 0, ResetAt: clock.Now().Add(time.Hour), Limit: 1}
	if !resultEqual(res, want) {
		t.Errorf("after Reset = %+v, want %+v (a new window)", res, want)
	}
	if err := l.Reset(ctx, "missing"); err != nil {
		t.Errorf("Reset of a missing key = %v, want nil", err)
	}
	if n := store.Len(); n != 1 {
		t.Errorf("Len = %d, want 1", n)
	}
}

// TestAttemptConcurrent hammers one key from 1,000 goroutines: exactly
// MaxAttempts are allowed, each with a distinct Remaining.
func TestAttemptConcurrent(t *testing.T) {
	const goroutines, limit = 1000, 100
	clock := newFakeClock()
	l, _ := newTestLimiter(t, limit, time.Minute, clock)
	wantReset := clock.Now().Add(time.Minute)

	results := make([]Result, goroutines)
	errs := make([]error, goroutines)
	race(goroutines, func(i int) {
		results[i], errs[i] = l.Attempt(context.Background(), "hot")
	})

	var remaining []int
	denied := 0
	for i, res := range results {
		if errs[i] != nil {
			t.Fatalf("goroutine %d: %v", i, errs[i])
		}
		if !res.ResetAt.Equal(wantReset) || res.Limit != limit {
			t.Errorf("goroutine %d: %+v, want ResetAt %v, Limit %d", i, res, wantReset, limit)
		}
		if res.Allowed {
			remaining = append(remaining, res.Remaining)
			continue
		}
		denied++
		if res.Remaining != 0 {
			t.Errorf("denied attempt has Remaining %d, want 0", res.Remaining)
		}
	}
	if len(remaining) != limit || denied != goroutines-limit {
		t.Fatalf("allowed %d, denied %d; want %d and %d", len(remaining), denied, limit, goroutines-limit)
	}
	// Counts 1..limit were each handed out once: Remaining limit-1..0.
	slices.Sort(remaining)
	for i, r := range remaining {
		if r != i {
			t.Fatalf("sorted Remaining of allowed attempts = %v, want 0..%d each once", remaining, limit-1)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		until time.Duration
		want  time.Duration
	}{
		{1200 * time.Millisecond, 2 * time.Second},
		{2 * time.Second, 2 * time.Second},
		{time.Nanosecond, time.Second},
		{2*time.Second + time.Nanosecond, 3 * time.Second},
		{15 * time.Minute, 15 * time.Minute},
		{0, 0},
		{-time.Second, 0},
		{-time.Hour, 0},
	}
	for _, tt := range tests {
		t.Run(tt.until.String(), func(t *testing.T) {
			r := Result{ResetAt: now.Add(tt.until)}
			if got := r.RetryAfter(now); got != tt.want {
				t.Errorf("RetryAfter = %v, want %v", got, tt.want)
			}
		})
	}
	// Far-away times saturate without overflowing into a negative value.
	far := Result{ResetAt: time.Unix(1<<40, 0)}
	if got := far.RetryAfter(now); got <= 0 || got%time.Second != 0 {
		t.Errorf("RetryAfter for a far ResetAt = %v, want a positive whole number of seconds", got)
	}
	if got := (Result{}).RetryAfter(now); got != 0 {
		t.Errorf("RetryAfter for a zero ResetAt = %v, want 0", got)
	}
}

// stubStore returns fixed answers.
type stubStore struct {
	count   int64
	resetAt time.Time
	err     error
}

func (s *stubStore) Increment(context.Context, string, time.Duration) (int64, time.Time, error) {
	return s.count, s.resetAt, s.err
}

func (s *stubStore) Reset(context.Context, string) error { return s.err }

func TestAttemptStoreAnswers(t *testing.T) {
	clock := newFakeClock()
	hint := clock.Now().Add(42 * time.Second)
	errDown := errors.New("connection refused")
	tests := []struct {
		name    string
		store   stubStore
		want    Result
		wantErr error // nil: Attempt must succeed
		errText string
	}{
		{
			name:  "store full with hint",
			store: stubStore{resetAt: hint, err: ErrStoreFull},
			want:  Result{ResetAt: hint, Limit: 5, StoreFull: true},
		},
		{
			name:  "wrapped store full without hint",
			store: stubStore{err: fmt.Errorf("redis: %w", ErrStoreFull)},
			want:  Result{ResetAt: clock.Now().Add(time.Minute), Limit: 5, StoreFull: true},
		},
		{
			name:    "store error",
			store:   stubStore{err: errDown},
			want:    Result{Limit: 5},
			wantErr: errDown,
			errText: "ratelimit: increment: connection refused",
		},
		{
			name:    "count zero",
			store:   stubStore{count: 0, resetAt: hint},
			want:    Result{Limit: 5},
			errText: "ratelimit: increment: store returned count 0",
		},
		{
			name:  "count at limit",
			store: stubStore{count: 5, resetAt: hint},
			want:  Result{Allowed: true, Remaining: 0, ResetAt: hint, Limit: 5},
		},
		{
			name:  "huge count",
			store: stubStore{count: 1 << 62, resetAt: hint},
			want:  Result{ResetAt: hint, Limit: 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := New(Config{MaxAttempts: 5, Window: time.Minute, Store: &tt.store, Now: clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			res, err := l.Attempt(context.Background(), "k")
			switch {
			case tt.errText == "" && err != nil:
				t.Fatalf("Attempt error = %v, want nil", err)
			case tt.errText != "" && (err == nil || err.Error() != tt.errText):
				t.Fatalf("Attempt error = %v, want %q", err, tt.errText)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("Attempt error = %v, does not wrap %v", err, tt.wantErr)
			}
			if !resultEqual(res, tt.want) {
				t.Errorf("Attempt = %+v, want %+v", res, tt.want)
			}
		})
	}
}

func TestResetStoreError(t *testing.T) {
	errDown := errors.New("connection refused")
	l, err := New(Config{MaxAttempts: 1, Window: time.Minute, Store: &stubStore{err: errDown}})
	if err != nil {
		t.Fatal(err)
	}
	err = l.Reset(context.Background(), "k")
	if !errors.Is(err, errDown) || err.Error() != "ratelimit: reset: connection refused" {
		t.Errorf("Reset error = %v, want wrapped %v", err, errDown)
	}
}

func resultEqual(a, b Result) bool {
	return a.Allowed == b.Allowed && a.Remaining == b.Remaining && a.Limit == b.Limit && a.ResetAt.Equal(b.ResetAt) &&
		a.StoreFull == b.StoreFull
}
