package storetest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/store/storetest"
)

// A Clock stands still until it is moved, so a test crosses a rate-limit
// window without sleeping. The suites hand one to every limit-store
// constructor.
func ExampleClock() {
	clock := storetest.NewClock(time.Date(2031, 3, 14, 15, 0, 0, 0, time.UTC))
	limiter, err := ratelimit.New(ratelimit.Config{
		MaxAttempts: 1,
		Window:      time.Minute,
		Store:       ratelimit.NewMemoryStore(ratelimit.MemoryConfig{Now: clock.Now, CleanupInterval: -1}),
		Now:         clock.Now,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	attempt := func() {
		res, err := limiter.Attempt(context.Background(), "login:ip:192.0.2.1")
		fmt.Println(clock.Now().Format(time.TimeOnly), res.Allowed, err)
	}
	attempt()
	attempt()
	clock.Advance(time.Minute) // the window has passed
	attempt()
	// Output:
	// 15:00:00 true <nil>
	// 15:00:00 false <nil>
	// 15:01:00 true <nil>
}
