package ratelimit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/ratelimit"
)

func ExampleLimiter_Attempt() {
	// A fixed clock makes the output deterministic; real code leaves Now nil.
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }

	store := ratelimit.NewMemoryStore(ratelimit.MemoryConfig{Now: clock})
	defer store.Close()
	limiter, err := ratelimit.New(ratelimit.Config{
		MaxAttempts: 3,
		Window:      15 * time.Minute,
		Store:       store,
		Now:         clock,
	})
	if err != nil {
		panic(err)
	}

	ctx := context.Background()
	for i := 1; i <= 4; i++ {
		res, err := limiter.Attempt(ctx, "login:email:ada@example.com")
		if err != nil {
			panic(err) // the store failed; an HTTP handler would answer 503
		}
		fmt.Printf("attempt %d: allowed=%v remaining=%d\n", i, res.Allowed, res.Remaining)
		if !res.Allowed {
			fmt.Println("reset at", res.ResetAt.Format(time.RFC3339), "retry after", res.RetryAfter(now))
		}
		now = now.Add(time.Minute)
	}

	// A successful login clears the key.
	if err := limiter.Reset(ctx, "login:email:ada@example.com"); err != nil {
		panic(err)
	}
	res, _ := limiter.Attempt(ctx, "login:email:ada@example.com")
	fmt.Printf("after reset: allowed=%v remaining=%d\n", res.Allowed, res.Remaining)
	// Output:
	// attempt 1: allowed=true remaining=2
	// attempt 2: allowed=true remaining=1
	// attempt 3: allowed=true remaining=0
	// attempt 4: allowed=false remaining=0
	// reset at 2025-03-01T12:15:00Z retry after 12m0s
	// after reset: allowed=true remaining=2
}

func ExampleResult_RetryAfter() {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, until := range []time.Duration{1200 * time.Millisecond, 2 * time.Second, -time.Second} {
		res := ratelimit.Result{ResetAt: now.Add(until)}
		fmt.Printf("%v -> Retry-After: %d\n", until, res.RetryAfter(now)/time.Second)
	}
	// Output:
	// 1.2s -> Retry-After: 2
	// 2s -> Retry-After: 2
	// -1s -> Retry-After: 0
}

func ExampleNewMemoryStore() {
	// One store per limiter: a store shared by several limiters that an
	// attacker fills locks out new keys for all of them.
	store := ratelimit.NewMemoryStore(ratelimit.MemoryConfig{
		Capacity:        50_000,
		CleanupInterval: 30 * time.Second,
	})
	defer store.Close()

	limiter, err := ratelimit.New(ratelimit.Config{MaxAttempts: 10, Window: 15 * time.Minute, Store: store})
	if err != nil {
		panic(err)
	}
	res, err := limiter.Attempt(context.Background(), "login:ip:192.0.2.1")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Allowed, res.Remaining, res.Limit, store.Len())
	// Output: true 9 10 1
}
